"""``rlprep progress``: per-topic mastery from the mock interviews and lab scores (:mod:`rlprep.interview.progress`),
then, once there are any, the coding rounds of ``rlprep mock --coding`` (:mod:`rlprep.coding.progress`).

It lives above both packages because the coding rounds depend on the interview history, not the other way round."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Show per-topic mastery from your mock interviews, your lab scores from `rlprep grade` "
                          "and your coding rounds from `rlprep mock --coding` (history in $RLPREP_HOME, else the "
                          "user data dir). In a notebook: "
                          "from rlprep.interview import plot_progress; plot_progress().")


def run(args: argparse.Namespace) -> int:
    from rlprep.coding.progress import coding_lines
    from rlprep.interview import AnswerHistory, load_bank
    from rlprep.interview.progress import progress_text

    with AnswerHistory() as history:
        lines = [progress_text(history, load_bank()), *coding_lines(history.path), f"\n(history: {history.path})"]
    print("\n".join(lines))
    return 0

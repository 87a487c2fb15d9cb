"""`rlprep progress` lists the coding rounds of `rlprep mock --coding`: two rounds recorded through the round's own
functions (one solved, one failed with its day-2 retest due), then the progress table; an empty home shows none."""

from __future__ import annotations

import time

from rlprep.cli import main
from rlprep.coding.attempts import DAY, CodingLog
from rlprep.coding.bank import get_problem, load_problems
from rlprep.coding.round import CodingRound
from rlprep.coding.sources import reference_source


def _round(slug: str, source_of, seconds: float, wallclock: float, folder):
    """One round as `rlprep mock --coding` runs it (starter file, submit, finish), unsandboxed, on a fake clock."""
    clock = [0.0]
    with CodingLog() as log:
        rnd = CodingRound(get_problem(slug), None, log, folder, sandboxed=False, clock=lambda: clock[0],
                          wallclock=lambda: wallclock)
        rnd.write_starter()
        rnd.path.write_text(source_of(rnd.problem), encoding="utf-8")
        clock[0] = seconds
        report = rnd.submit()
        outcome, scheduled = rnd.finish()
    return report, outcome, scheduled


def _row(out: str, slug: str) -> str:
    (row,) = [line for line in out.splitlines() if line.strip().startswith(slug + " ")]
    return row


def test_progress_lists_solved_and_failed_coding_rounds(tmp_path, rlprep_home, capsys):
    assert main(["progress"]) == 0
    assert "Coding rounds" not in capsys.readouterr().out  # no coding history: the table is as before

    now = time.time()
    solved, outcome, scheduled = _round("softmax", reference_source, 40.0, now - 60, tmp_path / "coding")
    assert (outcome, scheduled, solved.full) == ("solved", [], True)

    def buggy(problem):
        return problem.module("bugs").BUGS[0].apply(reference_source(problem))

    failed, outcome, scheduled = _round("logsumexp", buggy, 125.0, now - 3 * DAY, tmp_path / "coding")
    assert outcome == "failed" and 0 < failed.passed < failed.total
    due = dict(scheduled)
    assert due["day2"] < now < due["day7"]  # day 2 has passed: that retest is due now

    capsys.readouterr()
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    assert f"Coding rounds (rlprep mock --coding): 1 of {len(load_problems())} problems solved" in out, out
    row = _row(out, "softmax").split()
    assert row[:5] == ["softmax", "solved", f"{solved.passed}/{solved.total}", "0:40", "/"], row
    assert row[5:] == ["10:00", "1", "-"], row
    row = _row(out, "logsumexp")
    assert row.split()[:6] == ["logsumexp", "failed", f"{failed.passed}/{failed.total}", "2:05", "/", "10:00"], row
    day = {name: time.strftime("%Y-%m-%d", time.localtime(at)) for name, at in scheduled}
    assert row.rstrip().endswith(f"day2 due now ({day['day2']}), day7 on {day['day7']}"), row

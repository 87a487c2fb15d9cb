"""Progress from the answer history: per-topic mastery from the mock interviews and lab scores from ``rlprep grade``
(``rlprep progress`` prints them, then the coding rounds: :mod:`rlprep.progress_cli`).

Mastery of a topic is the mean, over the bank's questions with that topic, of each question's latest mastery
(the mean of key-point coverage and self-rating; a question never answered counts 0).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rlprep.interview.bank import TOPICS, Question, load_bank
from rlprep.interview.history import AnswerHistory


@dataclass(frozen=True)
class TopicMastery:
    topic: str
    n_questions: int
    n_seen: int
    mastery: float
    n_due: int
    """Seen questions whose Leitner interval has passed (due for review now)."""


def topic_mastery(history: AnswerHistory, bank: dict[str, Question], now: float | None = None) -> list[TopicMastery]:
    """One row per topic that has questions in the bank, in the bank's topic order."""
    now = time.time() if now is None else now
    states = history.review_states()
    rows = []
    for topic in TOPICS:
        qids = [q.id for q in bank.values() if topic in q.topics]
        if not qids:
            continue
        seen = [states[q] for q in qids if q in states]
        rows.append(TopicMastery(topic, len(qids), len(seen), sum(s.last_mastery for s in seen) / len(qids),
                                 sum(1 for s in seen if s.due_at <= now)))
    return rows


def _bar(fraction: float, width: int = 10) -> str:
    filled = int(round(max(0.0, min(1.0, fraction)) * width))
    return "█" * filled + "░" * (width - filled)


def progress_text(history: AnswerHistory, bank: dict[str, Question], now: float | None = None) -> str:
    """The terminal table: per-topic mastery, then lab scores (``rlprep progress`` adds the coding rounds)."""
    lines = ["Mock-interview mastery per topic (coverage and self-rating of each question's latest answer):",
             f"  {'topic':<20} {'seen':>7}  {'mastery':>7}  {'':10}  {'due':>3}"]
    rows = topic_mastery(history, bank, now)
    for r in rows:
        lines.append(f"  {r.topic:<20} {f'{r.n_seen}/{r.n_questions}':>7}  {r.mastery:>7.0%}  {_bar(r.mastery)}  {r.n_due:>3}")
    if not rows:
        lines.append("  (the question bank is empty)")
    if not history.review_states():
        lines.append("  No answers yet: start with `rlprep mock --preset quick`.")
    lines += ["", "Lab scores (from rlprep grade), one row per graded file:"]
    grades = history.lab_grades_by_file()
    if not grades:
        lines.append("  No graded labs yet: `rlprep grade` records each run here.")
    else:
        lines.append(f"  {'lab':<24} {'latest':>9} {'best':>9} {'runs':>5}  {'last graded':<16}  file")
        for (lab, _), g in sorted(grades.items(), key=lambda item: (item[0][0], item[1]["graded_at"])):
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(g["graded_at"]))
            lines.append(f"  {lab:<24} {g['latest']:>4g}/{g['max_score']:<4g} {g['best']:>4g}/{g['max_score']:<4g}"
                         f" {g['runs']:>5}  {when:<16}  {graded_file(lab, g['notebook'])}")
    return "\n".join(lines)


def graded_file(lab: str, notebook: str | None, root: Path | None = None) -> str:
    """Where a grade came from, as ``rlprep progress`` shows it: the course's own lab file relative to the checkout
    (``root``, default :func:`rlprep.paths.repo_root`), any other file with its path and what it is (a copy in the
    course, or a copy outside the course)."""
    from rlprep.paths import repo_root

    if notebook is None:
        return "(file not recorded: graded before rlprep recorded it)"
    root = root if root is not None else repo_root()
    path = Path(notebook)
    if root is None:
        return str(path)
    try:
        inside = path.relative_to(Path(root).resolve())
    except ValueError:
        return f"{path} (a copy outside the course)"
    if inside == Path("labs") / lab / f"{lab}.ipynb":
        return str(inside)
    return f"{inside} (a copy, not labs/{lab}/{lab}.ipynb)"


def plot_progress(history: AnswerHistory | None = None, bank: dict[str, Question] | None = None):
    """A matplotlib figure: per-topic mastery (left) and each lab's latest and best score (right). Returns it."""
    import matplotlib.pyplot as plt

    own = history is None
    history = AnswerHistory() if own else history
    try:
        bank = load_bank() if bank is None else bank
        rows = topic_mastery(history, bank)
        grades = history.lab_grades()
    finally:
        if own:
            history.close()
    fig, (ax_topics, ax_labs) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    if rows:
        ax_topics.barh([r.topic for r in rows], [100 * r.mastery for r in rows], color="tab:blue")
        ax_topics.invert_yaxis()
    else:
        _say(ax_topics, "no questions in the bank")
    ax_topics.set(xlim=(0, 100), xlabel="mastery (%)", title="Mock interviews: mastery per topic")
    if grades:
        labs = sorted(grades)
        xs = range(len(labs))
        ax_labs.bar([x - 0.2 for x in xs], [100 * grades[lab]["latest"] / grades[lab]["max_score"] for lab in labs],
                    0.4, label="latest")
        ax_labs.bar([x + 0.2 for x in xs], [100 * grades[lab]["best"] / grades[lab]["max_score"] for lab in labs],
                    0.4, label="best")
        ax_labs.set_xticks(list(xs), labs, rotation=30, ha="right")
        ax_labs.legend()
    else:
        _say(ax_labs, "no graded labs yet")
    ax_labs.set(ylim=(0, 100), ylabel="score (%)", title="Graded labs")
    fig.tight_layout()
    return fig


def _say(ax, text: str) -> None:
    """``text`` in the middle of an empty panel."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


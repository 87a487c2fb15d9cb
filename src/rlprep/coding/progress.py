"""The coding rounds' part of ``rlprep progress``: per problem tried, its latest round and the retests still to come.

Nothing is stored here: the rows are the ones :class:`rlprep.coding.attempts.CodingLog` keeps for ``rlprep mock
--coding``, and a problem counts as solved by the log's own rule (:meth:`CodingLog.status`: once any round solved it
within its target time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProblemProgress:
    """One problem tried: its latest round (``outcome`` None when that round never ended) and its pending retests."""

    slug: str
    status: str
    """``solved``, ``slow`` or ``failed`` (:meth:`CodingLog.status`), ``unfinished`` when no round ended."""
    outcome: str | None
    retest: str | None
    """The variant the latest round was (``day2``, ``day7``), None for the problem itself."""
    passed: int
    total: int
    seconds: float
    limit_seconds: float
    rounds: int
    retests: tuple[tuple[str, float], ...]
    """Pending retests, (name, due_at), earliest first."""


def problem_progress(log) -> list[ProblemProgress]:
    """One row per problem in ``log`` (a :class:`CodingLog`), in the order they were first tried."""
    attempts = log.attempts()
    status = log.status()
    pending: dict[str, list[tuple[str, float]]] = {}
    for row in log.retests():
        pending.setdefault(row["slug"], []).append((row["retest"], row["due_at"]))
    latest: dict[str, dict] = {}
    rounds: dict[str, int] = {}
    for row in attempts:  # ordered by id: the last one seen is the latest
        latest[row["slug"]] = row
        rounds[row["slug"]] = rounds.get(row["slug"], 0) + 1
    return [ProblemProgress(slug, status.get(slug, "unfinished"), row["outcome"], row["retest"], row["passed"],
                            row["total"], row["seconds"], row["limit_seconds"], rounds[slug],
                            tuple(pending.get(slug, ())))
            for slug, row in latest.items()]


def coding_lines(history_path: str | Path, now: float | None = None) -> list[str]:
    """The ``rlprep progress`` lines for the coding rounds recorded in ``history_path``; none when there are none."""
    from rlprep.coding.attempts import CodingLog
    from rlprep.interview.session import clock_text

    now = time.time() if now is None else now
    with CodingLog(history_path) as log:
        rows = problem_progress(log)
    if not rows:
        return []
    from rlprep.coding.bank import load_problems

    bank = load_problems()
    solved = sum(1 for r in rows if r.status == "solved" and r.slug in bank)
    lines = ["", f"Coding rounds (rlprep mock --coding): {solved} of {len(bank)} problems solved within the target "
                 "time. The latest round of each problem tried:",
             f"  {'problem':<26} {'latest':<16} {'properties':>10}  {'time / target':>13}  {'rounds':>6}  "
             "retests due"]
    for r in rows:
        latest = (r.outcome or "unfinished") + (f" ({r.retest})" if r.retest else "")
        spent = f"{clock_text(r.seconds)} / {clock_text(r.limit_seconds)}"
        due = ", ".join(f"{name} due now ({_day(at)})" if at <= now else f"{name} on {_day(at)}"
                        for name, at in r.retests)
        lines.append(f"  {r.slug:<26} {latest:<16} {f'{r.passed}/{r.total}':>10}  {spent:>13}  {r.rounds:>6}  "
                     f"{due or '-'}")
    return lines


def _day(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(at))

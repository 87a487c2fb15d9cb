"""Coding rounds in the learner's history: every attempt, and the day-2 / day-7 retests of a failed or slow one.

The rows live in the mock interview's ``history.sqlite`` (``rlprep.interview.history``: the file is opened, checked
and created there first), in two tables of their own, created when missing::

    coding_attempts  one row per round: problem, retest, time taken, properties passed, submissions, outcome,
                     the follow-up answers, the last submitted file. Saved at the first check or submit and
                     updated at each step (one transaction each), so a stop loses nothing already given.
    coding_retests   (problem, retest) -> when it is due. A round that ends failed or slow (full marks after the
                     target time) schedules its problem's two retest variants, day 2 and day 7 from that round;
                     a retest solved in time is marked done.

Outcomes: ``solved`` (full marks within the target time), ``slow`` (full marks, over time), ``failed`` (never full
marks: gave up, stopped, or the input ended).
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from rlprep.coding.bank import RETEST_NAMES, Problem
from rlprep.errors import RlprepError

DAY = 86400.0
RETEST_DAYS = {"day2": 2, "day7": 7}
OUTCOMES = ("solved", "slow", "failed")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS coding_attempts (
    id INTEGER PRIMARY KEY, slug TEXT NOT NULL, retest TEXT, started_at REAL NOT NULL, seconds REAL NOT NULL,
    limit_seconds REAL NOT NULL, passed INTEGER NOT NULL, total INTEGER NOT NULL, submissions INTEGER NOT NULL,
    outcome TEXT, results TEXT NOT NULL, follow_ups TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS coding_retests (
    slug TEXT NOT NULL, retest TEXT NOT NULL, due_at REAL NOT NULL, from_attempt INTEGER NOT NULL,
    done_attempt INTEGER, PRIMARY KEY (slug, retest));
"""


def outcome_of(full: bool, seconds: float, limit_seconds: float) -> str:
    if not full:
        return "failed"
    return "solved" if seconds <= limit_seconds else "slow"


class CodingLog:
    """The coding tables of the learner's history file (``path``: default ``<RLPREP_HOME>/history.sqlite``)."""

    def __init__(self, path: str | Path | None = None):
        from rlprep.interview.history import AnswerHistory

        with AnswerHistory(path) as checked:  # validates the file (or creates it) and reports a damaged one
            self.path = Path(checked.path)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as err:
            raise RlprepError(f"cannot use the history database {self.path} for coding rounds ({err})",
                              f"move it aside (mv '{self.path}' '{self.path}.bak') and run again") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CodingLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- writing -----------------------------------------------------------------------------------------------------
    def begin(self, slug: str, retest: str | None, started_at: float, limit_seconds: float, source: str) -> int:
        with self._transaction():
            cur = self._conn.execute(
                "INSERT INTO coding_attempts (slug, retest, started_at, seconds, limit_seconds, passed, total, "
                "submissions, outcome, results, follow_ups, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (slug, retest, started_at, 0.0, limit_seconds, 0, 0, 0, None, "[]", "[]", source))
        return int(cur.lastrowid)

    def submission(self, attempt_id: int, report, seconds: float, source: str) -> None:
        """Save a graded submission (the latest one counts)."""
        results = json.dumps([{"name": r.name, "passed": r.passed} for r in report.results], ensure_ascii=False)
        with self._transaction():
            self._conn.execute("UPDATE coding_attempts SET passed=?, total=?, results=?, seconds=?, source=?, "
                               "submissions=submissions+1 WHERE id=?",
                               (report.passed, report.total, results, seconds, source, attempt_id))

    def follow_up(self, attempt_id: int, question: str, answer: str) -> None:
        with self._transaction():
            row = self._conn.execute("SELECT follow_ups FROM coding_attempts WHERE id=?", (attempt_id,)).fetchone()
            given = json.loads(row[0]) + [{"q": question, "answer": answer}]
            self._conn.execute("UPDATE coding_attempts SET follow_ups=? WHERE id=?",
                               (json.dumps(given, ensure_ascii=False), attempt_id))

    def finish(self, attempt_id: int, outcome: str, now: float | None = None, seconds: float | None = None) -> list:
        """Set the outcome; schedule the retests of a failed or slow round. Returns [(retest, due_at)] scheduled."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
        now = time.time() if now is None else now
        with self._transaction():
            slug, retest, started_at, limit_seconds, passed, total = self._conn.execute(
                "SELECT slug, retest, started_at, limit_seconds, passed, total FROM coding_attempts WHERE id=?",
                (attempt_id,)).fetchone()
            if seconds is not None:
                self._conn.execute("UPDATE coding_attempts SET seconds=? WHERE id=?", (seconds, attempt_id))
            self._conn.execute("UPDATE coding_attempts SET outcome=? WHERE id=?", (outcome, attempt_id))
            if outcome == "solved":
                if retest:
                    self._conn.execute("UPDATE coding_retests SET done_attempt=? WHERE slug=? AND retest=?",
                                       (attempt_id, slug, retest))
                return []
            scheduled = [(name, now + RETEST_DAYS[name] * DAY) for name in RETEST_NAMES]
            for name, due in scheduled:
                self._conn.execute(
                    "INSERT INTO coding_retests (slug, retest, due_at, from_attempt, done_attempt) VALUES (?,?,?,?,NULL)"
                    " ON CONFLICT(slug, retest) DO UPDATE SET due_at=excluded.due_at, "
                    "from_attempt=excluded.from_attempt, done_attempt=NULL", (slug, name, due, attempt_id))
        return scheduled

    # -- reading ------------------------------------------------------------------------------------------------------
    def attempts(self, slug: str | None = None) -> list[dict]:
        query = "SELECT * FROM coding_attempts" + (" WHERE slug=?" if slug else "") + " ORDER BY id"
        cur = self._conn.execute(query, (slug,) if slug else ())
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row)) for row in cur.fetchall()]
        for row in rows:
            row["results"] = json.loads(row["results"])
            row["follow_ups"] = json.loads(row["follow_ups"])
        return rows

    def retests(self, pending_only: bool = True) -> list[dict]:
        query = "SELECT slug, retest, due_at, from_attempt, done_attempt FROM coding_retests"
        query += " WHERE done_attempt IS NULL" if pending_only else ""
        rows = self._conn.execute(query + " ORDER BY due_at, slug, retest").fetchall()
        return [dict(zip(("slug", "retest", "due_at", "from_attempt", "done_attempt"), r)) for r in rows]

    def status(self) -> dict[str, str]:
        """Per problem tried: ``solved`` once any round solved it in time, else its latest outcome."""
        out: dict[str, str] = {}
        for row in self.attempts():
            if row["outcome"] is None:
                continue
            if out.get(row["slug"]) != "solved":
                out[row["slug"]] = row["outcome"]
        return out

    def next_problem(self, bank: dict[str, Problem], now: float | None = None, seed: int | None = None,
                     max_minutes: int | None = None) -> tuple[Problem, str | None] | None:
        """What to draw: a due retest first (its variant), then a problem never tried, then one not solved yet.
        None when every problem (within ``max_minutes``) is solved and no retest is due."""
        now = time.time() if now is None else now
        fits = {s: p for s, p in bank.items() if max_minutes is None or p.minutes <= max_minutes}
        for row in self.retests():
            if row["due_at"] <= now and row["slug"] in fits:
                return fits[row["slug"]], row["retest"]
        status = self.status()
        rng = random.Random(seed)
        for pool in ([s for s in fits if s not in status], [s for s in fits if status.get(s) in ("failed", "slow")]):
            if pool:
                return fits[rng.choice(sorted(pool))], None
        return None

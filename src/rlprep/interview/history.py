"""The learner's history: mock-interview answers, spaced repetition and lab grades in one SQLite file.

The file is ``history.sqlite`` under :func:`rlprep.paths.data_dir` (``$RLPREP_HOME`` overrides). It runs in WAL
mode and every write is its own transaction, committed before the session moves on, so killing the process
loses nothing already answered. A file that is not an rlprep history (corrupted, or foreign) or that a newer
rlprep wrote is reported with the fix (move it aside) and is never modified.

Spaced repetition is a Leitner system: a question sits in box 0 (never seen) to 3; a passed answer moves it
up one box, a failed one back to box 1; box b is due again after ``INTERVAL_DAYS[b]`` days (D+1, D+3, D+7).
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from rlprep.errors import RlprepError
from rlprep.paths import data_dir, ensure_dir

SCHEMA_VERSION = 1
DB_NAME = "history.sqlite"
DAY = 86400.0
INTERVAL_DAYS = {1: 1, 2: 3, 3: 7}
"""Days until a question in Leitner box b is due again."""
PASS_MASTERY = 0.6
"""An answer whose mastery reaches this moves its question up a box; below it, back to box 1."""

_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY, started_at REAL NOT NULL, ended_at REAL, settings TEXT NOT NULL);
CREATE TABLE answers (
    id INTEGER PRIMARY KEY, session_id INTEGER REFERENCES sessions(id), qid TEXT NOT NULL,
    asked_at REAL NOT NULL, seconds REAL NOT NULL, limit_seconds REAL NOT NULL, over_time INTEGER NOT NULL,
    answer TEXT NOT NULL, follow_up TEXT, follow_up_answer TEXT, covered TEXT NOT NULL, n_key_points INTEGER NOT NULL,
    coverage REAL NOT NULL, self_rating INTEGER, interrupted INTEGER NOT NULL DEFAULT 0,
    box_before INTEGER NOT NULL);
CREATE TABLE review (
    qid TEXT PRIMARY KEY, box INTEGER NOT NULL, due_at REAL NOT NULL, last_seen REAL NOT NULL,
    last_mastery REAL NOT NULL, n_seen INTEGER NOT NULL);
CREATE TABLE lab_grades (
    id INTEGER PRIMARY KEY, lab TEXT NOT NULL, score REAL NOT NULL, max_score REAL NOT NULL, graded_at REAL NOT NULL);
"""
_TABLES = {"schema_version", "sessions", "answers", "review", "lab_grades"}
_ADDED_COLUMNS = (("scorer", "TEXT"), ("judgement", "TEXT"))
"""Columns of ``answers`` added after v1 files were written (issue #37), put in on opening: which scorer gave the
coverage (NULL: the keyword scorer, the only one before) and its judgement as JSON
(:meth:`rlprep.interview.scoring.Judgement.as_record`)."""
_ADDED_LAB_COLUMNS = (("notebook", "TEXT"),)
"""Columns of ``lab_grades`` added after v1 (issue #38): the absolute path of the notebook that was graded (NULL: not
recorded), so ``rlprep progress`` can say which file each grade came from."""
_EXCHANGES = """CREATE TABLE IF NOT EXISTS exchanges (
    answer_id INTEGER NOT NULL REFERENCES answers(id), n INTEGER NOT NULL, question TEXT NOT NULL,
    detail TEXT NOT NULL, answer TEXT, PRIMARY KEY (answer_id, n))"""
"""Every follow-up of an answer (n = 1, 2, 3): the question (Chinese), its English, source, anchor and kind as JSON,
and the learner's answer; the first is also in ``answers.follow_up`` / ``follow_up_answer``."""


def default_path() -> Path:
    """``<data_dir>/history.sqlite``."""
    return data_dir() / DB_NAME


def mastery(coverage: float, self_rating: int | None) -> float:
    """One number in [0, 1] per answer: the mean of key-point coverage and the self-rating mapped 1..5 -> 0..1.

    Without a self-rating, the coverage alone.
    """
    if self_rating is None:
        return coverage
    return 0.5 * coverage + 0.5 * (self_rating - 1) / 4


@dataclass(frozen=True)
class ReviewState:
    """Where a question stands in the Leitner system."""

    qid: str
    box: int
    due_at: float
    last_seen: float
    last_mastery: float
    n_seen: int


def _move_aside_fix(path: Path) -> str:
    return f"move it aside (mv '{path}' '{path}.bak') and run again; a fresh history will be started"


class AnswerHistory:
    """The learner's answers, ratings and lab grades: an open history database (not :class:`rlprep.live.History`, a
    training run's metrics). Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        if self.path.is_dir():
            raise RlprepError(f"{self.path} is a folder, not an rlprep history database", _move_aside_fix(self.path))
        ensure_dir(self.path.parent, "RLPREP_HOME")
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        except sqlite3.OperationalError as err:
            raise RlprepError(f"cannot open the history database {self.path} ({err})",
                              "point RLPREP_HOME at a folder you can write to") from None
        try:
            self._check_or_create()
            self._add_missing()
        except BaseException:
            self._conn.close()
            raise

    # -- opening -------------------------------------------------------------------------------------------
    def _check_or_create(self) -> None:
        try:
            tables = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as err:
            raise RlprepError(f"{self.path} is not a readable rlprep history database ({err})",
                              _move_aside_fix(self.path)) from None
        if not tables:
            self._conn.execute("PRAGMA journal_mode=WAL")
            with self._transaction():
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        self._conn.execute(statement)
                self._conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            return
        if "schema_version" not in tables:
            raise RlprepError(f"{self.path} is an SQLite file but not an rlprep history (tables: {sorted(tables)})",
                              _move_aside_fix(self.path))
        try:
            row = self._conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.DatabaseError as err:
            raise RlprepError(f"{self.path} is damaged ({err})", _move_aside_fix(self.path)) from None
        try:
            check = self._conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as err:
            check = str(err)
        if check != "ok":
            raise RlprepError(f"{self.path} is damaged (sqlite quick_check: {check})", _move_aside_fix(self.path))
        version = row[0] if row else None
        if not isinstance(version, int):
            raise RlprepError(f"{self.path} has no schema version", _move_aside_fix(self.path))
        if version > SCHEMA_VERSION:
            raise RlprepError(
                f"{self.path} was written by a newer rlprep (history schema v{version}; this rlprep reads v{SCHEMA_VERSION})",
                f"upgrade rlprep, or {_move_aside_fix(self.path)}")
        if not _TABLES <= tables:
            raise RlprepError(f"{self.path} is missing tables {sorted(_TABLES - tables)}", _move_aside_fix(self.path))
        self._conn.execute("PRAGMA journal_mode=WAL")

    def _add_missing(self) -> None:
        """Add what later rlpreps keep beside the v1 tables (a column, a table): additions an older rlprep ignores."""
        with self._transaction():
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(answers)")}
            for name, kind in _ADDED_COLUMNS:
                if name not in have:
                    self._conn.execute(f"ALTER TABLE answers ADD COLUMN {name} {kind}")
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(lab_grades)")}
            for name, kind in _ADDED_LAB_COLUMNS:
                if name not in have:
                    self._conn.execute(f"ALTER TABLE lab_grades ADD COLUMN {name} {kind}")
            self._conn.execute(_EXCHANGES)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One committed transaction (the connection runs in autocommit mode otherwise)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AnswerHistory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- sessions and answers -----------------------------------------------------------------------------
    def start_session(self, settings: dict, now: float | None = None) -> int:
        with self._transaction():
            cur = self._conn.execute("INSERT INTO sessions (started_at, settings) VALUES (?, ?)",
                                     (time.time() if now is None else now, json.dumps(settings, ensure_ascii=False)))
        return int(cur.lastrowid)

    def end_session(self, session_id: int, now: float | None = None) -> None:
        with self._transaction():
            self._conn.execute("UPDATE sessions SET ended_at = ? WHERE id = ?",
                               (time.time() if now is None else now, session_id))

    def record_answer(self, session_id: int, qid: str, *, asked_at: float, seconds: float, limit_seconds: float,
                      answer: str, covered: list[int], n_key_points: int, follow_up: str | None = None,
                      interrupted: bool = False, judgement: dict | None = None) -> int:
        """Save a main answer (its own transaction) and move the question in the Leitner system by coverage.

        ``judgement`` (:meth:`~rlprep.interview.scoring.Judgement.as_record`) sets the coverage to its score and
        records its scorer; without one the coverage is the share of key points ``covered``."""
        coverage = judgement["score"] if judgement else len(covered) / n_key_points if n_key_points else 0.0
        with self._transaction():
            row = self._conn.execute("SELECT box FROM review WHERE qid=?", (qid,)).fetchone()
            box_before = 0 if row is None else row[0]
            cur = self._conn.execute(
                "INSERT INTO answers (session_id, qid, asked_at, seconds, limit_seconds, over_time, answer, follow_up,"
                " covered, n_key_points, coverage, interrupted, box_before, scorer, judgement)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (session_id, qid, asked_at, seconds, limit_seconds, int(seconds > limit_seconds), answer, follow_up,
                 json.dumps(sorted(covered)), n_key_points, coverage, int(interrupted), box_before,
                 judgement["scorer"] if judgement else None,
                 json.dumps(judgement, ensure_ascii=False) if judgement else None))
            self._update_review(qid, mastery(coverage, None), asked_at + seconds, box_before, new_answer=True)
        return int(cur.lastrowid)

    def record_follow_up(self, answer_id: int, follow_up_answer: str, covered: list[int]) -> None:
        """Save the follow-up answer; ``covered`` is the key-point coverage of both answers together."""
        with self._transaction():
            qid, n_key_points, rating, asked_at, seconds, box_before = self._answer_row(answer_id)
            coverage = len(covered) / n_key_points if n_key_points else 0.0
            self._conn.execute("UPDATE answers SET follow_up_answer=?, covered=?, coverage=? WHERE id=?",
                               (follow_up_answer, json.dumps(sorted(covered)), coverage, answer_id))
            self._update_review(qid, mastery(coverage, rating), asked_at + seconds, box_before, new_answer=False)

    def record_exchange(self, answer_id: int, n: int, question: str, detail: dict) -> None:
        """Save follow-up ``n`` (1-3) of an answer as it is asked; the first also fills ``answers.follow_up``."""
        with self._transaction():
            self._answer_row(answer_id)
            self._conn.execute("INSERT INTO exchanges (answer_id, n, question, detail) VALUES (?,?,?,?)",
                               (answer_id, n, question, json.dumps(detail, ensure_ascii=False)))
            if n == 1:
                self._conn.execute("UPDATE answers SET follow_up=? WHERE id=?", (question, answer_id))

    def record_exchange_answer(self, answer_id: int, n: int, answer: str, covered: list[int], judgement: dict) -> None:
        """Save the answer to follow-up ``n`` and the re-scoring of all answers so far, in one transaction."""
        with self._transaction():
            self._conn.execute("UPDATE exchanges SET answer=? WHERE answer_id=? AND n=?", (answer, answer_id, n))
            if n == 1:
                self._conn.execute("UPDATE answers SET follow_up_answer=? WHERE id=?", (answer, answer_id))
            self._rescore(answer_id, covered, judgement)

    def record_judgement(self, answer_id: int, covered: list[int], judgement: dict) -> None:
        """Save the final judgement of an answer (a model's, or the offline scorer that took over) and re-place its
        question in the Leitner system by the judgement's score."""
        with self._transaction():
            self._rescore(answer_id, covered, judgement)

    def _rescore(self, answer_id: int, covered: list[int], judgement: dict) -> None:
        qid, _, rating, asked_at, seconds, box_before = self._answer_row(answer_id)
        self._conn.execute("UPDATE answers SET covered=?, coverage=?, scorer=?, judgement=? WHERE id=?",
                           (json.dumps(sorted(covered)), judgement["score"], judgement["scorer"],
                            json.dumps(judgement, ensure_ascii=False), answer_id))
        self._update_review(qid, mastery(judgement["score"], rating), asked_at + seconds, box_before, new_answer=False)

    def exchanges(self, answer_id: int) -> list[dict]:
        """An answer's follow-ups in order: ``n``, ``question``, ``answer`` and the ``detail`` (decoded)."""
        rows = self._conn.execute("SELECT n, question, answer, detail FROM exchanges WHERE answer_id=? ORDER BY n",
                                  (answer_id,)).fetchall()
        return [{"n": n, "question": q, "answer": a, "detail": json.loads(d)} for n, q, a, d in rows]

    def record_rating(self, answer_id: int, self_rating: int) -> None:
        """Save the learner's self-rating (1-5) and re-place the question in the Leitner system."""
        if not (isinstance(self_rating, int) and 1 <= self_rating <= 5):
            raise ValueError(f"self_rating must be an integer 1-5, got {self_rating!r}")
        with self._transaction():
            qid, _, _, asked_at, seconds, box_before = self._answer_row(answer_id)
            coverage = self._conn.execute("SELECT coverage FROM answers WHERE id=?", (answer_id,)).fetchone()[0]
            self._conn.execute("UPDATE answers SET self_rating=? WHERE id=?", (self_rating, answer_id))
            self._update_review(qid, mastery(coverage, self_rating), asked_at + seconds, box_before, new_answer=False)

    def _answer_row(self, answer_id: int) -> tuple:
        row = self._conn.execute("SELECT qid, n_key_points, self_rating, asked_at, seconds, box_before FROM answers"
                                 " WHERE id=?", (answer_id,)).fetchone()
        if row is None:
            raise ValueError(f"no saved answer with id {answer_id}; record_answer() returns the id to use")
        return row

    def _update_review(self, qid: str, value: float, seen_at: float, box_before: int, new_answer: bool) -> None:
        """Leitner move from ``box_before`` (the box before this answer): up one box if passed, else box 1.

        The follow-up and the self-rating re-decide the same answer's move, so they start from the same box.
        """
        row = self._conn.execute("SELECT n_seen FROM review WHERE qid=?", (qid,)).fetchone()
        n_seen = (0 if row is None else row[0]) + int(new_answer)
        box = min(box_before + 1, 3) if value >= PASS_MASTERY else 1
        due = seen_at + INTERVAL_DAYS[box] * DAY
        self._conn.execute(
            "INSERT INTO review (qid, box, due_at, last_seen, last_mastery, n_seen) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(qid) DO UPDATE SET box=excluded.box, due_at=excluded.due_at, last_seen=excluded.last_seen,"
            " last_mastery=excluded.last_mastery, n_seen=excluded.n_seen",
            (qid, box, due, seen_at, value, n_seen))

    # -- reading -------------------------------------------------------------------------------------------
    def review_states(self) -> dict[str, ReviewState]:
        rows = self._conn.execute("SELECT qid, box, due_at, last_seen, last_mastery, n_seen FROM review")
        return {r[0]: ReviewState(*r) for r in rows}

    def answers(self, session_id: int | None = None) -> list[dict]:
        """Saved answers, oldest first, as dicts of the ``answers`` columns (``covered`` decoded)."""
        query = "SELECT * FROM answers" + (" WHERE session_id = ?" if session_id is not None else "") + " ORDER BY id"
        cur = self._conn.execute(query, () if session_id is None else (session_id,))
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row)) for row in cur.fetchall()]
        for row in rows:
            row["covered"] = json.loads(row["covered"])
            row["judgement"] = json.loads(row["judgement"]) if row.get("judgement") else None
        return rows

    def prioritise(self, qids: list[str], now: float | None = None, seed: int | None = None) -> list[str]:
        """``qids`` ordered for the next session: due weak questions first, then new ones, then the rest.

        Priority (higher first): a seen question that is due scores ``2 + (1 - last mastery) + overdue``
        (overdue = days past due / its interval, capped at 1); a never-seen question ``1.5`` plus a random
        tie-break below 0.5; a seen question not yet due ``(1 - last mastery) * 0.5 + staleness * 0.5`` where
        staleness is the fraction of its interval already elapsed. So low scores and long absences come back first.
        """
        now = time.time() if now is None else now
        rng = random.Random(seed)
        states = self.review_states()

        def priority(qid: str) -> float:
            state = states.get(qid)
            if state is None:
                return 1.5 + 0.5 * rng.random()
            interval = INTERVAL_DAYS[state.box] * DAY
            weakness = 1.0 - state.last_mastery
            if now >= state.due_at:
                return 2.0 + weakness + min((now - state.due_at) / interval, 1.0)
            staleness = (now - state.last_seen) / interval
            return 0.5 * weakness + 0.5 * min(max(staleness, 0.0), 1.0)

        scored = [(priority(q), q) for q in qids]
        return [q for _, q in sorted(scored, key=lambda item: -item[0])]

    # -- labs ----------------------------------------------------------------------------------------------
    def record_lab_grade(self, lab: str, score: float, max_score: float, now: float | None = None,
                         notebook: str | Path | None = None) -> None:
        """Save one grading of ``lab``; ``notebook`` is the graded file (stored as an absolute path)."""
        _check_grade(lab, score, max_score)
        where = None if notebook is None else str(Path(notebook).resolve())
        with self._transaction():
            self._conn.execute("INSERT INTO lab_grades (lab, score, max_score, graded_at, notebook) VALUES (?,?,?,?,?)",
                               (lab, float(score), float(max_score), time.time() if now is None else now, where))

    def lab_grades(self) -> dict[str, dict]:
        """Per lab: the latest and the best score, their maximum, the number of gradings and the file the latest
        came from (``notebook``, None when not recorded)."""
        return self._grades(lambda lab, notebook: lab)

    def lab_grades_by_file(self) -> dict[tuple[str, str | None], dict]:
        """:meth:`lab_grades` per ``(lab, notebook)``: a scratch copy's grades apart from the course file's."""
        return self._grades(lambda lab, notebook: (lab, notebook))

    def _grades(self, key) -> dict:
        out: dict = {}
        rows = self._conn.execute("SELECT lab, score, max_score, graded_at, notebook FROM lab_grades "
                                  "ORDER BY graded_at, id")
        for lab, score, max_score, graded_at, notebook in rows:
            entry = out.setdefault(key(lab, notebook), {"best": 0.0, "runs": 0})
            entry.update(latest=score, max_score=max_score, graded_at=graded_at, runs=entry["runs"] + 1,
                         notebook=notebook)
            entry["best"] = max(entry["best"], score)
        return out


def _check_grade(lab: str, score: float, max_score: float) -> None:
    if not isinstance(lab, str) or not lab.strip():
        raise ValueError(f"lab must be a non-empty name like 'lab01_gae', got {lab!r}")
    if not max_score > 0:
        raise ValueError(f"max_score must be positive, got {max_score!r}")
    if not 0 <= score <= max_score:
        raise ValueError(f"score must lie in [0, max_score={max_score}], got {score!r}")


def record_lab_grade(lab: str, score: float, max_score: float, path: str | Path | None = None, *,
                     notebook: str | Path | None = None) -> None:
    """Record one graded run of ``lab`` (called by ``rlprep grade``) from the file ``notebook``; ``path`` defaults
    to the learner's history."""
    _check_grade(lab, score, max_score)
    with AnswerHistory(path) as history:
        history.record_lab_grade(lab, score, max_score, notebook=notebook)

"""Autograde a lab for every collected student, in ``jobs`` processes, refusing bad hand-ins without losing any.

``nbgrader autograde LAB`` grades students one after the other. Here the students are sharded over processes
(student ``k`` of the sorted list goes to process ``k % jobs``; process 0 is this one, the others are started with
``spawn``); each process builds its own nbgrader API on the same course folder and gradebook, and each submission
still runs in its own sandboxed kernel (``rlprep.grading.executor.IsolatedExecute``), so grades do not depend on
``jobs``. A gradebook shared by several
processes should be PostgreSQL; SQLite works for a few jobs (writes wait up to 60 s for the lock).

Before anything runs, a hand-in is checked; one that fails is refused with a problem and a fix and left where it
is (``submitted/<id>/<lab>/``), and the rest of the class is graded:
- the student id must be plain (letters, digits, ``.``, ``_``, ``-``, ``@``; at most 64 characters; no leading dot);
- ``submitted/<id>/<lab>/<lab>.ipynb`` must exist and be a notebook (nbformat 4 JSON, nested no deeper than
  ``rlprep.grading.grade.MAX_JSON_DEPTH``).
A hand-in with deleted cells is graded: the deleted test cells are restored, the tests of a deleted answer score 0.
A lab that is not in the gradebook, a gradebook that cannot be reached, or a grader running as root without a
sandbox (``rlprep.grading.sandbox.refusal``) stops the run before it starts.

Re-grading (after a new release of the lab's tests) keeps what an instructor gave in formgrader: the manual
grades and comments are read before anything is graded and any that the run lost are written back and reported
(:mod:`rlprep.classroom.manual_grades`); submissions under ``submitted/`` are only read.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from rlprep.errors import RlprepError

STUDENT_ID = re.compile(r"^[A-Za-z0-9@_-][A-Za-z0-9.@_-]{0,63}$")


@dataclass
class Refusal:
    student: str
    problem: str
    fix: str


@dataclass
class AutogradeRun:
    """Who was graded, who was refused (and why), and how long autograde + feedback took."""

    lab: str
    graded: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    seconds: float = 0.0
    manual_kept: int = 0  # manual grades, extra credits and comments in the gradebook before and after
    restored: list[str] = field(default_factory=list)  # what the run lost and was written back


def check_jobs(jobs: int) -> None:
    if jobs < 1:
        raise RlprepError(f"--jobs must be at least 1, got {jobs}", "pass e.g. --jobs 2 (one per free core)")


def check_student_id(student: str) -> None:
    """Raise RlprepError for an id nbgrader's folders and the gradebook should not carry."""
    if not STUDENT_ID.match(student):
        raise RlprepError(f"student id {student!r} has characters a course folder and gradebook cannot take",
                          "use letters, digits, '.', '_', '-' or '@' (at most 64, not starting with '.'), e.g. "
                          "the hub's user name; rename the folder under submitted/ to that id")


def check_submission(course: Path, student: str, lab: str) -> None:
    """Raise RlprepError when ``submitted/<student>/<lab>/<lab>.ipynb`` cannot be graded as it is."""
    import nbformat

    from rlprep.grading.cell_meta import fix_cell_ids
    from rlprep.grading.grade import check_json_depth

    check_student_id(student)
    path = course / "submitted" / student / lab / f"{lab}.ipynb"
    if not path.is_file():
        found = sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else []
        raise RlprepError(f"{student}: no {lab}.ipynb in {path.parent} (found: {', '.join(found) or 'nothing'})",
                          f"ask {student} to submit the lab notebook {lab}.ipynb itself; the files are kept")
    try:
        check_json_depth(path.read_text(encoding="utf-8"), path)
    except RlprepError as err:
        raise RlprepError(f"{student}: {err.problem}", f"ask {student} to submit {lab}.ipynb as saved by Jupyter; "
                          "the file is kept as it is") from None
    except Exception:  # unreadable: reported below, as nbformat words it
        pass
    try:
        nb = nbformat.read(path, as_version=4)
        fix_cell_ids(nb)  # invalid cell ids are put back before nbgrader reads them (grading.missing_cells)
        nbformat.validate(nb)
    except Exception as err:  # any unreadable file is the same problem for the instructor
        raise RlprepError(f"{student}: {path} is not a notebook ({type(err).__name__}: {str(err)[:200]})",
                          f"ask {student} to submit {lab}.ipynb as saved by Jupyter; the file is kept as it is") \
            from err


def check_lab(db_url: str, lab: str, course_id: str = "rlprep") -> None:
    """Raise RlprepError when the gradebook has no assignment ``lab``."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url, course_id) as gb:
        try:
            gb.find_assignment(lab)
        except MissingEntry:
            known = ", ".join(a.name for a in gb.assignments) or "none"
            raise RlprepError(f"lab {lab!r} is not in the gradebook (it has: {known})",
                              f"run nbgrader generate_assignment {lab} (or rlprep classroom simulate) first") from None


def collected_students(course: Path, lab: str) -> list[str]:
    """Every ``submitted/<id>/`` folder that holds a ``<lab>/`` folder, sorted."""
    root = course / "submitted"
    return sorted(p.name for p in root.iterdir() if (p / lab).is_dir()) if root.is_dir() else []


def _grade_shard(spec: dict, lab: str, students: list[str]) -> list[tuple[str, str, str]]:
    """Autograde and generate feedback for ``students`` in this process; return the refusals."""
    from rlprep.classroom.cycle import Classroom

    spec = dict(spec)
    room = Classroom(spec.pop("out"), spec.pop("db_url"), **spec)
    refused = []
    for student in students:
        try:
            room.autograde(lab, student)
            room.feedback(lab, student)
        except RlprepError as err:
            refused.append((student, err.problem, err.fix or ""))
    return refused


def autograde_lab(room, lab: str, jobs: int = 1, students: list[str] | None = None) -> AutogradeRun:
    """Autograde ``lab`` for ``students`` (default: every collected one) of ``room`` in ``jobs`` processes."""
    from rlprep.classroom import manual_grades
    from rlprep.grading.sandbox import refusal

    check_jobs(jobs)
    check_lab(room.db_url, lab, room.course_id)
    if (refused := refusal()) is not None:
        raise refused
    before = manual_grades.snapshot(room.db_url, room.course_id, lab)
    run = AutogradeRun(lab)
    todo = []
    for student in students if students is not None else collected_students(room.course, lab):
        try:
            check_submission(room.course, student, lab)
            todo.append(student)
        except RlprepError as err:
            run.refused.append(Refusal(student, err.problem, err.fix or ""))
    t0 = time.monotonic()
    shards = [todo[k::jobs] for k in range(jobs) if todo[k::jobs]]
    if len(shards) <= 1:
        failed = _grade_shard(room.spec(), lab, todo)
    else:
        # this process grades the first shard itself: one process fewer to start (each imports nbgrader and torch)
        with ProcessPoolExecutor(len(shards) - 1, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_grade_shard, room.spec(), lab, shard) for shard in shards[1:]]
            failed = _grade_shard(room.spec(), lab, shards[0])
            failed += [refusal for f in futures for refusal in f.result()]
    run.seconds = time.monotonic() - t0
    run.refused += [Refusal(*r) for r in failed]
    bad = {r.student for r in run.refused}
    run.graded = [s for s in todo if s not in bad]
    run.restored = manual_grades.restore(room.db_url, room.course_id, lab, before)
    run.manual_kept = before.count
    return run

"""``rlprep classroom simulate``: a simulated class through nbgrader's whole cycle, checked against its tests.

Order (what an instructor and a class do on one server): for each lab ``generate_assignment`` and
``release_assignment``; each student fetches and submits (the late ones after the due date is set);
``collect``; ``autograde`` and ``generate_feedback`` per student; ``export`` -> ``grades.csv``. Then every
(student, lab) in ``grades.csv`` is compared with :func:`rlprep.classroom.students.expected_grade`.
"""

from __future__ import annotations

import csv
import datetime
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from rlprep.classroom import students as simulated
from rlprep.classroom.autograde import autograde_lab, check_jobs, check_student_id
from rlprep.classroom.cycle import Classroom
from rlprep.classroom.gradebook import check_reachable, describe
from rlprep.classroom.results import lab_from_notebook
from rlprep.errors import RlprepError


@dataclass
class ClassroomReport:
    """What a simulated class measured; ``mismatches`` lists every grade that differs from the expected one."""

    students: int
    labs: list[str]
    graded: int
    seconds: float
    autograde_seconds: float
    gradebook: str
    sandbox: str
    grades_csv: str
    mismatches: list[str] = field(default_factory=list)

    @property
    def per_minute(self) -> float:
        """Submissions autograded per minute (autograde and feedback only, the part that scales with a class)."""
        return 60.0 * self.graded / max(self.autograde_seconds, 1e-9)

    def summary(self) -> str:
        verdict = "every grade as expected" if not self.mismatches else f"{len(self.mismatches)} grades differ"
        return (f"classroom: {self.students} students x {len(self.labs)} labs = {self.graded} submissions graded, "
                f"{self.per_minute:.1f} submissions/minute ({self.seconds:.0f} s in all); gradebook: "
                f"{self.gradebook}; sandbox: {self.sandbox}; {verdict}")


def read_grades(path: Path) -> dict[tuple[str, str], dict]:
    """grades.csv as {(student, lab): row}."""
    with open(path, newline="") as f:
        return {(row["student_id"], row["assignment"]): row for row in csv.DictReader(f)}


def compare(grades: dict, expected: dict) -> list[str]:
    """Every (student, lab) whose raw score, score or max score differs from the expected (raw, score, max)."""
    wrong = []
    for key, (raw, score, total) in sorted(expected.items()):
        row = grades.get(key)
        if row is None:
            wrong.append(f"{key[0]} {key[1]}: missing from grades.csv")
            continue
        got = (float(row["raw_score"]), float(row["score"]), float(row["max_score"]))
        if any(abs(a - b) > 1e-6 for a, b in zip(got, (raw, score, total))):
            wrong.append(f"{key[0]} {key[1]}: grades.csv has raw/score/max {got}, expected {(raw, score, total)}")
    return wrong


def _labs(labs: list[str], root: Path) -> list[str]:
    from rlprep.grading.release import list_labs

    known = list_labs(root)
    unknown = [lab for lab in labs if lab not in known]
    if unknown or not labs:
        raise RlprepError(f"unknown lab(s): {', '.join(unknown) or '(none given)'}", f"labs: {', '.join(known)}")
    return labs


def simulate(n_students: int, labs: list[str], out: Path, db_url: str | None = None, root: Path | None = None,
             jobs: int = 1, ids: list[str] | None = None, log=print, absent: int = 0) -> ClassroomReport:
    """Run the class; write ``grades.csv``, ``expected.json`` and ``report.json`` under ``out``, and what an
    instructor reads after the grades: ``class-report.html`` (+ ``.json``), ``canvas.csv``, ``moodle.csv``, every
    number of which is compared with the expected grades (``rlprep.classroom.crosscheck``).

    ``ids`` names the students (default ``s01..``); ``jobs`` autograde processes (grades do not depend on it);
    ``absent`` more students on the roster who hand in nothing.
    """
    from rlprep.grading import sandbox
    from rlprep.grading.templating import rendered_solution
    from rlprep.paths import course_root

    root = course_root(root)
    labs = _labs(labs, root)
    if n_students < 1:
        raise RlprepError(f"--students must be at least 1, got {n_students}", "pass e.g. --students 6")
    for student in ids or []:
        check_student_id(student)
    if ids is not None and len(set(ids)) != n_students:
        raise RlprepError(f"--ids names {len(set(ids))} distinct students, --students says {n_students}",
                          "give one distinct id per student")
    check_jobs(jobs)
    if absent < 0:
        raise RlprepError(f"--absent must be at least 0, got {absent}", "pass e.g. --absent 2")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RlprepError(f"{out} already exists and is not an empty folder", "pass a new folder with --out")
    if db_url:
        check_reachable(db_url)
    t0 = time.monotonic()
    room = Classroom(out, db_url)
    gradebooks = {lab: rendered_solution(lab, root) for lab in labs}
    functions = {lab: simulated.graded_functions(nb) for lab, nb in gradebooks.items()}
    bugs = {lab: simulated.bug_names(lab, root, functions[lab]) for lab in labs}
    plans = simulated.plans(n_students, labs, bugs, ids)
    class_ids = list(dict.fromkeys(p.student for p in plans))
    absent_ids = [s for s in simulated.student_ids(n_students + absent) if s not in class_ids][:absent]
    for lab in labs:
        room.generate(lab, root / "solutions")
        room.release(lab)
    room.add_roster(simulated.roster(class_ids + absent_ids))
    log(f"released {', '.join(labs)} to {room.exchange}")
    for late in (False, True):
        if late:  # the due date passes between the on-time hand-ins and the late ones
            now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
            for lab in labs:
                room.set_due(lab, now)
            time.sleep(0.01)
        for plan in (p for p in plans if p.late == late):
            fetched = room.fetch(plan.student, plan.lab)
            nb = simulated.submission(nbformat.read(fetched, as_version=4), plan, root, room.course)
            nbformat.write(nb, fetched)
            room.submit(plan.student, plan.lab)
    for lab in labs:
        room.collect(lab)
    log(f"{len(plans)} submissions collected; autograding with {jobs} process(es)")
    runs = [autograde_lab(room, lab, jobs) for lab in labs]
    autograde_seconds = sum(r.seconds for r in runs)
    grades_csv = room.export()
    tests = {(p.student, p.lab): simulated.expected_tests(gradebooks[p.lab], p, root) for p in plans}
    expected = {(p.student, p.lab): simulated.grade_of(tests[(p.student, p.lab)], p) for p in plans}
    mismatches = [f"{r.student} {run.lab}: refused: {r.problem}" for run in runs for r in run.refused]
    entries = [dict(asdict(p), raw=e[0], score=e[1], max=e[2], tests=tests[key])
               for p, (key, e) in zip(plans, expected.items())]
    structure = {lab: lab_from_notebook(lab, gradebooks[lab]) for lab in labs}
    entries += [dict(student=s, lab=lab, kind="absent", bug="", raw=0.0, score=0.0, max=structure[lab].points,
                     tests={}) for s in absent_ids for lab in labs]
    (out / "expected.json").write_text(json.dumps(entries, indent=1))
    mismatches += compare(read_grades(grades_csv), {**expected, **{(e["student"], e["lab"]): (0.0, 0.0, e["max"])
                                                                  for e in entries if e["kind"] == "absent"}})
    mismatches += after_the_grades(room, out, entries, class_ids + absent_ids, structure)
    report = ClassroomReport(n_students, labs, len(plans), time.monotonic() - t0, autograde_seconds,
                             describe(room.db_url), sandbox.probe(), str(grades_csv),
                             mismatches)
    (out / "report.json").write_text(json.dumps(dict(asdict(report), per_minute=report.per_minute), indent=1))
    return report


def after_the_grades(room: Classroom, out: Path, expected: list[dict], roster: list[str], labs: dict) -> list[str]:
    """Write ``class-report.html`` (+ ``.json``), ``canvas.csv`` and ``moodle.csv`` for the class in ``room``, and
    return every difference between their numbers and ``expected`` (``rlprep.classroom.crosscheck``)."""
    from rlprep.classroom import crosscheck
    from rlprep.classroom.lms_export import export_csv
    from rlprep.classroom.report import write_report

    summary = write_report(room.db_url, room.course_id, room.course, out / "class-report.html",
                           note=f"simulated class; gradebook {describe(room.db_url)}")
    canvas = export_csv("canvas", room.db_url, room.course_id, out / "canvas.csv", room.config())
    moodle = export_csv("moodle", room.db_url, room.course_id, out / "moodle.csv", room.config())
    points = {name: lab.points for name, lab in labs.items()}
    return [*crosscheck.check_summary(summary, expected, roster, labs),
            *crosscheck.check_canvas(canvas, expected, roster, points),
            *crosscheck.check_moodle(moodle, expected, roster, sorted(labs))]

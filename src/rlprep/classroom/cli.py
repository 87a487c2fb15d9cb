"""``rlprep classroom``: a simulated class through nbgrader (``simulate``), or a lab's autograde in parallel."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from rlprep.errors import RlprepError


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{simulate,autograde}")
    sim = sub.add_parser("simulate", help="a simulated class through nbgrader's whole cycle; writes grades.csv")
    sim.add_argument("--students", type=int, default=6, help="number of simulated students (default 6)")
    sim.add_argument("--ids", default=None, help="comma-separated student ids (default s01, s02, ...)")
    sim.add_argument("--labs", default="lab01_gae,lab09_atlas",
                     help="comma-separated labs (default lab01_gae,lab09_atlas)")
    sim.add_argument("--out", type=Path, default=None,
                     help="a new or empty folder for the course, exchange, homes and grades.csv (default: a temp dir)")
    sim.add_argument("--jobs", type=int, default=1, help="autograde processes (default 1); grades do not change")
    _gradebook_options(sim)
    sim.add_argument("--temp-postgres", action="store_true",
                     help="start a throwaway PostgreSQL server (initdb + pg_ctl) for the gradebook, stopped at the end")
    grade = sub.add_parser("autograde", help="autograde one lab for every collected student, in --jobs processes")
    grade.add_argument("--course", type=Path, required=True,
                       help="the nbgrader course folder: an instructor's (e.g. autograder/, whose nbgrader_config.py "
                            "gives the source folder, course id and gradebook) or one with source/, submitted/ "
                            "and, for SQLite, gradebook.db")
    grade.add_argument("--lab", required=True, help="the lab (an assignment in the gradebook)")
    grade.add_argument("--jobs", type=int, default=1, help="processes to shard the students over (default 1)")
    _gradebook_options(grade)


def _gradebook_options(parser) -> None:
    parser.add_argument("--gradebook", default=os.environ.get("RLPREP_GRADEBOOK_URL"),
                        help="gradebook URL (default $RLPREP_GRADEBOOK_URL, else SQLite in the course folder)")


def run(args) -> int:
    if args.action == "autograde":
        return _autograde(args)
    if args.temp_postgres:
        from rlprep.classroom.postgres import TemporaryPostgres

        with TemporaryPostgres() as pg:
            args.gradebook = pg.url
            return _simulate(args)
    return _simulate(args)


def _simulate(args) -> int:
    from rlprep.classroom.simulate import simulate

    out = args.out or Path(tempfile.mkdtemp(prefix="rlprep-classroom-"))
    labs = [lab.strip() for lab in args.labs.split(",") if lab.strip()]
    ids = [s.strip() for s in args.ids.split(",")] if args.ids else None
    report = simulate(args.students, labs, out, db_url=args.gradebook or None, jobs=args.jobs, ids=ids)
    for line in report.mismatches:
        print(f"  differs: {line}")
    print(f"grades: {report.grades_csv}")
    print(report.summary())
    return 1 if report.mismatches else 0


def _autograde(args) -> int:
    from rlprep.classroom.autograde import autograde_lab
    from rlprep.classroom.cycle import Classroom
    from rlprep.classroom.gradebook import check_reachable

    course = args.course.resolve()
    config_file = course / "nbgrader_config.py"
    room = Classroom(course.parent, args.gradebook or None, course=course,
                     config_file=config_file if config_file.is_file() else None)
    if not (room.course / "submitted").is_dir():
        raise RlprepError(f"{room.course} has no submitted/ folder", "pass the course folder nbgrader collected into")
    check_reachable(room.db_url, must_exist=True)
    run = autograde_lab(room, args.lab, args.jobs)
    for refusal in run.refused:
        print(f"error: {refusal.problem}\nfix: {refusal.fix}", file=sys.stderr)
    for line in run.restored:
        print(f"warning: nbgrader lost a manual grade or comment, written back: {line}", file=sys.stderr)
    rate = 60.0 * len(run.graded) / max(run.seconds, 1e-9)
    print(f"autograde {args.lab}: {len(run.graded)} graded, {len(run.refused)} refused (kept in submitted/), "
          f"{rate:.1f} submissions/minute with {args.jobs} process(es); {run.manual_kept} manual grades and "
          f"comments kept")
    return 2 if run.refused else 0

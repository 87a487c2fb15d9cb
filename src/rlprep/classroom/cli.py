"""``rlprep classroom``: run a simulated class through nbgrader (``simulate``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{simulate}")
    sim = sub.add_parser("simulate", help="a simulated class through nbgrader's whole cycle; writes grades.csv")
    sim.add_argument("--students", type=int, default=6, help="number of simulated students (default 6)")
    sim.add_argument("--labs", default="lab01_gae,lab09_atlas",
                     help="comma-separated labs (default lab01_gae,lab09_atlas)")
    sim.add_argument("--out", type=Path, default=None,
                     help="a new or empty folder for the course, exchange, homes and grades.csv (default: a temp dir)")
    sim.add_argument("--gradebook", default=os.environ.get("RLPREP_GRADEBOOK_URL"),
                     help="gradebook URL (default $RLPREP_GRADEBOOK_URL, else SQLite in the course folder)")
    sim.add_argument("--temp-postgres", action="store_true",
                     help="start a throwaway PostgreSQL server (initdb + pg_ctl) for the gradebook, stopped at the end")


def run(args) -> int:
    from rlprep.classroom.simulate import simulate

    out = args.out or Path(tempfile.mkdtemp(prefix="rlprep-classroom-"))
    labs = [lab.strip() for lab in args.labs.split(",") if lab.strip()]
    if args.temp_postgres:
        from rlprep.classroom.postgres import TemporaryPostgres

        with TemporaryPostgres() as pg:
            report = simulate(args.students, labs, out, db_url=pg.url)
    else:
        report = simulate(args.students, labs, out, db_url=args.gradebook or None)
    for line in report.mismatches:
        print(f"  differs: {line}")
    print(f"grades: {report.grades_csv}")
    print(report.summary())
    return 1 if report.mismatches else 0

"""``rlprep classroom``: a simulated class through nbgrader (``simulate``), or a lab's autograde in parallel."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from rlprep.errors import RlprepError


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{simulate,autograde,report,export,hub}")
    sim = sub.add_parser("simulate", help="a simulated class through nbgrader's whole cycle; writes grades.csv")
    sim.add_argument("--students", type=int, default=6, help="number of simulated students (default 6)")
    sim.add_argument("--ids", default=None, help="comma-separated student ids (default s01, s02, ...)")
    sim.add_argument("--labs", default="lab01_gae,lab09_atlas",
                     help="comma-separated labs (default lab01_gae,lab09_atlas)")
    sim.add_argument("--out", type=Path, default=None,
                     help="a new or empty folder for the course, exchange, homes and grades.csv (default: a temp dir)")
    sim.add_argument("--jobs", type=int, default=1, help="autograde processes (default 1); grades do not change")
    sim.add_argument("--absent", type=int, default=0,
                     help="more students on the roster who hand in nothing (default 0)")
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
    report = sub.add_parser("report", help="after the grades: an HTML report (scores, pass rate per test and per "
                                           "property, late hand-ins, no submission)")
    _course_option(report)
    report.add_argument("--out", type=Path, default=None,
                        help="the HTML file to write (default COURSE/class-report.html; its numbers go beside it "
                             "as .json)")
    _gradebook_options(report)
    export = sub.add_parser("export", help="grades as a Canvas or Moodle gradebook-import CSV (nbgrader's export "
                                           "plugins rlprep.classroom.lms_export.CanvasExport / MoodleExport)")
    _course_option(export)
    export.add_argument("--format", required=True, choices=("canvas", "moodle"), help="the LMS's import format")
    export.add_argument("--out", type=Path, default=None, help="the CSV to write (default COURSE/<format>.csv)")
    _gradebook_options(export)
    hub = sub.add_parser("hub", help="as root: accounts, nbgrader's exchange, the course and formgrader as a hub "
                                     "service, then JupyterHub in the foreground (what make hub runs)")
    hub.add_argument("--root", type=Path, default=Path("build/hub"), help="the hub's own files (default build/hub)")
    hub.add_argument("--instructor", default="instructor", help="the instructor's account (default instructor)")
    hub.add_argument("--students", default="student1,student2,student3", help="comma-separated student accounts")
    hub.add_argument("--labs", default="lab01_gae", help="labs to release (default lab01_gae; 'all' for every lab)")
    hub.add_argument("--ip", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine only)")
    hub.add_argument("--port", type=int, default=8000, help="port (default 8000; the proxy's API uses the next one)")
    hub.add_argument("--proxy", type=Path, default=Path("build/hub-npm/node_modules/.bin/configurable-http-proxy"),
                     help="configurable-http-proxy (make hub installs it there with npm)")
    hub.add_argument("--roster", type=Path, default=None,
                     help="CSV with the header id,first_name,last_name,email: the students' names and e-mail for "
                          "the gradebook (id = account; default: empty names)")
    hub.add_argument("--setup-only", action="store_true", help="set everything up, print how to start, exit")
    hub.add_argument("--remove-accounts", action="store_true",
                     help="delete those accounts named by --instructor and --students that make hub made (and "
                          "their homes), then exit")
    _gradebook_options(hub)


def _course_option(parser) -> None:
    parser.add_argument("--course", type=Path, required=True,
                        help="the nbgrader course folder (e.g. autograder/, whose nbgrader_config.py gives the "
                             "course id and gradebook, or a simulated class's course/)")


def _gradebook_options(parser) -> None:
    parser.add_argument("--gradebook", default=os.environ.get("RLPREP_GRADEBOOK_URL"),
                        help="gradebook URL (default $RLPREP_GRADEBOOK_URL, else SQLite in the course folder)")


def run(args) -> int:
    if args.action == "autograde":
        return _autograde(args)
    if args.action in ("report", "export"):
        return _after_the_grades(args)
    if args.action == "hub":
        return _hub(args)
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
    report = simulate(args.students, labs, out, db_url=args.gradebook or None, jobs=args.jobs, ids=ids,
                      absent=args.absent)
    for line in report.mismatches:
        print(f"  differs: {line}")
    print(f"grades: {report.grades_csv}")
    print(report.summary())
    return 1 if report.mismatches else 0


def _room(course: Path, gradebook: str | None):
    """The Classroom for an instructor's course folder (its nbgrader_config.py when it has one)."""
    from rlprep.classroom.cycle import Classroom

    course = course.resolve()
    if not course.is_dir():
        raise RlprepError(f"no course folder {course}", "pass the nbgrader course folder, e.g. --course autograder")
    config_file = course / "nbgrader_config.py"
    return Classroom(course.parent, gradebook or None, course=course,
                     config_file=config_file if config_file.is_file() else None)


def _after_the_grades(args) -> int:
    from rlprep.classroom.gradebook import check_reachable

    room = _room(args.course, args.gradebook)
    where = check_reachable(room.db_url, must_exist=True)
    if args.action == "report":
        from rlprep.classroom.report import write_report

        out = args.out or room.course / "class-report.html"
        summary = write_report(room.db_url, room.course_id, room.course, out, note=f"gradebook {where}")
        print(f"report: {out} ({summary['students']} students, {summary['submissions']} hand-ins, "
              f"{len(summary['labs'])} labs); numbers: {out.with_suffix('.json')}")
        return 0
    from rlprep.classroom.lms_export import export_csv

    out = args.out or room.course / f"{args.format}.csv"
    export_csv(args.format, room.db_url, room.course_id, out, room.config())
    print(f"{args.format}: {out}")
    return 0


def _autograde(args) -> int:
    from rlprep.classroom.autograde import autograde_lab
    from rlprep.classroom.gradebook import check_reachable

    room = _room(args.course, args.gradebook)
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


def _hub(args) -> int:
    from rlprep.classroom import hub
    from rlprep.grading.release import list_labs
    from rlprep.paths import course_root

    repo = course_root()
    students = [x.strip() for x in args.students.split(",") if x.strip()]
    for name in (args.instructor, *students):
        if not hub.ACCOUNT.fullmatch(name):
            raise RlprepError(f"{name!r} is not a unix account name make hub creates",
                              "use 1-32 lowercase letters, digits, '_' or '-', starting with a letter or '_'")
    if not students or len({args.instructor, *students}) != 1 + len(students):
        raise RlprepError("--students must name at least one student, each once, none the instructor",
                          "e.g. --instructor teacher --students ann,bob")
    if args.remove_accounts:
        plan = hub.HubPlan(args.root.resolve(), repo, args.instructor, students)
        removed = hub.remove_accounts(plan, plan.users)
        kept = [u for u in plan.users if u not in removed]
        print(f"removed {', '.join(removed) or 'no account'} (and homes)"
              + (f"; left alone, not made by make hub: {', '.join(kept)}" if kept else ""))
        return 0
    known = list_labs(repo)
    labs = known if args.labs == "all" else [x.strip() for x in args.labs.split(",") if x.strip()]
    if not labs or set(labs) - set(known):
        raise RlprepError(f"unknown lab(s): {', '.join(sorted(set(labs) - set(known))) or '(none)'}",
                          f"labs: {', '.join(known)} (or all)")
    plan = hub.HubPlan(args.root.resolve(), repo, args.instructor, students, labs, args.ip, args.port,
                       gradebook=args.gradebook or None, proxy=args.proxy.resolve(),
                       roster=args.roster.resolve() if args.roster else None)
    settings = hub.setup(plan)
    argv, env = hub.hub_command(plan)
    print(f"hub: http://{args.ip}:{args.port}/ (log in as {args.instructor} or {', '.join(students)}; passwords in "
          f"{plan.state / 'credentials.txt'}); formgrader: /services/rlprep/formgrader; course: {plan.course_home}; "
          f"grading sandbox as {args.instructor}: {settings['sandbox']}")
    if args.setup_only:
        print("start it with: RLPREP_HUB_SETTINGS=" + env["RLPREP_HUB_SETTINGS"] + " " + " ".join(argv))
        return 0
    sys.stdout.flush()
    os.chdir(plan.root)
    os.execvpe(argv[0], argv, env)

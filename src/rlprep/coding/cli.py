"""``rlprep coding`` (list, grade a file, release as an nbgrader assignment) and the ``rlprep mock --coding`` round."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rlprep.errors import RlprepError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("The coding bank: timed hand-coding problems graded by hidden tests in the labs' sandbox. "
                          "Practise them with 'rlprep mock --coding'.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="{list,grade,release}")
    listing = sub.add_parser("list", help="list the problems (slug, topic, target minutes, library, your status)")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    grade = sub.add_parser("grade", help="grade a file with a problem's hidden tests, in the sandbox")
    grade.add_argument("file", type=Path, help="your solution file (the starter file, edited)")
    grade.add_argument("--problem", required=True, metavar="SLUG", help="the problem (rlprep coding list)")
    grade.add_argument("--retest", metavar="NAME", help="grade against a retest variant (day2, day7)")
    grade.add_argument("--json", action="store_true", help="print the result as JSON")
    release = sub.add_parser("release", help="write a problem as an nbgrader source notebook for a class")
    release.add_argument("slug", help="the problem (rlprep coding list)")
    release.add_argument("--out", type=Path, required=True, metavar="DIR",
                         help="where to write <slug>/<slug>.ipynb (an nbgrader course's source/ folder)")


def listing(with_status: bool = True) -> list[dict]:
    from rlprep.coding.bank import load_problems

    bank = load_problems()
    status, due = {}, {}
    if with_status:
        from rlprep.coding.attempts import CodingLog

        with CodingLog() as log:
            status = log.status()
            for row in log.retests():
                due.setdefault(row["slug"], []).append(
                    {"retest": row["retest"], "due": time.strftime("%Y-%m-%d", time.localtime(row["due_at"]))})
    return [{"slug": p.slug, "title": {"en": p.title.en, "zh": p.title.zh}, "topic": p.topic, "minutes": p.minutes,
             "library": p.library, "status": status.get(p.slug, "new"), "retests": due.get(p.slug, [])}
            for p in bank.values()]


def print_listing(as_json: bool) -> int:
    rows = listing()
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for r in rows:
        due = " ".join(f"{d['retest']}@{d['due']}" for d in r["retests"])
        print(f"{r['slug']:<26} {r['topic']:<12} {r['minutes']:>2} min  {r['status']:<7} {r['title']['en']}"
              + (f"  [retests: {due}]" if due else ""))
    print(f"\n{len(rows)} problems. Start one with: rlprep mock --coding (or --coding --problem SLUG)")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return print_listing(args.json)
    if args.action == "release":
        from rlprep.coding.bank import get_problem
        from rlprep.coding.release import write_source_notebook

        path = write_source_notebook(get_problem(args.slug), args.out)
        print(f"wrote {path}: put its folder under your nbgrader course's source/, then "
              f"'nbgrader generate_assignment {args.slug}' (rlprep's grading config: autograder/nbgrader_config.py)")
        return 0
    from rlprep.coding.bank import get_problem
    from rlprep.coding.grade import grade_source

    problem = get_problem(args.problem)
    problem.sizes_for(args.retest)  # an unknown retest is an error before anything runs
    if not args.file.is_file():
        raise RlprepError(f"no file {args.file}", "pass the path of your solution file")
    report = grade_source(problem, args.file.read_text(encoding="utf-8"), args.retest)
    print(json.dumps(report.as_json(), ensure_ascii=False) if args.json else report.text())
    return 0 if report.full else 1


# -- rlprep mock --coding ---------------------------------------------------------------------------------------------
def coding_folder(given: Path | None) -> Path:
    from rlprep.paths import data_dir, ensure_dir

    return ensure_dir(Path(given) if given else data_dir() / "coding", "--coding-dir" if given else "RLPREP_HOME")


def run_mock_round(*, slug: str | None = None, retest: str | None = None, minutes: float | None = None,
                   folder: Path | None = None, lang: str = "both", seed: int | None = None,
                   max_minutes: int | None = None, stream=None) -> int:
    """Draw a problem (a due retest, then one never tried, then one not solved) and run its round."""
    from rlprep.coding.attempts import CodingLog
    from rlprep.coding.bank import get_problem, load_problems
    from rlprep.coding.round import CodingRound, run_round

    with CodingLog() as log:
        if slug:
            problem = get_problem(slug)
            problem.sizes_for(retest)
        else:
            drawn = log.next_problem(load_problems(), seed=seed, max_minutes=max_minutes)
            if drawn is None:
                print("every problem in the coding bank is solved and no retest is due: pick one with "
                      "--coding --problem SLUG (rlprep mock --coding --list)")
                return 0
            problem, retest = drawn
        rnd = CodingRound(problem, retest, log, coding_folder(folder), minutes=minutes)
        if stream is None:
            return run_round(rnd, lang=lang)
        return run_round(rnd, stream=stream, interactive=stream is sys.stdin and sys.stdin.isatty(), lang=lang)


def mock_coding(args: argparse.Namespace) -> int:
    """``rlprep mock --coding [--list [--json]] [--problem SLUG [--retest NAME]] [--minutes M] [--coding-dir DIR]``."""
    if args.list:
        return print_listing(args.json)
    if args.retest and not args.problem:
        raise RlprepError("--retest needs --problem", "name the problem: --coding --problem SLUG --retest day2")
    stream = None
    if args.answers is not None:
        if not args.answers.is_file():
            raise RlprepError(f"no answers file {args.answers}", "pass an existing file to --answers")
        stream = args.answers.open(encoding="utf-8")
    try:
        return run_mock_round(slug=args.problem, retest=args.retest, minutes=args.minutes, folder=args.coding_dir,
                              lang=args.lang, seed=args.seed, stream=stream)
    finally:
        if stream is not None:
            stream.close()


THIRD_ROUND_CODING_MINUTES = 20
"""The third-round preset's coding round draws a problem with a target of at most this many minutes."""


def third_round(args: argparse.Namespace, run_questions) -> int:
    """The ``third-round`` preset: its questions (``run_questions(args)``), then a coding round on the same input
    (the keyboard, or a pipe that goes on with the round's commands). With ``--answers FILE`` the round is skipped
    (run it with ``rlprep mock --coding``)."""
    code = run_questions(args)
    if code != 0 or args.no_coding:
        return code
    if args.answers is not None:
        print("(the third round's coding round reads the keyboard or a pipe; with --answers it is skipped: "
              "rlprep mock --coding runs one)")
        return code
    print("\n── The third round's coding round ──")
    return run_mock_round(minutes=None, folder=args.coding_dir, lang=args.lang, seed=args.seed,
                          max_minutes=THIRD_ROUND_CODING_MINUTES, stream=sys.stdin)

"""Every number of the class report and both LMS exports, checked against a simulated class's expected grades.

The expected side never reads the gradebook or an autograded notebook: it is ``expected.json``, written by
``rlprep classroom simulate`` from :func:`rlprep.classroom.students.expected_tests` (each lab's tests, hidden parts
included, run in-process on each student's functions), the plans (who handed in what, who was late) and the roster
(who handed in nothing). The report side is :func:`rlprep.classroom.report.summarise` of what nbgrader's sandboxed
autograde left in the gradebook and in ``autograded/``. What is compared:

- per lab: hand-ins, every student's score, mean, median, min, max, full marks, late count, who has no submission;
- per test cell: hand-ins with full points and with fewer, none left ungraded, and how many stopped on something
  other than a property (their error types differ on purpose: in the sandbox a syntax error is reported as such, in
  process as a missing name, so only the total is compared);
- per property: passed, failed, unreached, counted by the one rule (:func:`rlprep.classroom.results.count_cells`)
  from the in-process failure messages;
- the late list (student, lab, raw score, score);
- the Canvas and Moodle files: their header, the points row (Canvas), one row per roster student, every score,
  blank where nothing was handed in.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from rlprep.classroom.lms_export import CANVAS_ID_COLUMNS, MOODLE_ID_COLUMNS, cell_text
from rlprep.classroom.results import Lab, Submission, count_cells


def _expected_submission(entry: dict, lab: Lab) -> Submission:
    """A submission built from an expected.json entry: auto scores and stops from the in-process messages."""
    sub = Submission(entry["student"], entry["lab"], None, entry["raw"], entry["raw"] - entry["score"],
                     1.0 if entry["kind"] == "late" else 0.0)
    for gid, (points, _, message) in entry["tests"].items():
        sub.tests[gid] = points
        if message:
            ename, _, evalue = message.partition(": ")
            sub.stopped[gid] = (ename, evalue)
    return sub


def check_summary(summary: dict, expected: list[dict], roster: list[str], labs: dict[str, Lab]) -> list[str]:
    """Every difference between the report's numbers and the expected class, as lines (empty when none)."""
    wrong = []

    def same(what, got, want):
        if got != want:
            wrong.append(f"{what}: report {got!r}, expected {want!r}")

    handed = [e for e in expected if e["kind"] != "absent"]
    same("roster size", summary["students"], len(roster))
    same("hand-ins", summary["submissions"], len(handed))
    same("labs", [lab["lab"] for lab in summary["labs"]], sorted(labs))
    for lab in summary["labs"]:
        name = lab["lab"]
        mine = [e for e in handed if e["lab"] == name]
        scores = {e["student"]: e["score"] for e in mine}
        values = list(scores.values())
        same(f"{name} hand-ins", lab["submitted"], len(mine))
        same(f"{name} scores", lab["scores"], scores)
        if values:
            same(f"{name} mean", lab["mean"], round(statistics.fmean(values), 4))
            same(f"{name} median", lab["median"], statistics.median(values))
            same(f"{name} min/max", (lab["min"], lab["max"]), (min(values), max(values)))
        same(f"{name} full marks", lab["full_marks"], sum(1 for e in mine if e["score"] >= e["max"]))
        same(f"{name} late", lab["late"], sum(1 for e in mine if e["kind"] == "late"))
        same(f"{name} no submission", sorted(m["student"] for m in lab["missing"]),
             sorted(set(roster) - set(scores)))
        counts = count_cells(labs[name], [_expected_submission(e, labs[name]) for e in mine])
        same(f"{name} test cells", [c["grade_id"] for c in lab["cells"]], [c.test.grade_id for c in counts])
        for cell, want in zip(lab["cells"], counts):
            gid = f"{name}/{cell['grade_id']}"
            same(f"{gid} full/fewer/ungraded", (cell["full"], cell["partial"], cell["ungraded"]),
                 (want.full, want.partial, want.ungraded))
            same(f"{gid} stopped on an error", sum(cell["errors"].values()), sum(want.errors.values()))
            same(f"{gid} properties", [(p["text"], p["passed"], p["failed"], p["unreached"]) for p in cell["properties"]],
                 [(p.prop.text, p.passed, p.failed, p.unreached) for p in want.properties])
    same("late hand-ins", sorted((x["student"], x["lab"], x["raw"], x["score"]) for x in summary["late"]),
         sorted((e["student"], e["lab"], e["raw"], e["score"]) for e in handed if e["kind"] == "late"))
    return wrong


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _expected_cells(expected: list[dict], labs: list[str]) -> dict[tuple[str, str], str]:
    """{(the id as the file writes it, lab): the score cell}: blank where nothing was handed in."""
    return {(cell_text(e["student"]), e["lab"]): ("" if e["kind"] == "absent" else f"{e['score']:g}")
            for e in expected if e["lab"] in labs}


def check_canvas(path: Path, expected: list[dict], roster: list[str], points: dict[str, float]) -> list[str]:
    """The Canvas file: header, Points Possible, one row per roster student keyed by SIS Login ID, every score."""
    rows, labs, wrong = _read(path), sorted(points), []
    if rows[0] != [*CANVAS_ID_COLUMNS, *labs]:
        return [f"canvas header {rows[0]}"]
    if rows[1] != ["Points Possible", "", "", "", "", *(f"{points[lab]:g}" for lab in labs)]:
        wrong.append(f"canvas points row {rows[1]}")
    return wrong + _check_students("canvas", rows[2:], 3, labs, roster, expected)


def check_moodle(path: Path, expected: list[dict], roster: list[str], labs: list[str]) -> list[str]:
    """The Moodle file: header, one row per roster student keyed by Username, every score."""
    rows, labs = _read(path), sorted(labs)
    if rows[0] != [*MOODLE_ID_COLUMNS, *labs]:
        return [f"moodle header {rows[0]}"]
    return _check_students("moodle", rows[1:], 2, labs, roster, expected)


def _check_students(name: str, body: list[list[str]], id_column: int, labs: list[str], roster: list[str],
                    expected: list[dict]) -> list[str]:
    """What is wrong in an export's student rows: one per roster student (keyed by ``id_column``), and each lab's
    score (the columns after the five identity columns, in ``labs`` order) as the simulated class expects."""
    got = {(row[id_column], lab): row[5 + k] for row in body for k, lab in enumerate(labs)}
    students, wrong = sorted(row[id_column] for row in body), []
    if students != sorted(map(cell_text, roster)):
        wrong.append(f"{name} students {students} != roster {sorted(roster)}")
    want = _expected_cells(expected, labs)
    return wrong + [f"{name} {k}: {got.get(k)!r}, expected {v!r}" for k, v in sorted(want.items()) if got.get(k) != v]

"""What every simulated class must satisfy, whatever its gradebook: shared by the SQLite and PostgreSQL tests."""

from __future__ import annotations

import html
import json
from pathlib import Path

import nbformat

from rlprep.grading.executor import hidden_code as hidden_block
from rlprep.classroom.cycle import gradebook_grades
from rlprep.classroom.simulate import read_grades
from rlprep.classroom.students import SABOTAGE_MARK


def check_class(report, out: Path, db_url: str) -> None:
    """grades.csv holds every (student, lab) once, with the expected grade; the kinds' anchors hold too."""
    grades = read_grades(out / "grades.csv")
    expected = json.loads((out / "expected.json").read_text())
    assert set(grades) == {(e["student"], e["lab"]) for e in expected}  # the roster's absent students too
    assert report.graded == sum(e["kind"] != "absent" for e in expected) and report.mismatches == []
    for e in expected:
        row = grades[(e["student"], e["lab"])]
        raw, score, top = float(row["raw_score"]), float(row["score"]), float(row["max_score"])
        assert (raw, score, top) == (e["raw"], e["score"], e["max"]), (e, row)
        # anchors that do not depend on the in-process oracle
        if e["kind"] in ("reference", "deleted_test"):
            assert score == top > 0, e
        elif e["kind"] == "late":
            assert raw == top > 0 and score == 0 and row["timestamp"] > row["duedate"], (e, row)
        else:  # bug, untouched, syntax_error, sabotage
            assert score < top, e
        if e["kind"] in ("untouched", "sabotage", "absent"):
            assert score == 0, e
        if e["kind"] == "absent":
            assert row["timestamp"] == "", (e, row)  # nbgrader's CSV: on the roster, nothing handed in
    # the CSV says what the gradebook says (which holds no submission for an absent student)
    columns = ("raw_score", "late_submission_penalty", "max_score")
    assert {k: tuple(float(v[c]) for c in columns) for k, v in grades.items() if v["timestamp"]} == \
        gradebook_grades(db_url, report.labs)
    if report.sandbox == "bubblewrap":
        assert not (out / "course" / SABOTAGE_MARK).exists(), "the sabotage submission planted a file"


def check_feedback(out: Path, lab: str) -> None:
    """A bug's feedback names the failed property and shows none of the hidden tests."""
    expected = json.loads((out / "expected.json").read_text())
    source = nbformat.read(out / "course" / "source" / lab / f"{lab}.ipynb", as_version=4)
    hidden = [line.strip() for c in source.cells for line in hidden_block(c.source).splitlines()
              if len(line.strip()) > 25]
    assert hidden, "the lab has no hidden tests to look for"
    bugs = [e for e in expected if e["lab"] == lab and e["kind"] == "bug"]
    assert bugs
    for e in bugs:
        page = html.unescape((out / "course" / "feedback" / e["student"] / lab / f"{lab}.html").read_text())
        assert "PropertyFailed" in page, e
        assert "BEGIN HIDDEN TESTS" not in page
        leaked = [line for line in hidden if line in page]
        assert not leaked, leaked[:3]

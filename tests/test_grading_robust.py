"""Hand-ins that broke the grader instead of getting a verdict: an answer cell that raises, deleted cells, and
notebook JSON nested too deep; through `rlprep grade` and through `rlprep classroom autograde`."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from grading_helpers import ROOT, reference_answer, variant
from rlprep.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:Object of type")  # SQLAlchemy session notes inside nbgrader

LAB09 = ROOT / "solutions" / "lab09_atlas" / "lab09_atlas.ipynb"


def grade_json(path, capsys):
    rc = main(["grade", str(path), "--json"])
    captured = capsys.readouterr()
    return rc, json.loads(captured.out) if rc != 2 else captured.err


def test_an_answer_cell_that_raises_reports_its_own_exception(tmp_path, capsys, rlprep_home):
    # The cell stops at its first line, so compute_gae is never defined: every test must name the cell's
    # PermissionError (what the learner can fix), not "compute_gae is not defined".
    answer = 'raise PermissionError("[Errno 13] Permission denied: \'/tmp/tmpab12cd\'")\n' + reference_answer()
    path = tmp_path / "lab01_gae.ipynb"
    nbformat.write(variant(answer), path)
    rc, report = grade_json(path, capsys)
    assert rc == 1 and report["score"] == 0
    for cell in report["cells"]:
        assert cell["message"].startswith("PermissionError: "), cell
        assert "answer cell that defines compute_gae stopped there" in cell["message"], cell
        assert "run its answer cell" not in cell["message"], cell
    # a visible part quotes the cell's own message; a hidden part its exception type only (test_attack_reports)
    by_hand = next(c for c in report["cells"] if c["grade_id"] == "test_gae_by_hand")
    assert by_hand["message"].startswith("PermissionError: [Errno 13] Permission denied: '/tmp/tmpab12cd'"), by_hand


def _lab09_without(*grade_ids: str):
    nb = nbformat.read(LAB09, as_version=4)
    nb.cells = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") not in grade_ids]
    return nb


def test_a_deleted_answer_cell_and_test_cell_get_a_verdict(tmp_path, rlprep_home):
    # simpo_loss's answer cell and the test cell right after it (test_rloo_by_hand, of another function): nbgrader
    # 0.9.6 raised KeyError while restoring the test cell. Now: the restored test runs and passes, simpo_loss's
    # tests score 0, everything else is graded as usual.
    from rlprep.grading.grade import format_report, grade_notebook

    path = tmp_path / "lab09_atlas.ipynb"
    nbformat.write(_lab09_without("simpo_loss", "test_rloo_by_hand"), path)
    report = grade_notebook(path)
    cells = {c.grade_id: c for c in report.cells}
    assert len(cells) == 12 and report.max_score == 24, report
    for gid in ("test_simpo_by_hand", "test_simpo_gradient"):
        assert cells[gid].points == 0 and "simpo_loss" in cells[gid].message, cells[gid]
    assert cells["test_rloo_by_hand"].passed, cells["test_rloo_by_hand"]
    assert "was deleted in your notebook and has been restored" in cells["test_rloo_by_hand"].message
    assert report.score == 20 and all(c.passed for g, c in cells.items() if "simpo" not in g), report
    text = format_report(report)
    assert "missing: your notebook has no answer cell simpo_loss" in text and "test_rloo_by_hand (deleted" in text


def _nested(depth: int) -> str:
    """A notebook whose first cell's metadata holds a list nested ``depth`` levels deep."""
    cell = {"cell_type": "markdown", "id": "deep", "metadata": {"x": "<DEEP>"}, "source": "hi"}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb).replace('"<DEEP>"', "[" * depth + "]" * depth)


@pytest.mark.parametrize("depth", [200_000, 900])
def test_json_nested_too_deep_is_refused(tmp_path, capsys, depth):
    path = tmp_path / "lab01_gae.ipynb"
    path.write_text(_nested(depth))
    rc, err = grade_json(path, capsys)
    assert rc == 2 and "error: " in err and "fix: " in err and "Traceback" not in err, err
    assert "levels deep" in err, err


def test_classroom_autograde_gives_the_same_verdicts(tmp_path, capsys):
    """Deleted cells are graded and a notebook nested too deep is refused with error:/fix:, in the class path."""
    from rlprep.grading.grade import course_template

    template = course_template("lab01_gae", ROOT / "solutions")
    course = tmp_path / "run" / "course"
    course.mkdir(parents=True)
    shutil.copy(template / "gradebook.db", course / "gradebook.db")
    shutil.copytree(template / "source", course / "source")
    deleted = variant(reference_answer())
    deleted.cells = [c for c in deleted.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                     not in ("compute_gae", "test_gae_by_hand")]
    for student, text in (("deleted", nbformat.writes(deleted)), ("deep", _nested(200_000)),
                          ("deeper", _nested(900))):
        folder = course / "submitted" / student / "lab01_gae"
        folder.mkdir(parents=True)
        (folder / "lab01_gae.ipynb").write_text(text)
    rc = main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae"])
    captured = capsys.readouterr()
    assert rc == 2, captured  # two hand-ins refused
    assert "1 graded, 2 refused" in captured.out, captured.out
    assert captured.err.count("error: ") == 2 and captured.err.count("fix: ") == 2, captured.err
    assert "deep: " in captured.err and "deeper: " in captured.err and "Traceback" not in captured.err
    assert (course / "submitted" / "deep" / "lab01_gae" / "lab01_gae.ipynb").read_text() == _nested(200_000)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "rlprep") as gb:
        sub = gb.find_submission("lab01_gae", "deleted")
        assert sub.score == 0 and sub.max_score == 10

"""`rlprep grade` end to end through nbgrader (one run per notebook variant), plus bad input and feedback."""

from __future__ import annotations

import json
import shutil
import sys
import types

import nbformat
import pytest

from grading_helpers import RELEASE, SOLUTION, reference_answer, release, variant
from rlprep.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:Object of type")  # SQLAlchemy session notes inside nbgrader


def grade_json(path, capsys):
    rc = main(["grade", str(path), "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_reference_gets_full_marks_and_is_recorded(tmp_path, capsys, monkeypatch):
    recorded = []
    if "rlprep.interview.history" not in sys.modules:
        monkeypatch.setitem(sys.modules, "rlprep.interview", types.ModuleType("rlprep.interview"))
    fake = types.ModuleType("rlprep.interview.history")
    fake.record_lab_grade = lambda lab, score, max_score, **_: recorded.append((lab, score, max_score))
    monkeypatch.setitem(sys.modules, "rlprep.interview.history", fake)
    # the learner's file: the release with the reference answer pasted in
    path = tmp_path / "lab01_gae.ipynb"
    nbformat.write(variant(reference_answer(), drop_demo=False), path)
    rc, report = grade_json(path, capsys)
    assert rc == 0
    assert set(report) == {"lab", "score", "max_score", "sandbox", "cells"}
    from rlprep.grading.sandbox import probe

    assert report["sandbox"] == probe() and (report["sandbox"] == "bubblewrap" or report["sandbox"].startswith("none: "))
    assert report["lab"] == "lab01_gae" and report["score"] == report["max_score"] == 10
    assert all(set(c) == {"grade_id", "points", "max_points", "passed", "message"} for c in report["cells"])
    assert all(c["passed"] and c["message"] == "" for c in report["cells"])
    assert recorded == [("lab01_gae", 10.0, 10.0)]


def test_untouched_release_scores_zero_in_every_cell(tmp_path, capsys):
    path = tmp_path / "lab01_gae.ipynb"
    shutil.copy(RELEASE, path)
    rc, report = grade_json(path, capsys)
    assert rc == 1 and report["score"] == 0 and len(report["cells"]) == 6
    assert all(c["points"] == 0 and "NotImplementedError" in c["message"] for c in report["cells"])


def test_report_says_what_to_do_next():
    from rlprep.grading.grade import CellGrade, GradeReport, format_report

    unfilled = GradeReport("lab01_gae", 0, 2, [CellGrade("t", 0, 2, False, "LearnerError: compute_gae raised NotImplementedError")])
    assert "still raises NotImplementedError" in format_report(unfilled) and "Ctrl+S" in format_report(unfilled)
    wrong = GradeReport("lab01_gae", 1, 3, [CellGrade("a", 1, 1, True, ""), CellGrade("b", 0, 2, False, "PropertyFailed: x")])
    assert "next: fix these in order" in format_report(wrong) and "  1. x (b)" in format_report(wrong)
    full = GradeReport("lab01_gae", 3, 3, [CellGrade("a", 3, 3, True, "")])
    assert "next:" not in format_report(full)


def test_deleted_and_edited_test_cells_are_restored_and_reported(tmp_path, capsys):
    nb = variant(reference_answer())
    nb.cells = [c for c in nb.cells if c.id not in ("test_gae_episode_end", "setup")]  # deleted
    edited = next(c for c in nb.cells if c.id == "test_gae_by_hand")
    edited.source = "pass  # nothing to see"
    path = tmp_path / "lab01_gae.ipynb"
    nbformat.write(nb, path)
    rc = main(["grade", str(path)])
    text = capsys.readouterr().out
    assert rc == 0, text  # restored tests run and the correct answer passes them
    assert "test_gae_episode_end (deleted, restored)" in text and "setup (deleted, restored)" in text and "test_gae_by_hand (edited, restored)" in text
    assert "2/2  this test cell was edited in your notebook and has been restored." in text


@pytest.mark.parametrize("content,name,problem", [
    ("just text", "lab01_gae.txt", "is not a notebook"),
    ("{not json", "lab01_gae.ipynb", "is not valid notebook JSON"),
    ('{"a": 1}', "lab01_gae.ipynb", "not a Jupyter notebook"),
])
def test_bad_input_exits_2(tmp_path, capsys, content, name, problem):
    path = tmp_path / name
    path.write_text(content)
    assert main(["grade", str(path)]) == 2
    err = capsys.readouterr().err
    assert problem in err and "fix:" in err


def test_folder_or_bare_name_points_at_the_notebook(tmp_path, capsys, monkeypatch):
    # The two paths a newcomer typed in the README walkthrough: the lab folder, and the bare file name
    # (as the lab shows it) from the repository root.
    folder = tmp_path / "lab01_gae"
    folder.mkdir()
    (folder / "lab01_gae.ipynb").write_text("{}")
    assert main(["grade", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a notebook" in err and f"rlprep grade {folder / 'lab01_gae.ipynb'}" in err
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("rlprep.paths.repo_root", lambda: tmp_path)
    (tmp_path / "labs").mkdir()
    folder.rename(tmp_path / "labs" / "lab01_gae")
    assert main(["grade", "lab01_gae.ipynb"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "rlprep grade labs/lab01_gae/lab01_gae.ipynb" in err
    assert main(["grade", "nothing_here.ipynb"]) == 2
    assert "e.g. labs/lab01_gae/lab01_gae.ipynb" in capsys.readouterr().err


def test_unknown_lab_exits_2(tmp_path, capsys):
    nb = release()
    nb.metadata.pop("rlprep", None)
    path = tmp_path / "my_homework.ipynb"
    nbformat.write(nb, path)
    assert main(["grade", str(path)]) == 2
    assert "cannot tell which lab" in capsys.readouterr().err


def test_feedback_holds_no_hidden_tests(tmp_path):
    from catalog.lab01_gae import BUGS  # noqa: F401 - the same kind of wrong answer a learner submits
    from rlprep.grading.templating import lab_values
    from rlprep.grading.grade import course_template
    from rlprep.grading.release import api_for

    template = course_template("lab01_gae", SOLUTION.parents[1])
    course = tmp_path / "course"
    shutil.copytree(template, course)
    sub = course / "submitted" / "alice" / "lab01_gae"
    sub.mkdir(parents=True)
    wrong = reference_answer().replace("nextnonterminal * lastgaelam", "lastgaelam")  # no reset at episode end
    nbformat.write(variant(wrong), sub / "lab01_gae.ipynb")
    api = api_for(course, call_timeout=10, deadline=60)
    assert api.autograde("lab01_gae", "alice")["success"]
    assert api.generate_feedback("lab01_gae", "alice")["success"]
    html = (course / "feedback" / "alice" / "lab01_gae" / "lab01_gae.html").read_text()
    # the property is named: the visible worked time-limit example of test_gae_episode_end fails first
    assert "nothing may be carried across an episode end" in html
    assert "HIDDEN" not in html
    # Each hidden case's values that only its hidden test holds: its expected advantage, and its last reward unless
    # the learner's own notebook shows that number too (float32's rollout is np.ones(7): 1.0 is on every page).
    # They are in the autograded notebook (the hidden tests ran there), so a page that carried those tests fails.
    visible = RELEASE.read_text()
    graded = (course / "autograded" / "alice" / "lab01_gae" / "lab01_gae.ipynb").read_text()
    for key, case in lab_values(SOLUTION.parent).items():
        if key not in ("terminal", "results"):
            held = [repr(float(case[name][i])) for name, i in (("advantages", 0), ("rewards", -1))]
            secret = [value for value in held if value not in visible]
            assert secret and all(value in graded for value in secret), (key, secret)
            assert not any(value in html for value in secret), (key, secret)


def test_grade_here_finds_the_notebook_warns_when_unsaved_and_prints_the_table(tmp_path, monkeypatch, capsys,
                                                                            rlprep_home):
    from rlprep.grading import grade_here
    from rlprep.grading.selfgrade import unsaved_answers

    path = tmp_path / "lab01_gae.ipynb"
    shutil.copy(RELEASE, path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "labs/lab01_gae/lab01_gae.ipynb")
    saved = json.loads(path.read_text())
    answer = next(c for c in saved["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    ran = "".join(answer["source"]).replace("raise NotImplementedError()", "return rewards, rewards")
    assert unsaved_answers(saved, ["import numpy as np", ran]) == ["compute_gae"]  # edited, not saved
    assert unsaved_answers(saved, ["import numpy as np", "".join(answer["source"])]) == []
    assert unsaved_answers(saved, ["x = 1"]) == []  # never run here: nothing to compare

    grade_here()
    out = capsys.readouterr().out
    assert "lab01_gae: 0 / 10 points" in out and "NotImplementedError" in out


def test_a_lab_path_resolves_from_any_folder_of_the_repository(monkeypatch):
    from rlprep.grading.grade import resolve_submission

    monkeypatch.chdir(RELEASE.parents[2] / "notebooks")  # where JupyterLab's terminal may open
    assert resolve_submission("labs/lab01_gae/lab01_gae.ipynb") == RELEASE
    assert str(resolve_submission("no/such.ipynb")) == "no/such.ipynb"  # left for the usual error


def test_a_syntax_error_in_the_answer_cell_is_reported_with_its_line(tmp_path, capsys, rlprep_home):
    """The commonest beginner mistake: the answer cell does not compile, so compute_gae never exists. The table,
    --json and grade_here() name the SyntaxError, the cell and the line, not "compute_gae is not defined"."""
    from rlprep.grading import grade_here

    broken = reference_answer().replace("lastgaelam = delta", "lastgaelam = = delta", 1)
    lineno = next(i for i, line in enumerate(broken.strip("\n").splitlines(), 1) if "= = delta" in line)
    path = tmp_path / "lab01_gae.ipynb"
    nbformat.write(variant(broken), path)
    rc, report = grade_json(path, capsys)
    assert rc == 1 and report["score"] == 0
    for cell in report["cells"]:
        assert cell["message"].startswith(f"SyntaxError: invalid syntax, line {lineno} of the answer cell that "
                                          "defines compute_gae: lastgaelam = = delta"), cell
        assert "run its answer cell" not in cell["message"]
    grade_here(path)
    out = capsys.readouterr().out
    assert f"FAIL  test_gae_by_hand        0/2  SyntaxError: invalid syntax, line {lineno} of the answer cell" in out
    assert "  1. an answer cell does not compile" in out


def test_compile_error_message_quotes_the_line_and_a_later_clean_cell_clears_it():
    from rlprep.grading.executor import IsolatedRunner, compile_error_message
    from rlprep.grading.kernel import CellRun

    source = "def f(x):\nreturn x"
    msg = compile_error_message(source, "f", "expected an indented block after function definition on line 1 "
                                              "(2572383514.py, line 2)")
    assert msg == ("expected an indented block after function definition on line 1, line 2 of the answer cell that "
                   "defines f: return x (the cell never ran, so f is not defined)")
    assert "odd message" in compile_error_message(source, "f", "odd message")
    runner = IsolatedRunner(["f"], {})
    cell = nbformat.v4.new_code_cell(source)
    runner._note_compile_error(cell, CellRun(status="error", ename="IndentationError", evalue="bad (x.py, line 2)"))
    assert runner.uncompiled["f"][0] == "IndentationError"
    runner._note_compile_error(nbformat.v4.new_code_cell("def f(x):\n    return x"), CellRun())
    assert runner.uncompiled == {}

"""A coding problem released as an nbgrader assignment (``rlprep coding release``) grades through the labs' path:
``grading.release.build_course`` (generate_assignment) releases the starter with no solution and no hidden test,
and nbgrader's autograde with rlprep's configuration (IsolatedExecute, the sandboxed kernel) gives the reference
full marks (a catalogued bug's lower grade through the same runner is in test_coding_sandbox.py)."""

from __future__ import annotations

import copy
import logging
import warnings

import nbformat
import pytest

from interview_support import run_cli
from rlprep.coding.bank import load_problems
from rlprep.coding.release import answer_source, released_answer_matches_starter, write_source_notebook
from rlprep.coding.sources import reference_source
from rlprep.grading import sandbox
from rlprep.grading.release import api_for, build_course


def _answer_cell(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))


def test_every_problem_has_an_nbgrader_answer_cell():
    for problem in load_problems().values():
        compile(answer_source(problem), problem.slug, "exec")  # the solution form of every starter


@pytest.mark.skipif(sandbox.probe() != "bubblewrap", reason=f"sandbox: {sandbox.probe()}")
def test_released_problem_grades_through_nbgrader(tmp_path):
    from nbgrader.api import Gradebook

    problem = load_problems()["softmax"]
    cli = run_cli(["coding", "release", "softmax", "--out", str(tmp_path / "src")], tmp_path / "home")
    assert cli.returncode == 0, cli.stderr
    source = tmp_path / "src" / "softmax" / "softmax.ipynb"
    assert source.read_bytes() == write_source_notebook(problem, tmp_path / "again").read_bytes()
    course = tmp_path / "course"
    course.mkdir()
    released = nbformat.read(build_course("softmax", source, course), as_version=4)
    assert released_answer_matches_starter(problem, _answer_cell(released).source)
    assert not any("run_property" in c.source or "BEGIN HIDDEN" in c.source for c in released.cells)
    reference = reference_source(problem)  # a bug's lower grade through the same runner: test_coding_sandbox.py
    for student, code in (("ref", reference),):
        submission = copy.deepcopy(released)
        _answer_cell(submission).source = code
        folder = course / "submitted" / student / "softmax"
        folder.mkdir(parents=True)
        nbformat.write(submission, folder / "softmax.ipynb")
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="nbgrader")  # SQLAlchemy session warnings inside nbgrader
    api = api_for(course, cell_timeout=30, call_timeout=10, deadline=120)
    assert api.autograde("softmax", "ref", force=True, create=True)["success"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission("softmax", "ref")
        assert (submission.score, submission.max_score) == (6.0, 6.0)
    graded = nbformat.read(course / "autograded" / "ref" / "softmax" / "softmax.ipynb", as_version=4)
    assert not [o for c in graded.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]

"""Attacks on the nbgrader metadata of a hand-in: forged or broken cell metadata, and invalid cell ids, made
nbgrader 0.9.6 refuse the notebook ("nbgrader could not grade"), so the hand-in got no verdict. Each tampered cell
must be put back from the gradebook (its flags, points and id), or lose its claim to be graded; the rest is graded.

The fast tests run nbgrader's sanitize step (the course's ``Autograde.sanitize_preprocessors``, with nbconvert's
validation after each) on one tampering at a time; one hand-in with all of them goes through ``rlprep grade``.
"""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from harness import SRC, grade

from grading_helpers import reference_answer, release, variant

ROOT = SRC.parent
LAB = "lab01_gae"
TESTS = ("test_gae_by_hand", "test_gae_shape_dtype", "test_gae_episode_end", "test_gae_bootstrap",
         "test_gae_lambda_limits", "test_gae_gamma_lambda")


def nbg(cell) -> dict:
    return cell["metadata"]["nbgrader"]


def by_id(nb: dict, grade_id: str) -> dict:
    return next(c for c in nb["cells"] if isinstance(c["metadata"].get("nbgrader"), dict)
                and c["metadata"]["nbgrader"].get("grade_id") == grade_id)


def _forged_cell(nb):
    nb["cells"].insert(3, {"cell_type": "code", "id": "forged", "execution_count": None, "outputs": [],
                           "source": "pass", "metadata": {"nbgrader": {
                               "grade": True, "grade_id": "forged", "points": 50, "solution": False, "locked": True,
                               "schema_version": 3}}})


def _copied_test_cell(nb):
    nb["cells"].insert(2, copy.deepcopy(by_id(nb, "test_gae_by_hand")))


# name: what it does to the hand-in's JSON. nbgrader 0.9.6 refused each hand-in but three: a duplicate or missing cell
# id (nbformat renames or adds it, with a warning) and raised points (OverwriteCells puts the gradebook's back); those
# stay here as the same check. A cell whose metadata is not a dict is not a notebook nbformat can read: `rlprep grade`
# says error:/fix: (exit 2), as for any unreadable notebook.
TAMPERINGS = {
    "invalid-cell-id": lambda nb: by_id(nb, "compute_gae").__setitem__("id", "bad id!"),
    "overlong-cell-id": lambda nb: by_id(nb, "compute_gae").__setitem__("id", "x" * 100),
    "duplicate-cell-id": lambda nb: by_id(nb, "compute_gae").__setitem__("id", "test_gae_by_hand"),
    "missing-cell-id": lambda nb: by_id(nb, "compute_gae").pop("id"),
    "points-not-a-number": lambda nb: nbg(by_id(nb, "test_gae_by_hand")).__setitem__("points", "abc"),
    "points-raised": lambda nb: nbg(by_id(nb, "test_gae_by_hand")).__setitem__("points", 1000),
    "schema-too-new": lambda nb: nbg(by_id(nb, "test_gae_episode_end")).__setitem__("schema_version", 99),
    "nbgrader-not-a-dict": lambda nb: by_id(nb, "test_gae_shape_dtype")["metadata"].__setitem__("nbgrader", "x"),
    "grade-id-removed": lambda nb: nbg(by_id(nb, "test_gae_bootstrap")).pop("grade_id"),
    "grade-id-invalid": lambda nb: nbg(by_id(nb, "compute_gae")).__setitem__("grade_id", "bad id!"),
    "grade-id-of-another-cell": lambda nb: nbg(by_id(nb, "compute_gae")).__setitem__("grade_id", "test_gae_by_hand"),
    "test-cell-marked-answer": lambda nb: nbg(by_id(nb, "test_gae_lambda_limits")).__setitem__("solution", True),
    "answer-cell-marked-graded": lambda nb: nbg(by_id(nb, "compute_gae")).update(grade=True, points=100),
    "forged-grade-cell": _forged_cell,
    "copied-test-cell": _copied_test_cell,
}


def tampered(*names: str) -> dict:
    """The released lab01 with the reference answer, as JSON, with the named tamperings applied."""
    nb = json.loads(nbformat.writes(variant(reference_answer(), base=release())))
    for name in names:
        TAMPERINGS[name](nb)
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """lab01's gradebook (built once, in a private cache) and the course config nbgrader autogrades with."""
    from rlprep.grading.grade import course_template
    from rlprep.grading.release import course_config

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLPREP_CACHE", str(tmp_path_factory.mktemp("metadata-cache")))
        template = course_template(LAB, ROOT / "solutions")
    return template, course_config(template)


def sanitized(nb_json: dict, course) -> nbformat.NotebookNode:
    """What nbgrader's sanitize step makes of the hand-in (it raises where nbgrader would refuse the notebook)."""
    from nbconvert.exporters import NotebookExporter

    template, config = course
    exporter = NotebookExporter(config=config)
    exporter._preprocessors = []  # as nbgrader's Autograde._init_preprocessors does
    for preprocessor in config.Autograde.sanitize_preprocessors:
        exporter.register_preprocessor(preprocessor, enabled=True)
    resources = {"nbgrader": {"notebook": LAB, "assignment": LAB, "student": "learner",
                              "db_url": f"sqlite:///{template / 'gradebook.db'}"}}
    nb = nbformat.reads(json.dumps(nb_json), as_version=4)
    out, _ = exporter.from_notebook_node(nb, resources=resources)
    return nbformat.reads(out, as_version=4)


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_metadata_is_put_back_before_nbgrader_reads_it(name, course):
    nb = sanitized(tampered(name), course)
    nbformat.validate(nb)
    released = {c.metadata.nbgrader.grade_id: c for c in release().cells if "nbgrader" in c.metadata}
    graded = [c for c in nb.cells if "nbgrader" in c.metadata]
    ids = [c.metadata.nbgrader.grade_id for c in graded]
    assert sorted(ids) == sorted(released), ids  # each grade id of the gradebook once, no other
    for cell in graded:
        want = released[cell.metadata.nbgrader.grade_id].metadata.nbgrader
        got = cell.metadata.nbgrader
        for flag in ("grade", "solution", "locked", "points"):
            assert got.get(flag) == want.get(flag), (name, cell.metadata.nbgrader.grade_id, flag, got)
        assert cell.cell_type == "code"
    assert len({c.id for c in nb.cells}) == len(nb.cells)


def test_a_hand_in_with_every_tampering_gets_a_verdict_and_the_rest_is_graded(tmp_path, env):
    # every tampering at once (those of the answer cell's id and grade id overwrite one another: the last stays)
    names = [n for n in TAMPERINGS if n not in ("grade-id-invalid", "grade-id-of-another-cell")]
    path = tmp_path / f"{LAB}.ipynb"
    path.write_text(json.dumps(tampered(*names, "grade-id-of-another-cell")))
    graded = grade(path, env)
    assert graded.rc == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert (graded.report["score"], graded.report["max_score"]) == (10, 10), graded.report
    assert [c["grade_id"] for c in graded.report["cells"]] == list(TESTS)


def test_classroom_autograde_grades_the_tampered_hand_in_too(tmp_path, capsys, course):
    import shutil

    from nbgrader.api import Gradebook

    from rlprep.cli import main

    template, _ = course
    folder = tmp_path / "course"
    folder.mkdir()
    shutil.copy(template / "gradebook.db", folder / "gradebook.db")
    shutil.copytree(template / "source", folder / "source")
    hand_in = folder / "submitted" / "tampered" / LAB
    hand_in.mkdir(parents=True)
    names = [n for n in TAMPERINGS if "cell-id" not in n and n not in ("grade-id-invalid", "grade-id-of-another-cell")]
    (hand_in / f"{LAB}.ipynb").write_text(json.dumps(tampered(*names, "invalid-cell-id")))  # nbformat-invalid
    rc = main(["classroom", "autograde", "--course", str(folder), "--lab", LAB])
    captured = capsys.readouterr()
    assert rc == 0 and "1 graded" in captured.out, captured.out + captured.err
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", "rlprep") as gb:
        submission = gb.find_submission(LAB, "tampered")
        assert (submission.score, submission.max_score) == (10, 10)

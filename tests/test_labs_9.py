"""lab09_atlas (the algorithm atlas by hand): the tests grade what they should, the release is clean, the demo runs.

- every catalogued bug (tests/catalog/lab09_atlas.py) loses points, with a property message, and every correct
  alternative gets full marks, run in-process against the lab's own test cells (``score_in_process``);
- the reference answers get full marks and the untouched release 0 in every graded cell, each through one real
  ``rlprep grade --json`` run (nbgrader + the sandboxed learner kernel);
- the answer cells are the registries' references, hidden tests hold values only and never reach labs/;
- each task's text cites its paper (arXiv id) and links its section of notebook 13; the demo cell is a short call
  into ``rlprep.demos`` that runs in the smoke profile with the reference answers.
"""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from catalog import lab09_atlas as catalog
from rlprep.grading import authoring
from rlprep.grading.executor import score_in_process
from test_labs_45 import _grade, _run_demos, reference_submission, release_path, role, solution

LAB = "lab09_atlas"
POINTS, GRADED_CELLS = 24, 12
FUNCTIONS = ("leave_one_out_advantages", "dr_grpo_loss", "cispo_loss", "ipo_loss", "simpo_loss")
PAPERS = {"leave_one_out_advantages": ("2402.14740", "A03"), "dr_grpo_loss": ("2503.20783", "A01"),
          "cispo_loss": ("2506.13585", "A02"), "ipo_loss": ("2310.12036", "A04"), "simpo_loss": ("2405.14734", "A04")}
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")


def references() -> dict:
    from rlprep.algos import pg_losses, preference_losses

    return {name: getattr(pg_losses, name, None) or getattr(preference_losses, name) for name in FUNCTIONS}


def _score(**override) -> dict:
    return score_in_process(solution(LAB), dict(references(), **override))


def test_every_graded_function_has_five_catalogued_bugs():
    assert set(catalog.BUGS) == set(FUNCTIONS) == set(catalog.ALTERNATIVES)
    assert all(len(fns) >= 5 and all(fn.__doc__ for fn in fns) for fns in catalog.BUGS.values())


@pytest.mark.parametrize("name, bug", [(n, fn) for n, fns in catalog.BUGS.items() for fn in fns],
                         ids=lambda x: getattr(x, "__name__", x))
def test_each_catalogued_bug_loses_points(name, bug):
    results = _score(**{name: bug})
    lost = {gid: msg for gid, (pts, mx, msg) in results.items() if pts < mx}
    assert lost, f"{bug.__name__} got full marks"
    assert sum(pts for pts, _, _ in results.values()) < POINTS
    for msg in lost.values():  # a property, never the expected values
        assert msg.startswith("PropertyFailed: ") and "tensor(" not in msg and "[" not in msg, msg


@pytest.mark.parametrize("name, alt", [(n, fn) for n, fns in catalog.ALTERNATIVES.items() for fn in fns] + [
    ("reference", None)], ids=lambda x: getattr(x, "__name__", x))
def test_correct_variants_get_full_marks(name, alt):
    results = _score() if alt is None else _score(**{name: alt})
    assert all(pts == mx for pts, mx, _ in results.values()), results
    assert sum(mx for _, mx, _ in results.values()) == POINTS and len(results) == GRADED_CELLS


def test_answer_cells_are_the_references_and_the_text_cites_each_paper():
    nb = solution(LAB)
    answers = [c for c in nb.cells if role(c) == "answer"]
    assert [c.id for c in answers] == list(FUNCTIONS)
    for cell in answers:
        assert cell.source == authoring.reference_source(cell.metadata["rlprep"]["reference"])
        defs = [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
        assert [d.name for d in defs] == [cell.id]
        task = nb.cells[nb.cells.index(cell) - 1]  # the task's markdown sits just above its answer cell
        arxiv, section = PAPERS[cell.id]
        assert task.cell_type == "markdown" and f"arXiv {arxiv}" in task.source, cell.id
        assert f"section {section}](../../notebooks/13_algorithm_atlas.ipynb)" in task.source, cell.id
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z$`])", task.source.split("\n", 1)[1].strip())
        assert 3 <= len(sentences) <= 7, (cell.id, len(sentences))
    assert nb.cells[-1].id == "grade-self" and "grade_here()" in nb.cells[-1].source


def test_hidden_tests_hold_values_only_and_never_reach_the_release():
    from nbgrader.nbgraderformat import MetadataValidator

    nb = solution(LAB)
    MetadataValidator().validate_nb(nb)
    text = release_path(LAB).read_text()
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text and "{{" not in text
    banned = (ast.For, ast.While, ast.FunctionDef, ast.Lambda, ast.Import, ast.ImportFrom, ast.ListComp)
    hidden_cells = 0
    for cell in nb.cells:
        if "### BEGIN HIDDEN TESTS" not in cell.source:
            continue
        hidden_cells += 1
        hidden = cell.source.split("### BEGIN HIDDEN TESTS\n")[1].split("### END HIDDEN TESTS")[0]
        assert not [n for n in ast.walk(ast.parse(hidden)) if isinstance(n, banned)], cell.id
        for line in hidden.splitlines():
            assert line.strip() not in text, f"hidden line of {cell.id} leaked into the release"
    assert hidden_cells == GRADED_CELLS
    released = nbformat.read(release_path(LAB), as_version=4)
    assert [c.id for c in released.cells] == [c.id for c in nb.cells]
    for cell in released.cells:
        if role(cell) == "answer":
            assert cell.source.startswith(f"def {cell.id}(")
            assert cell.source.endswith("    # YOUR CODE HERE\n    raise NotImplementedError()")


def test_reference_gets_full_marks_through_rlprep_grade(tmp_path, capsys, rlprep_home):
    """Graded in the sandboxed kernel, recorded in a private RLPREP_HOME (never the learner's history)."""
    path = tmp_path / f"{LAB}.ipynb"
    nbformat.write(reference_submission(LAB), path)
    rc, report = _grade(path, capsys)
    assert (rc, report["lab"], report["score"], report["max_score"]) == (0, LAB, POINTS, POINTS), report
    assert len(report["cells"]) == GRADED_CELLS and all(c["passed"] for c in report["cells"])


def test_a_hidden_failure_names_its_property_only_through_rlprep_grade(tmp_path, capsys, rlprep_home):
    """CISPO with a lower bound of 0.8 although eps_low is None: passes the visible on-policy check, fails the hidden
    off-policy value, and the report names that property with no error size and no value."""
    nb = reference_submission(LAB)
    cell = next(c for c in nb.cells if c.id == "cispo_loss")
    wrong = cell.source.replace("lower = None if eps_low is None", "lower = 0.8 if eps_low is None")
    assert wrong != cell.source
    cell.source = wrong
    path = tmp_path / f"{LAB}.ipynb"
    nbformat.write(nb, path)
    rc, report = _grade(path, capsys)
    cells = {c["grade_id"]: c for c in report["cells"]}
    assert rc == 1 and report["score"] < POINTS
    assert cells["test_cispo_by_hand"]["message"] == \
        "PropertyFailed: CISPO loss wrong on a random off-policy batch (default clip)"
    assert all(c["passed"] for gid, c in cells.items() if not gid.startswith("test_cispo"))


def test_untouched_release_scores_zero_in_every_cell(tmp_path, capsys, rlprep_home):
    path = tmp_path / f"{LAB}.ipynb"
    path.write_bytes(release_path(LAB).read_bytes())
    rc, report = _grade(path, capsys)
    assert rc == 1 and report["score"] == 0 and len(report["cells"]) == GRADED_CELLS
    assert all(c["points"] == 0 and "NotImplementedError" in c["message"] for c in report["cells"])


def test_the_demo_cell_is_a_short_call_that_runs_in_smoke(monkeypatch, capsys):
    demos = [c for c in solution(LAB).cells if role(c) == "demo" and c.id != "grade-self"]
    assert [c.id for c in demos] == ["demo-weights"]
    lines = [line for line in demos[0].source.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 5 and lines[0].startswith("from rlprep.demos.dr_grpo_weights import")
    ns, figures = _run_demos(LAB, monkeypatch)
    assert ns["weights"]["length_free"] is True
    assert "whatever its completion's length: ok" in capsys.readouterr().out
    assert len(figures) == 1 and all(ax.get_xlabel() and ax.get_ylabel() and ax.get_title() for ax in figures[0].axes)

"""Release: labs/ in sync with solutions/, answers generated from the one reference, nothing hidden leaks."""

from __future__ import annotations

import ast
import inspect

import nbformat
import pytest

from grading_helpers import RELEASE, ROOT, SOLUTION, solution
from rlprep.algos.gae import compute_gae
from rlprep.grading import authoring
from rlprep.grading import templating
from rlprep.grading.executor import hidden_code, released_source, split_hidden


def lab01_cases() -> dict:
    return {k: v for k, v in templating.lab_values(SOLUTION.parent).items() if k != "results"}


def test_answer_cells_equal_their_reference():
    answers = [c for c in solution().cells if c.metadata.get("rlprep", {}).get("role") == "answer"]
    assert answers, "lab01 has an answer cell"
    for cell in answers:
        assert cell.source == authoring.reference_source(cell.metadata["rlprep"]["reference"])


def test_reference_source_keeps_signature_and_docstring_above_the_markers():
    src = authoring.reference_source("rlprep.algos.gae:compute_gae")
    head, rest = src.split("    ### BEGIN SOLUTION\n")
    assert head.startswith("def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):")
    assert head.rstrip().endswith('"""') and "1506.02438" in head
    assert rest.endswith("    ### END SOLUTION")
    # without the markers it is the function's source, byte for byte
    assert src.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "") + "\n" == \
        inspect.getsource(compute_gae)


def test_source_notebook_is_a_template_whose_placeholders_all_resolve():
    raw = nbformat.read(SOLUTION, as_version=4)
    assert templating.has_placeholders(raw), "lab01's hidden values come from its fixtures"
    rendered = solution()
    assert not templating.has_placeholders(rendered)
    assert [c.id for c in rendered.cells] == [c.id for c in raw.cells]


def test_an_unknown_placeholder_names_the_cell_and_the_fix():
    from rlprep.errors import RlprepError

    raw = nbformat.read(SOLUTION, as_version=4)
    raw.cells[-1].source += "\n{{ no_such_case.advantages }}"
    with pytest.raises(RlprepError, match="unknown placeholder") as err:
        templating.render_notebook(raw, "lab01_gae", SOLUTION.parent)
    assert raw.cells[-1].id in err.value.problem and "fixtures" in err.value.fix


def test_labs_are_in_sync_with_solutions():
    from rlprep.grading.release import out_of_sync

    assert out_of_sync(ROOT) == []


def test_released_notebook_has_no_hidden_tests_and_no_outputs():
    text = RELEASE.read_text()
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    for key, case in lab01_cases().items():
        if key != "terminal":
            assert templating.literal(case["advantages"]) not in text, f"hidden values of {key} leaked"
            assert repr(float(case["advantages"][0])) not in text, f"hidden values of {key} leaked"
    nb = nbformat.read(RELEASE, as_version=4)
    assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")
    assert [c.id for c in nb.cells] == [c.id for c in solution().cells]
    stub = next(c for c in nb.cells if c.id == "compute_gae").source
    assert stub.startswith("def compute_gae(") and stub.endswith("    # YOUR CODE HERE\n    raise NotImplementedError()")


def test_nbgrader_metadata_is_valid():
    from nbgrader.nbgraderformat import MetadataValidator

    MetadataValidator().validate_nb(solution())


def test_hidden_tests_hold_values_not_an_implementation():
    for cell in solution().cells:
        if hidden := hidden_code(cell.source):
            banned = (ast.For, ast.While, ast.FunctionDef, ast.Lambda, ast.Import, ast.ImportFrom, ast.ListComp)
            assert not [n for n in ast.walk(ast.parse(hidden)) if isinstance(n, banned)], cell.id


@pytest.mark.parametrize("source", [
    "x = 1",
    "a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS",
    "a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3",
    "### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3",
    "\n\na = 1\n\n    ### BEGIN HIDDEN TESTS\nb = 2\n\n### END HIDDEN TESTS\n",
    "a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc\n### BEGIN HIDDEN TESTS\nd\n### END HIDDEN TESTS\ne",
    "a\n### END HIDDEN TESTS\nb",
])
def test_the_hidden_test_splitter_agrees_with_nbgrader(source):
    from nbgrader.preprocessors import ClearHiddenTests

    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    assert released_source(source) == cell.source
    parts = split_hidden(source)
    assert [hidden for _, hidden in parts] == [i % 2 == 1 for i in range(len(parts))]
    assert "HIDDEN TESTS" not in "".join(code for code, _ in parts)
    assert hidden_code(source) == "\n".join(code for code, hidden in parts if hidden)
    assert ("b = 2" in hidden_code(source)) == ("b = 2" in source) and "c = 3" not in hidden_code(source)


def test_authoring_rejects_bad_ids():
    with pytest.raises(ValueError, match="slug"):
        authoring.md("has space", "x")
    with pytest.raises(ValueError, match="duplicate"):
        authoring.notebook([authoring.md("a", "x"), authoring.md("a", "y")])



def test_literals_round_trip_exactly():
    """Hidden tests hold the fixtures' values as literals: evaluating one gives back the very same numbers."""
    import numpy as np
    import torch

    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64) / 3
    namespace = {"torch": torch, "np": np}
    for value in (x, x.float(), x.clone().requires_grad_(), torch.tensor([[1, 2], [3, 4]])):
        back = eval(templating.literal(value), namespace)  # our own literal
        assert back.dtype == value.dtype and torch.equal(back, value.detach())
    arr = x[0].numpy()
    back = eval(templating.literal(arr), namespace)
    assert back.dtype == arr.dtype and np.array_equal(back, arr)
    assert float(eval(templating.literal(np.float32(1 / 3)))) == float(np.float32(1 / 3))
    case = {"adv": arr, "gamma": 0.99, "pair": (1, None)}
    assert str(eval(templating.literal(case), namespace)) == str(case)


def test_lab01_chain_demo_cells_are_short_calls_that_run(monkeypatch):
    """The chain demo cells are 1-5 lines into rlprep.demos and run with the reference answer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nb = solution()
    demos = [c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("role") == "demo"]
    assert demos and all(len(c.source.strip().splitlines()) <= 5 for c in demos), \
        {c.id: len(c.source.splitlines()) for c in demos}
    monkeypatch.setattr(plt, "show", lambda: None)
    ns: dict = {}
    for cid in ("setup", "compute_gae", "chain-simulate", "chain-limits", "chain-plot"):
        exec(next(c.source for c in nb.cells if c.id == cid), ns)  # our own notebook
    assert ns["chain"].n_states == 20
    plt.close("all")


def test_release_keeps_a_learners_answers(tmp_path):
    """Running `make release` over a lab the learner has filled in must not lose their work."""
    import shutil

    import nbformat

    from rlprep.grading.release import backup_learner_work, has_learner_work

    lab = ROOT / "labs" / "lab01_gae" / "lab01_gae.ipynb"
    target = tmp_path / "lab01_gae.ipynb"
    shutil.copy(lab, target)
    assert not has_learner_work(target) and backup_learner_work(target) is None
    nb = nbformat.read(target, as_version=4)
    answer = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    answer.source = answer.source.replace("raise NotImplementedError()", "return rewards, rewards")
    nbformat.write(nb, target)
    backup = backup_learner_work(target)
    assert backup is not None and backup.read_bytes() == target.read_bytes()

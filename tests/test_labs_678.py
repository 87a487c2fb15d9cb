"""Labs 6-8 (importance sampling, InfoNCE, image diff): the test cells themselves, the release, one graded run each.

- every catalogued bug loses points and every alternative gets full marks against the lab's own test cells,
  run in-process (``score_in_process``: no kernel, no nbgrader);
- the untouched release scores 0 in every graded cell: its stubs are executed and run against the same test
  cells in-process; the reference scores full marks through ``rlprep grade --json`` (one run per lab);
- the builders are deterministic and committed; hidden blocks hold values only and never reach labs/;
- the demo cells run in the smoke profile and show what their prose says (slow parts: see the per-lab test).
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from rlprep.grading import authoring
from rlprep.grading.executor import hidden_code, score_in_process

ROOT = Path(__file__).resolve().parents[1]
LABS = {  # lab -> (catalog module, reference module, builder module or None once the source is the notebook)
    "lab06_importance_sampling": ("catalog.lab06_importance_sampling", "rlprep.algos.importance_sampling", None),
    "lab07_infonce": ("catalog.lab07_infonce", "rlprep.algos.infonce", None),
    "lab08_image_diff": ("catalog.lab08_image_diff", "rlprep.algos.image_diff", None),
}
_MARKERS = re.compile(r"\n[ \t]*### (BEGIN|END) SOLUTION")
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")  # SQLAlchemy session notes inside nbgrader


def solution(lab):
    """The source notebook with its placeholders filled (what the gradebook holds)."""
    from rlprep.grading.templating import rendered_solution

    return rendered_solution(lab, ROOT)


def release(lab):
    return nbformat.read(ROOT / "labs" / lab / f"{lab}.ipynb", as_version=4)


def references(lab) -> dict:
    catalog, module, _ = LABS[lab]
    ref = importlib.import_module(module)
    return {name: getattr(ref, name) for name in importlib.import_module(catalog).BUGS}


def role(cell):
    return cell.get("metadata", {}).get("rlprep", {}).get("role")


def catalog_cases(kind) -> list:
    return [pytest.param(lab, name, impl, id=f"{lab}-{impl.__name__}")
            for lab, (catalog, _, _) in LABS.items()
            for name, impls in getattr(importlib.import_module(catalog), kind).items()
            for impl in impls]


@pytest.fixture(scope="module")
def solutions():
    return {lab: solution(lab) for lab in LABS}


# -- the test cells against the catalogs -----------------------------------------------------------------
@pytest.mark.parametrize("lab", LABS)
def test_reference_gets_full_marks_in_process(solutions, lab):
    results = score_in_process(solutions[lab], references(lab))
    assert results and all(pts == mx for pts, mx, _ in results.values()), results


@pytest.mark.parametrize("lab,name,bug", catalog_cases("BUGS"))
def test_each_bug_loses_points_without_revealing_hidden_values(solutions, lab, name, bug):
    nb = solutions[lab]
    results = score_in_process(nb, dict(references(lab), **{name: bug}))
    lost = {gid: msg for gid, (pts, mx, msg) in results.items() if pts < mx}
    assert lost, f"bug {bug.__name__} in {name} got full marks"
    sources = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells if role(c) == "test"}
    for gid, msg in lost.items():
        hidden = hidden_code(sources[gid])
        secrets = set(re.findall(r"-?\d+\.\d{4,}", hidden)) | set(re.findall(r"\(\d+, \d+, \d+, \d+\)", hidden))
        assert not any(s in msg for s in secrets), f"{gid} reveals a hidden value: {msg}"
        assert "torch.tensor(" not in msg and "np.array" not in msg


@pytest.mark.parametrize("lab,name,alt", catalog_cases("ALTERNATIVES"))
def test_alternatives_get_full_marks(solutions, lab, name, alt):
    results = score_in_process(solutions[lab], dict(references(lab), **{name: alt}))
    assert all(pts == mx for pts, mx, _ in results.values()), results


@pytest.mark.parametrize("lab", LABS)
def test_untouched_release_scores_zero_in_every_graded_cell(solutions, lab):
    """The released stubs (``raise NotImplementedError()``) run against the full test cells, hidden parts included."""
    stubs: dict = {}
    answers = [c for c in release(lab).cells if role(c) == "answer"]
    for cell in answers:
        assert "raise NotImplementedError()" in cell.source
        exec(compile(cell.source, cell.id, "exec"), stubs)  # our own released stub
    results = score_in_process(solutions[lab], {name: stubs[name] for name in references(lab)})
    assert results and all(pts == 0 for pts, _, _ in results.values()), results


# -- the notebooks -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lab", LABS)
def test_notebook_structure(solutions, lab):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = solutions[lab]
    MetadataValidator().validate_nb(nb)
    assert nb.metadata["rlprep"]["lab"] == lab
    answers = [c for c in nb.cells if role(c) == "answer"]
    assert {c.id for c in answers} == set(references(lab)), "one answer cell per graded function, named after it"
    for cell in answers:
        assert cell.source == authoring.reference_source(cell.metadata["rlprep"]["reference"])
    assert nb.cells[-1].id == "grade-self" and "grade_here()" in nb.cells[-1].source
    banned = (ast.For, ast.While, ast.FunctionDef, ast.Lambda, ast.Import, ast.ImportFrom, ast.ListComp,
              ast.GeneratorExp, ast.DictComp, ast.SetComp)
    for cell in nb.cells:
        if role(cell) == "test":
            tree = ast.parse(hidden_code(cell.source))
            assert not [n for n in ast.walk(tree) if isinstance(n, banned)], f"{cell.id}: hidden code must be values"


@pytest.mark.parametrize("lab", LABS)
def test_release_has_no_hidden_tests_solutions_or_outputs(solutions, lab):
    text = (ROOT / "labs" / lab / f"{lab}.ipynb").read_text()
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    for cell in solutions[lab].cells:
        for value in re.findall(r"-?\d+\.\d{6,}", hidden_code(cell.source)):
            assert value not in text, f"hidden value {value} of {cell.id} leaked into labs/"
    nb = release(lab)
    assert [c.id for c in nb.cells] == [c.id for c in solutions[lab].cells]
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


def test_release_sync_covers_labs_678():
    """``rlprep release --check`` (tests/test_grading_release.py) walks every lab in solutions/."""
    from rlprep.grading.release import list_labs

    assert set(LABS) <= set(list_labs(ROOT))


# -- one graded run per lab: the reference through rlprep grade ----------------------------------------------
@pytest.mark.parametrize("lab", LABS)
def test_reference_gets_full_marks_through_rlprep_grade(tmp_path, capsys, rlprep_home, lab):
    from rlprep.cli import main

    nb = release(lab)
    for cell in nb.cells:
        if role(cell) == "answer":
            cell.source = _MARKERS.sub("", authoring.reference_source(cell.metadata["rlprep"]["reference"]))
    path = tmp_path / f"{lab}.ipynb"
    nbformat.write(nb, path)
    rc = main(["grade", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["lab"] == lab and report["score"] == report["max_score"] > 0, report
    n_tests = sum(role(c) == "test" for c in nb.cells)
    assert len(report["cells"]) == n_tests and all(c["passed"] for c in report["cells"])


# -- demo cells in the smoke profile ---------------------------------------------------------------------
def run_demos(lab, monkeypatch, skip=("grade-self",)):
    """Run setup, answer (the reference) and demo cells in order; return the namespace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    ns: dict = {}
    for cell in solution(lab).cells:
        if cell.cell_type == "code" and role(cell) in ("setup", "answer", "demo") and cell.id not in skip:
            exec(compile(cell.source, cell.id, "exec"), ns)  # our own notebook
    plt.close("all")
    return ns


def test_lab06_demos_run_in_smoke(monkeypatch, capsys):
    import numpy as np

    ns = run_demos("lab06_importance_sampling", monkeypatch)
    gauss_var = ns["variance"]["gauss_var"]
    assert gauss_var[0] == pytest.approx(0.0, abs=1e-12) and gauss_var[4] > 5 * gauss_var[2] > 0  # grows with KL
    assert np.all(np.diff(ns["variance"]["seq_kl"]) > 0) and ns["variance"]["seq_var"][-1] > ns["variance"]["seq_var"][1]
    tradeoff = ns["tradeoff"]  # clip ascending, then None (ordinary IS)
    assert tradeoff["bias2"][0] > 10 * tradeoff["bias2"][-1] and tradeoff["var"][-1] > 10 * tradeoff["var"][0]
    runs = ns["runs"]
    assert set(runs) == {(0, "none"), (6, "none"), (6, "tis")}
    on_policy = runs[(0, "none")]
    assert max(abs(x) for x in on_policy.series("stats/kl_behavior")[1]) < 1e-5
    assert min(on_policy.series("stats/ess")[1]) > 0.999
    assert max(runs[(6, "none")].series("stats/kl_behavior")[1]) > 0.01  # stale rollouts: a real mismatch
    out = capsys.readouterr().out
    assert "smoke profile" in out and "too small to learn" in out and "k=6, TIS (clip 2)" in out


def demo_cells_are_short(lab):
    raw = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    long = [c.id for c in raw.cells if role(c) == "demo" and len(c.source.strip().splitlines()) > 5]
    assert not long, f"{lab}: demo cells longer than 5 lines: {long}"


def test_lab07_demos_run_in_smoke(monkeypatch, capsys):
    import numpy as np

    demo_cells_are_short("lab07_infonce")
    ns = run_demos("lab07_infonce", monkeypatch)
    assert "smoke profile" in capsys.readouterr().out
    recall = {tau: hist["recall@1"][-1] for tau, (_, hist) in ns["sweep"].items()}
    assert recall[0.07] > 0.3 and recall[0.07] > recall[0.01]  # well above chance (1/96); tiny tau hurts
    learned = ns["hist_learned"]["temperature"]
    assert 0.01 - 1e-9 <= learned[-1] and learned[-1] != pytest.approx(0.07)  # it moved, within CLIP's cap
    grad_norm = ns["prof"]["grad_norm"]
    assert grad_norm[0] > 10 * grad_norm[-1] and np.isfinite(ns["prof"]["effective_negatives"]).all()


def test_lab08_demos_run_in_smoke(monkeypatch, capsys):
    from rlprep.demos.image_diff_scenes import target_box

    demo_cells_are_short("lab08_image_diff")
    ns = run_demos("lab08_image_diff", monkeypatch)
    out = capsys.readouterr().out
    assert "| small_centre_t0 |" in out and "WRONG" not in out and out.count("box ok") == 4
    assert "smoke profile" in out
    gradual = ns["gradual"]
    h, w = gradual["img_a"].shape[:2]
    assert gradual["boxes"]["diff_bbox, threshold 0"] == (0, 0, w - 1, h - 1)  # noise + drift: the whole frame
    robust = gradual["boxes"]["diff_bbox_robust"]
    target = target_box((64, 96, 22, 30.0))
    assert robust is not None and max(abs(r - t) for r, t in zip(robust, target)) <= 3


def test_lab08_issue24_bugs_get_their_expected_grade(solutions):
    """The bugs a strong candidate meets (colour-only change, a change over half the frame, a transposed view)
    each lose exactly the cells the catalogue says, and no more."""
    from catalog.lab08_image_diff import BUGS, EXPECTED_GRADES

    bugs = {bug.__name__: (name, bug) for name, impls in BUGS.items() for bug in impls}
    for bug_name, (points, failing) in EXPECTED_GRADES.items():
        name, bug = bugs[bug_name]
        results = score_in_process(solutions["lab08_image_diff"], dict(references("lab08_image_diff"), **{name: bug}))
        assert sum(p for p, _, _ in results.values()) == points, (bug_name, results)
        assert {gid for gid, (p, mx, _) in results.items() if p < mx} == failing, bug_name


def test_lab08_column_major_inputs_reach_the_learner_column_major():
    """The hidden layout checks mean something under the real grader: arguments cross the wire
    (np.savez/np.load), which keeps a Fortran-ordered array Fortran-ordered (a strided slice arrives contiguous)."""
    import io

    import numpy as np

    from rlprep.grading import wire

    grey = np.zeros((16, 9), np.uint8)
    for value in (grey.T, np.asfortranarray(np.zeros((9, 13, 3), np.uint8))):
        tree, arrays = wire.encode(value)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        buf.seek(0)
        back = wire.decode(tree, np.load(buf, allow_pickle=False))
        assert back.flags.f_contiguous and not back.flags.c_contiguous and back.shape == value.shape

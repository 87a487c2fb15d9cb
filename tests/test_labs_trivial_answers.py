"""Trivial answers earn nothing, in every lab (issue 33).

An answer that returns a constant, echoes one of its arguments, returns zeros of the right shape, or raises must
score 0 in every graded cell that calls it: each self-consistency check ("repeating the batch leaves the mean",
"float32 gives the float64 answer", "no change gives None") shares its cell with a check anchored to an absolute
value the grader computed from the reference (a fixture), which no trivial answer meets.

Each graded function of each lab is replaced by each trivial answer while the other functions stay the reference;
every test cell is scored on its own (its lab's setup cells, then that cell, in-process with ``score_in_process``,
as ``rlprep.classroom.students.expected_grade`` does), so an answer that keeps state across calls starts afresh in
each cell. One lab is also graded through the real sandboxed grader (``rlprep grade --json``), which must agree.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from rlprep.grading.executor import released_source, score_in_process
from rlprep.grading.templating import rendered_solution

ROOT = Path(__file__).resolve().parents[1]
LABS = sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")


def _nbg(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def references(nb) -> dict:
    """{graded function name: reference function}, from the answer cells' ``metadata.rlprep.reference``."""
    refs = {}
    for cell in nb.cells:
        ref = cell.get("metadata", {}).get("rlprep", {}).get("reference")
        if ref:
            module, _, attr = ref.partition(":")
            refs[attr] = getattr(importlib.import_module(module), attr)
    return refs


def single_cell_notebooks(nb) -> dict:
    """{grade_id: the notebook with its setup cells and that one test cell}."""
    setup = [c for c in nb.cells if c.cell_type == "code" and _nbg(c).get("locked") and not _nbg(c).get("grade")]
    out = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbg(cell).get("grade"):
            one = copy.copy(nb)
            one.cells = setup + [cell]
            out[_nbg(cell)["grade_id"]] = one
    return out


# -- the trivial answers ----------------------------------------------------------------------------------------
def _zeros_of(x):
    """Zeros with the structure, shape and dtype of ``x`` (a reference answer); "" for a str."""
    if isinstance(x, torch.Tensor):
        return torch.zeros_like(x.detach())
    if isinstance(x, np.ndarray):
        return np.zeros_like(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_zeros_of(v) for v in x)
    if isinstance(x, str):
        return ""
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, np.number)):
        return type(x)(0)
    return None


def _detached(x):
    """``x`` with every tensor detached: a constant carries no gradient."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)):
        return type(x)(_detached(v) for v in x)
    return copy.deepcopy(x)


def _first_array(bound) -> object:
    return next((v for v in bound.arguments.values() if isinstance(v, (torch.Tensor, np.ndarray))), None)


def trivial_answers(ref, constant=None) -> dict:
    """{label: a trivial answer with ``ref``'s signature}: None, 0.0, ``constant`` (what the cell's first visible call
    expects, an author could read it off), zeros like the first array argument or like the answer itself, each
    argument echoed, or an exception. "zeros_of_the_answer" asks ``ref`` for the shape only, and returns None when
    ``ref`` raises (a trivial answer never raises by luck where the contract asks for an error)."""
    sig = inspect.signature(ref)

    def bind(args, kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound

    def none(*a, **k):
        return None

    def zero(*a, **k):
        return 0.0

    def constant_of_the_visible_call(*a, **k):
        return _detached(constant)

    def raises_not_implemented(*a, **k):
        raise NotImplementedError()

    def raises_value_error(*a, **k):
        raise ValueError("trivial")

    def zeros_like_first(*a, **k):
        x = _first_array(bind(a, k))
        return torch.zeros_like(x.detach()) if isinstance(x, torch.Tensor) else np.zeros_like(x)

    def zeros_of_the_answer(*a, **k):
        try:
            return _zeros_of(ref(*a, **k))
        except Exception:  # invalid input: the trivial answer does not know to raise
            return None

    out = {fn.__name__: fn for fn in (none, zero, constant_of_the_visible_call, raises_not_implemented,
                                      raises_value_error, zeros_like_first, zeros_of_the_answer)}
    for name in sig.parameters:
        def echo(*a, _name=name, **k):
            return bind(a, k).arguments[_name]
        out[f"echo_{name}"] = echo
    return out


def visible_constant(cell_nb, refs: dict, fn_name: str):
    """What ``fn_name`` returns for the first call of the cell's visible part (None if that part does not call it)."""
    seen = []

    def recording(*a, **k):
        out = refs[fn_name](*a, **k)
        if not seen:
            seen.append(_detached(out))
        return out

    visible = copy.deepcopy(cell_nb)
    visible.cells[-1].source = released_source(visible.cells[-1].source)
    score_in_process(visible, dict(refs, **{fn_name: recording}))
    return seen[0] if seen else None


# -- the checks -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=LABS)
def lab(request):
    nb = rendered_solution(request.param, ROOT)
    return request.param, nb, references(nb), single_cell_notebooks(nb)


def _points(cell_nb, functions) -> float:
    ((points, _, _),) = score_in_process(cell_nb, functions).values()
    return points


def test_the_reference_gets_full_marks_cell_by_cell(lab):
    _, _, refs, cells = lab
    assert refs and cells
    for gid, cell_nb in cells.items():
        ((points, max_points, msg),) = score_in_process(cell_nb, refs).values()
        assert points == max_points > 0, (gid, msg)


def test_every_cell_calls_a_graded_function(lab):
    """With every answer raising, every cell scores 0 (the untouched release's grade)."""
    name, _, refs, cells = lab
    unanswered = trivial_answers(next(iter(refs.values())))["raises_not_implemented"]
    scored = {gid: _points(cell_nb, {n: unanswered for n in refs}) for gid, cell_nb in cells.items()}
    assert not {gid: pts for gid, pts in scored.items() if pts}, f"{name}: cells that call no graded function"


def test_no_trivial_answer_scores_in_a_cell_that_calls_it(lab):
    name, _, refs, cells = lab
    earned = []
    for fn_name, ref in refs.items():
        unanswered = dict(refs, **{fn_name: trivial_answers(ref)["raises_not_implemented"]})
        calling = [gid for gid, cell_nb in cells.items() if _points(cell_nb, unanswered) == 0]
        assert calling, f"{name}: no cell calls {fn_name}"
        for gid in calling:
            for label, answer in trivial_answers(ref, visible_constant(cells[gid], refs, fn_name)).items():
                if _points(cells[gid], dict(refs, **{fn_name: answer})):
                    earned.append(f"{fn_name}={label} in {gid}")
    assert not earned, f"{name}: trivial answers earn points: {earned}"


def test_every_function_trivial_at_once_scores_zero(lab):
    name, nb, refs, _ = lab
    for label in ("none", "zero", "zeros_like_first", "zeros_of_the_answer", "raises_value_error"):
        answers = {fn_name: trivial_answers(ref)[label] for fn_name, ref in refs.items()}
        results = score_in_process(nb, answers)
        assert sum(pts for pts, _, _ in results.values()) == 0, (name, label, results)


# -- the real grader agrees ---------------------------------------------------------------------------------------
ROBUST_NONE = '''def diff_bbox_robust(img_a, img_b, sigma=2.0, k=6.0, min_delta=6.0, min_area=20, max_drift=20.0):
    return None  # "nothing changed", whatever the images: 4 of 18 points before issue 33
'''


@pytest.mark.filterwarnings("ignore:Object of type")
def test_the_sandboxed_grader_gives_a_trivial_answer_what_the_in_process_scorer_gives(tmp_path, capsys, rlprep_home):
    """Lab 8 with the reference ``diff_bbox`` and ``diff_bbox_robust`` always None, once through ``rlprep grade --json``
    (nbgrader, the sandboxed kernel, values over the wire): every cell scores as ``score_in_process`` scores it, the
    robust cells 0 and the diff_bbox cells full."""
    pytest.importorskip("cv2")
    from rlprep.cli import main
    from rlprep.grading.authoring import reference_source

    lab = "lab08_image_diff"
    nb = nbformat.read(ROOT / "labs" / lab / f"{lab}.ipynb", as_version=4)
    answers = {"diff_bbox": reference_source("rlprep.algos.image_diff:diff_bbox").replace(
        "    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", ""), "diff_bbox_robust": ROBUST_NONE}
    for cell in nb.cells:
        if cell.id in answers:
            cell.source = answers[cell.id]
    path = tmp_path / f"{lab}.ipynb"
    nbformat.write(nb, path)
    rc = main(["grade", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)

    solution = rendered_solution(lab, ROOT)
    namespace: dict = {}
    exec(ROBUST_NONE, namespace)  # the test's own trivial answer
    in_process = score_in_process(solution, dict(references(solution), diff_bbox_robust=namespace["diff_bbox_robust"]))
    graded = {cell["grade_id"]: cell["points"] for cell in report["cells"]}
    assert rc == 1 and graded == {gid: points for gid, (points, _, _) in in_process.items()}, (graded, in_process)
    assert {gid for gid, points in graded.items() if points == 0} == {gid for gid in graded if "robust" in gid}
    assert all(points > 0 for gid, points in graded.items() if "robust" not in gid)

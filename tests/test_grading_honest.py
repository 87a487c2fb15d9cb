"""Honest answers that differ from the reference in form, not in substance, get full marks.

Each variant runs the way a learner's answer does: in the sandboxed kernel, values across the wire, hidden
tests in the grader (``IsolatedRunner`` with the solution notebook's trusted cells).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from nbgrader.utils import determine_grade, is_grade

from rlprep.grading.authoring import reference_source
from rlprep.grading.executor import IsolatedRunner
from rlprep.grading.templating import rendered_solution

ROOT = Path(__file__).resolve().parents[1]


def plain_reference(ref: str) -> str:
    return reference_source(ref).replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")


def grade_with(lab: str, answers: dict[str, str]) -> dict[str, tuple[float, float, str]]:
    """{grade_id: (score, max, errors)} for the lab's solution notebook with some answer cells replaced."""
    solution = rendered_solution(lab, ROOT)
    nb = copy.deepcopy(solution)
    nb.cells = [c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("role") != "demo"]
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    IsolatedRunner.trusting(solution, call_timeout=20, cell_timeout=30, deadline=120).run(nb)
    out = {}
    for cell in nb.cells:
        if is_grade(cell):
            score, max_score = determine_grade(cell)
            errors = " ".join(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")
            out[cell.metadata.nbgrader.grade_id] = (score, max_score, errors)
    return out


def assert_full_marks(results):
    assert results and all(score == mx for score, mx, _ in results.values()), \
        {k: v for k, v in results.items() if v[0] < v[1]}


def test_diff_bbox_raising_a_valueerror_subclass_and_returning_a_list():
    pytest.importorskip("cv2")
    src = plain_reference("rlprep.algos.image_diff:diff_bbox")
    assert src.count("raise ValueError(") == 3
    assert "return int(x_min), int(y_min), int(x_max), int(y_max)" in src
    src = ("class ImageError(ValueError):\n    pass\n\n\n"
           + src.replace("raise ValueError(", "raise ImageError(")
           .replace("return int(x_min), int(y_min), int(x_max), int(y_max)",
                    "return [np.int64(x_min), y_min, x_max, y_max]"))
    results = grade_with("lab08_image_diff", {"diff_bbox": src})
    assert_full_marks(results)


def test_a_box_that_is_not_four_ints_is_told_to_return_a_tuple():
    pytest.importorskip("cv2")
    src = plain_reference("rlprep.algos.image_diff:diff_bbox").replace(
        "return int(x_min), int(y_min), int(x_max), int(y_max)", "return (x_min, y_min, x_max)")
    results = grade_with("lab08_image_diff", {"diff_bbox": src})
    assert "must return None or a tuple (x_min, y_min, x_max, y_max) of 4 ints" in results["test_db_by_hand"][2]
    assert "wrap-around" not in results["test_db_threshold"][2]


def test_diagnose_zero_loss_returning_a_numpy_string():
    src = plain_reference("rlprep.algos.grpo:diagnose_zero_loss").replace(
        "def diagnose_zero_loss(", "def _diagnose(", 1)
    src = ("import numpy as np\n\n\n" + src + "\n\n\ndef diagnose_zero_loss(stats: dict) -> str:\n"
           "    return np.str_(_diagnose(stats))\n")
    results = grade_with("lab05_grpo", {"diagnose_zero_loss": src})
    assert_full_marks(results)


def test_kl_k3_computed_in_float32():
    src = plain_reference("rlprep.algos.grpo:kl_k3").replace(
        "    log_r = ref_logp - logp", "    log_r = ref_logp.float() - logp.float()")
    assert ".float()" in src
    results = grade_with("lab05_grpo", {"kl_k3": src})
    assert_full_marks(results)


def test_compute_gae_computed_in_float32():
    src = plain_reference("rlprep.algos.gae:compute_gae").replace("np.float64", "np.float32")
    assert src.count("np.float32") == 4
    results = grade_with("lab01_gae", {"compute_gae": src})
    assert_full_marks(results)


def test_compute_gae_as_an_associative_scan():
    """A learner who writes GAE without a loop over time (the scan of ``gae_scan``) gets full marks."""
    src = plain_reference("rlprep.algos.gae:gae_scan").replace("def gae_scan(", "def compute_gae(", 1)
    assert "for t in reversed" not in src and "while len(d) > 1" in src
    results = grade_with("lab01_gae", {"compute_gae": src})
    assert_full_marks(results)


UINT64_ROWS = '''def diff_bbox(img_a, img_b, threshold=0):
    if not (isinstance(img_a, np.ndarray) and isinstance(img_b, np.ndarray)) or img_a.shape != img_b.shape \\
            or img_a.dtype != np.uint8 or img_b.dtype != np.uint8 or img_a.ndim not in (2, 3) or img_a.size == 0:
        raise ValueError("need two uint8 arrays [H, W] or [H, W, C] of the same shape")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or threshold < 0:
        raise ValueError("threshold must be a number >= 0")
    d = np.abs(img_a.astype(np.int16) - img_b.astype(np.int16))
    d = d.max(axis=2) if d.ndim == 3 else d
    rows = np.flatnonzero((d > threshold).any(axis=1))
    if threshold == 0:  # fast path: rows compared as uint64 words
        a, b = LAYOUT(img_a).reshape(img_a.shape[0], -1), LAYOUT(img_b).reshape(img_b.shape[0], -1)
        pad = (-a.shape[1]) % 8
        a, b = (np.pad(a, ((0, 0), (0, pad))), np.pad(b, ((0, 0), (0, pad)))) if pad else (a, b)
        rows = np.flatnonzero((a.view(np.uint64) != b.view(np.uint64)).any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero((d[rows[0]:rows[-1] + 1] > threshold).any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1])
'''


def test_uint64_rows_fast_path_meets_column_major_inputs_through_the_wire():
    """The hidden transposed/column-major cases reach the sandboxed answer as column-major arrays: the uint64
    fast path on a C-ordered copy gets full marks; the same without the copy (``.view`` on the caller's memory
    raises) loses test_db_hard_inputs only."""
    pytest.importorskip("cv2")
    honest = UINT64_ROWS.replace("LAYOUT", "np.ascontiguousarray")
    assert_full_marks(grade_with("lab08_image_diff", {"diff_bbox": honest}))
    results = grade_with("lab08_image_diff", {"diff_bbox": UINT64_ROWS.replace("LAYOUT", "")})
    assert {gid for gid, (score, mx, _) in results.items() if score < mx} == {"test_db_hard_inputs"}, results


def test_compute_gae_returning_a_namedtuple():
    """A namedtuple (collections' or typing's) is a tuple: it crosses as the plain tuple of its items."""
    src = plain_reference("rlprep.algos.gae:compute_gae")
    assert src.count("    return advantages, returns") == 1
    src = ("from typing import NamedTuple\n\n\nclass GAEResult(NamedTuple):\n    advantages: np.ndarray\n"
           "    returns: np.ndarray\n\n\n" + src.replace("    return advantages, returns",
                                                       "    return GAEResult(advantages, returns)"))
    results = grade_with("lab01_gae", {"compute_gae": src})
    assert_full_marks(results)

"""Attacks on the comparison: a planted bug returned in a low precision (``.to(torch.bfloat16)``, ``.astype(float16)``)
so that the test compares it at that precision's loose tolerance and lets the bug through.

The tolerance must follow the inputs the test chose (``rlprep.grading.asserts.note_inputs``); an answer's dtype may
loosen a float64 test to float32's tolerance (an honest answer may compute in float32), never further.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import torch
from lab_grading import error, graded_cells, passed

from rlprep.grading import asserts
from rlprep.grading.executor import score_in_process
from rlprep.grading.templating import rendered_solution

ROOT = Path(__file__).resolve().parents[2]


GRPO_LOSS = """
def grpo_loss(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
              aggregation="token", importance_level="token"):
    m = mask.to(logp_new.dtype)
    log_ratio = torch.where(m > 0, logp_new - logp_old.detach(), torch.zeros_like(logp_new))  # (B, T)
    if importance_level == "sequence":  # GSPO: one length-normalised ratio per row
        log_ratio = (log_ratio.sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp(min=1.0)).expand_as(m)
    ratio = torch.exp(log_ratio)
    adv = advantages.detach().unsqueeze(1)  # (B, 1)
    per_token = -torch.min(ratio * adv, ratio.clamp(1 - eps_low, 1 + eps_high) * adv)
    if beta > 0:
        log_r = KL_LOG_RATIO
        per_token = per_token + beta * (torch.exp(log_r) - log_r - 1)
    masked = torch.where(m > 0, per_token, torch.zeros_like(per_token))
    if aggregation == "token":
        loss = masked.sum() / m.sum().clamp(min=1.0)
    else:
        loss = (masked.sum(1) / m.sum(1).clamp(min=1.0)).mean()
    return loss CAST
"""


def _grpo_loss(log_ratio: str, cast: str) -> str:
    return GRPO_LOSS.replace("KL_LOG_RATIO", log_ratio).replace(" CAST", cast)


def test_grpo_loss_with_the_kl_reversed_and_cast_to_bfloat16_fails_the_kl_test():
    # lab05: the k3 of KL(pi_ref || pi) instead of KL(pi || pi_ref). Cast to bfloat16, it was compared at
    # bfloat16's tolerance (3%) and scored 20/20 (deserved 18/20).
    nb = rendered_solution("lab05_grpo", ROOT)
    references = _references(nb)
    honest = {}
    exec(_grpo_loss("ref_logp.detach() - logp_new", ""), {"torch": torch}, honest)  # test's own code
    assert score_in_process(nb, dict(references, **honest))["test_grpo_kl"][2] == ""  # the test's own answer passes
    cells = graded_cells("lab05_grpo", {"grpo_loss": _grpo_loss("logp_new - ref_logp.detach()",
                                                                ".to(torch.bfloat16)")}, only={"test_grpo_kl"})
    assert not passed(cells["test_grpo_kl"]), "the bfloat16 cast hid the reversed KL"
    assert "beta * k3(pi || pi_ref) must be added to the loss" in error(cells["test_grpo_kl"])


# -- every catalogued bug, cast to 16 or 32 bits, in-process (the comparison is the grader's either way) --------
LABS = ["lab01_gae", "lab02_reward_model", "lab03_ppo_rlhf", "lab04_dpo", "lab05_grpo",
        "lab06_importance_sampling", "lab07_infonce", "lab09_atlas"]  # lab08 returns ints: nothing to cast


def _references(nb) -> dict:
    out = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("rlprep", {})
        if meta.get("role") == "answer" and meta.get("reference"):
            module, name = meta["reference"].split(":")
            out[name] = getattr(importlib.import_module(module), name)
    return out


def _low(x, bits: int):
    """``x`` with every float tensor and numpy value in 16 bits (bfloat16 / float16) or 32 bits."""
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.bfloat16 if bits == 16 else torch.float32)
    if isinstance(x, (np.ndarray, np.floating)) and x.dtype.kind == "f":
        return x.astype(np.float16 if bits == 16 else np.float32)
    if type(x) in (tuple, list):
        return type(x)(_low(v, bits) for v in x)
    if type(x) is dict:
        return {k: _low(v, bits) for k, v in x.items()}
    return x


def _cast(fn, bits: int):
    def low_precision(*args, **kwargs):
        return _low(fn(*args, **kwargs), bits)

    return low_precision


def _score(nb, functions) -> float:
    return sum(points for points, _, _ in score_in_process(nb, functions).values())


@pytest.mark.parametrize("lab", LABS)
def test_casting_a_catalogued_bug_to_16_or_32_bits_never_earns_points(lab):
    nb = rendered_solution(lab, ROOT)
    references = _references(nb)
    bugs = importlib.import_module(f"catalog.{lab}").BUGS
    cases = ([("compute_gae", fn) for fn in bugs.values()] if lab == "lab01_gae"
             else [(name, fn) for name, fns in bugs.items() for fn in fns])
    gained = {}
    for name, bug in cases:
        plain = _score(nb, dict(references, **{name: bug}))
        for bits in (16, 32):
            cast = _score(nb, dict(references, **{name: _cast(bug, bits)}))
            if cast > plain:
                gained[f"{bug.__name__} in {bits} bits"] = (plain, cast)
    assert not gained, f"{{bug: (points as written, points cast)}}: {gained}"


# -- the rule itself (milliseconds) ------------------------------------------------------------------------------
def _compare(inputs, answer, expected, **tol):
    asserts.begin_test()
    asserts.note_inputs(inputs)
    asserts.assert_close(answer, expected, "p", **tol)


def test_the_tolerance_follows_the_inputs_and_a_cast_loosens_it_no_further_than_float32():
    want = np.array([0.3068528194400547, 1.25])
    off = want + 3e-3  # a small bug: within bfloat16's 3%, far outside float32's 7.6e-6
    x32, x64 = torch.zeros(2), torch.zeros(2, dtype=torch.float64)
    with pytest.raises(asserts.PropertyFailed):
        _compare((x32,), torch.tensor(off).to(torch.bfloat16), want)  # float32 inputs: float32's tolerance
    with pytest.raises(asserts.PropertyFailed):
        _compare((x64,), torch.tensor(off).to(torch.bfloat16), want)  # float64 inputs: float32's at the loosest
    with pytest.raises(asserts.PropertyFailed):
        _compare((x32.numpy(),), off.astype(np.float16), want)
    # an honest float32 answer stays accepted, to float32 inputs and to float64 ones (it may compute in float32)
    _compare((x32,), torch.tensor(want, dtype=torch.float32), want)
    _compare({"a": [x32.numpy()]}, want.astype(np.float32), want)
    _compare((x64,), want.astype(np.float32), want)
    # a float64 answer to float64 inputs keeps the test's own tolerance (1e-6 here)
    with pytest.raises(asserts.PropertyFailed):
        _compare((x64,), want + 4e-6, want)
    # 16-bit inputs chosen by the test get float32's tolerance too: the labs ask for float32 at least
    _compare((x32.to(torch.bfloat16),), torch.tensor(want, dtype=torch.float32), want)
    with pytest.raises(asserts.PropertyFailed):
        _compare((x32.to(torch.bfloat16),), torch.tensor(want).to(torch.bfloat16), want)


def test_a_cell_is_as_tolerant_as_its_least_precise_call_and_python_floats_do_not_count():
    near = np.float64(1.0 + 4e-6)  # outside the default rtol 1e-6, inside float32's 7.6e-6
    asserts.begin_test()
    asserts.note_inputs((torch.zeros(1, dtype=torch.float64), torch.zeros(1)), {"beta": 0.1})  # promotes to float64
    with pytest.raises(asserts.PropertyFailed):
        asserts.assert_close(near, 1.0, "p")
    asserts.note_inputs((), {"x": torch.zeros(1)})  # a float32 call in the same cell
    asserts.assert_close(near, 1.0, "p")
    asserts.begin_test()  # the next cell starts strict again
    asserts.note_inputs((1.0, [2.0]), {"gamma": 0.5})
    with pytest.raises(asserts.PropertyFailed):
        asserts.assert_close(near, 1.0, "p")

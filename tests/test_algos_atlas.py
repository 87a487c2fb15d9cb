"""The atlas registries: hand-worked values where TRL has no such loss (REINFORCE), invariants, and bad input."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

import rlprep.algos
from rlprep.algos.distill_losses import DISTILL_LOSSES
from rlprep.algos.pg_losses import PG_ADVANTAGES, PG_LOSSES
from rlprep.algos.preference_losses import PREFERENCE_LOSSES, preference_loss

F64 = torch.float64


def test_registries_name_every_variant_of_the_atlas():
    assert sorted(PG_LOSSES) == sorted(PG_ADVANTAGES) == sorted(
        ["reinforce", "rloo", "grpo", "dr_grpo", "dapo", "gspo", "cispo", "sapo"])
    assert sorted(PREFERENCE_LOSSES) == sorted(["dpo", "ipo", "hinge", "robust_dpo", "simpo", "kto", "orpo"])
    assert sorted(DISTILL_LOSSES) == sorted(["forward_kl", "reverse_kl", "gkd_jsd"])


def test_reinforce_matches_the_score_function_estimator_worked_by_hand():
    # rewards [1, 0] -> batch-mean baseline 0.5 -> A = [0.5, -0.5]
    # log pi(y_1) = -1 - 2 = -3, log pi(y_2) = -0.5 (its second token is padding)
    # loss = -(1/2) (0.5 * -3 + -0.5 * -0.5) = -(1/2)(-1.25) = 0.625
    # d loss / d logp[b, t] = -A_b * mask[b, t] / B = [[-0.25, -0.25], [0.25, 0]]
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -7.0]], dtype=F64, requires_grad=True)
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=F64)
    advantages = PG_ADVANTAGES["reinforce"](torch.tensor([1.0, 0.0], dtype=F64), 2)
    assert advantages.tolist() == [0.5, -0.5]
    loss = PG_LOSSES["reinforce"](logp, logp.detach(), advantages, mask)
    loss.backward()
    assert loss.item() == pytest.approx(0.625, abs=1e-12)
    assert torch.allclose(logp.grad, torch.tensor([[-0.25, -0.25], [0.25, 0.0]], dtype=F64))


def test_on_policy_every_pg_variant_is_a_weighted_policy_gradient():
    """At logp_new == logp_old each loss's gradient is -A_i * w / normaliser per valid token (no clip is active)."""
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=F64)
    adv = torch.tensor([1.0, -2.0], dtype=F64)
    expected = {  # the per-token weight of -A_i: 1/(B |o_i|) sequence mean, 1/N token mean, 1/(B T) Dr. GRPO
        "grpo": torch.tensor([[1 / 6] * 3, [1 / 2, 0, 0]]), "sapo": torch.tensor([[1 / 6] * 3, [1 / 2, 0, 0]]),
        "gspo": torch.tensor([[1 / 6] * 3, [1 / 2, 0, 0]]),
        "dapo": torch.tensor([[1 / 4] * 3, [1 / 4, 0, 0]]), "cispo": torch.tensor([[1 / 4] * 3, [1 / 4, 0, 0]]),
        "dr_grpo": torch.tensor([[1 / 6] * 3, [1 / 6, 0, 0]]),
        "reinforce": torch.tensor([[1 / 2] * 3, [1 / 2, 0, 0]]), "rloo": torch.tensor([[1 / 2] * 3, [1 / 2, 0, 0]]),
    }
    for name, weight in expected.items():
        logp = torch.tensor([[-0.3, -1.2, -2.0], [-0.7, -9.0, -9.0]], dtype=F64, requires_grad=True)
        PG_LOSSES[name](logp, logp.detach(), adv, mask).backward()
        assert torch.allclose(logp.grad, -adv[:, None] * weight.to(F64)), name


def test_dr_grpo_removes_the_length_bias_grpo_has():
    # two completions with the same advantage, lengths 1 and 3: GRPO gives the short one's token 3x the push
    mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], dtype=F64)
    adv = torch.tensor([1.0, 1.0], dtype=F64)
    grads = {}
    for name in ("grpo", "dr_grpo"):
        logp = torch.zeros(2, 3, dtype=F64, requires_grad=True)
        PG_LOSSES[name](logp, logp.detach(), adv, mask).backward()
        grads[name] = logp.grad
    assert grads["grpo"][0, 0] == pytest.approx(3 * grads["grpo"][1, 0].item())
    assert grads["dr_grpo"][0, 0] == pytest.approx(grads["dr_grpo"][1, 0].item())


def test_cispo_keeps_the_gradient_of_a_token_ppo_clips():
    # ratio e^0.5 > 1.2 with A > 0: GRPO's min() keeps the constant clipped term, CISPO still pushes the token
    logp_old = torch.zeros(1, 1, dtype=F64)
    adv = torch.tensor([1.0], dtype=F64)
    mask = torch.ones(1, 1, dtype=F64)
    for name, zero in (("grpo", True), ("cispo", False)):
        logp = torch.full((1, 1), 0.5, dtype=F64, requires_grad=True)
        PG_LOSSES[name](logp, logp_old, adv, mask).backward()
        assert (logp.grad.abs().item() == 0) is zero, name


def test_ipo_targets_a_finite_margin_and_dpo_at_the_reference_is_ln2():
    zeros = torch.zeros(3, dtype=F64)
    ones = torch.ones(3, dtype=F64)
    tensors = dict(policy_chosen_logps=zeros, policy_rejected_logps=zeros, ref_chosen_logps=zeros,
                   ref_rejected_logps=zeros, chosen_lengths=ones, rejected_lengths=ones, chosen_nll=zeros.sum())
    assert preference_loss("dpo", tensors).item() == pytest.approx(0.6931471805599453)
    assert preference_loss("ipo", tensors, beta=0.1).item() == pytest.approx(25.0)  # (0 - 1/(2*0.1))^2
    at_target = dict(tensors, policy_chosen_logps=torch.full((3,), 5.0, dtype=F64))  # margin 5 = 1/(2 beta)
    assert preference_loss("ipo", at_target, beta=0.1).item() == pytest.approx(0.0)
    with pytest.raises(ValueError, match="needs"):
        preference_loss("simpo", {"policy_chosen_logps": zeros})
    with pytest.raises(ValueError, match="unknown"):
        preference_loss("dpo2", tensors)


def test_bad_shapes_and_values_are_value_errors():
    logp = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"\[B, T\]"):
        PG_LOSSES["cispo"](logp, logp, torch.zeros(2, 3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="beta > 0 needs ref_logp"):
        PG_LOSSES["sapo"](logp, logp, torch.zeros(2), torch.ones(2, 3), beta=0.1)
    with pytest.raises(ValueError, match="max_length"):
        PG_LOSSES["dr_grpo"](logp, logp, torch.zeros(2), torch.ones(2, 3), max_length=2)
    with pytest.raises(ValueError, match="label_smoothing"):
        PREFERENCE_LOSSES["robust_dpo"](*[torch.zeros(2)] * 4, label_smoothing=0.5)
    with pytest.raises(ValueError, match="< 0"):
        PREFERENCE_LOSSES["orpo"](torch.zeros(2), torch.zeros(2), torch.ones(2), torch.ones(2), torch.tensor(1.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        DISTILL_LOSSES["gkd_jsd"](torch.zeros(1, 2, 3), torch.zeros(1, 2, 3), torch.ones(1, 2), beta=1.5)


def _k3_expressions(tree) -> list[int]:
    """Line numbers of every ``exp(x) - x - 1`` (or ``expm1(x) - x``) in a module, whatever x is called."""
    def is_exp_of(node, name):
        return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == name

    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
            continue
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and right.value == 1 and isinstance(left, ast.BinOp) \
                and isinstance(left.op, ast.Sub) and is_exp_of(left.left, "exp") \
                and ast.dump(left.left.args[0]) == ast.dump(left.right):
            lines.append(node.lineno)  # exp(x) - x - 1
        elif is_exp_of(left, "expm1") and ast.dump(left.args[0]) == ast.dump(right):
            lines.append(node.lineno)  # expm1(x) - x
    return lines


def test_k3_is_written_once_in_algos():
    """One source per formula: the k3 KL is ``kl_k3``; every loss with a KL term calls it (issue 34)."""
    algos = Path(rlprep.algos.__file__).parent
    found = {path.name: _k3_expressions(ast.parse(path.read_text())) for path in sorted(algos.glob("*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {"grpo.py": found["grpo.py"]}
    assert len(found["grpo.py"]) == 1
    assert _k3_expressions(ast.parse("def f(a, b):\n    r = b - a\n    return torch.exp(r) - r - 1\n")) == [3]

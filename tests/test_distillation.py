"""Distillation losses (forward/reverse KL on full-vocabulary logits) and a seeded short run."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.distillation import (DistillConfig, build_student, completion_logits, distill, forward_kl_per_token,
                                 reverse_kl_per_token, warm_start)


def _probs(logits):
    return [math.exp(x) / sum(math.exp(y) for y in logits) for x in logits]


def test_kl_directions_match_hand_computation():
    # one position, vocabulary of 3: p_T = softmax([2, 0, 0]), q_S = softmax([0, 1, 0])
    t_logits, s_logits = [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    p, q = _probs(t_logits), _probs(s_logits)
    fwd = sum(pi * math.log(pi / qi) for pi, qi in zip(p, q))
    rev = sum(qi * math.log(qi / pi) for pi, qi in zip(p, q))
    s = torch.tensor([[s_logits]])  # (1, 1, 3)
    t = torch.tensor([[t_logits]])
    assert forward_kl_per_token(s, t).item() == pytest.approx(fwd, abs=1e-6)
    assert reverse_kl_per_token(s, t).item() == pytest.approx(rev, abs=1e-6)
    assert fwd != pytest.approx(rev, abs=1e-3)  # the two directions differ on this example


def test_kl_invariants_and_shapes():
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(2, 5, 7, generator=g), torch.randn(2, 5, 7, generator=g)
    for fn in (forward_kl_per_token, reverse_kl_per_token):
        out = fn(s, t)
        assert out.shape == (2, 5)
        assert (out >= -1e-6).all()
        assert fn(s, s + 3.0).abs().max() < 1e-5  # shifting logits leaves the distribution unchanged
    # forward KL(p||q) with the arguments swapped is reverse KL(q||p)
    assert torch.allclose(forward_kl_per_token(s, t), reverse_kl_per_token(t, s), atol=1e-5)
    with pytest.raises(ValueError, match="same"):
        forward_kl_per_token(s, t[:, :4])


def test_reverse_kl_gradient_matches_autograd_of_hand_formula():
    g = torch.Generator().manual_seed(1)
    s = torch.randn(1, 1, 4, generator=g, requires_grad=True)
    t = torch.randn(1, 1, 4, generator=g)
    reverse_kl_per_token(s, t).sum().backward()
    q = torch.softmax(s.detach()[0, 0], -1)
    log_ratio = torch.log_softmax(s.detach()[0, 0], -1) - torch.log_softmax(t[0, 0], -1)
    kl = (q * log_ratio).sum()
    expected = q * (log_ratio - kl)  # d/dz of Σ q log(q/p) w.r.t. the student's logits
    assert torch.allclose(s.grad[0, 0], expected, atol=1e-5)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="mode"):
        DistillConfig(mode="sideways")
    with pytest.raises(ValueError, match="steps"):
        DistillConfig(steps=0)


@pytest.fixture(scope="module")
def teacher_student():
    from rlprep.tinyworld import get_task, load_policy

    torch.manual_seed(0)
    teacher, tokenizer = load_policy("arithmetic", "smoke")
    task = get_task("arithmetic")
    student = build_student("smoke", tokenizer, n_layer=1, n_embd=48, seed=0)
    warm_start(student, tokenizer, task, steps=30, batch=32, lr=3e-3)
    return teacher, student, tokenizer, task


def test_completion_logits_predict_completion_tokens(teacher_student):
    from rlprep.rollout import generate, token_logprobs

    teacher, _, tokenizer, _ = teacher_student
    ro = generate(teacher, tokenizer, ["07+45=", "3+4="], max_new_tokens=3, temperature=1.0, seed=0)
    C = ro.completion_ids.shape[1]
    logits = completion_logits(teacher, ro.input_ids, ro.attention_mask, C)  # (B, C, V)
    picked = torch.log_softmax(logits, -1).gather(-1, ro.completion_ids[..., None]).squeeze(-1)
    expected = token_logprobs(teacher, ro.input_ids, ro.attention_mask)[:, -C:]
    mask = ro.completion_mask.bool()
    assert torch.allclose(picked[mask], expected[mask], atol=1e-5)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_seeded_short_run_reduces_divergence(teacher_student, mode):
    teacher, student0, tokenizer, task = teacher_student
    student = copy.deepcopy(student0)
    cfg = DistillConfig(mode=mode, steps=12, batch=32, lr=3e-3, eval_every=12, eval_size=32, seed=0)
    history = distill(student, teacher, tokenizer, task, cfg)
    losses = [r["loss/distill"] for r in history if "loss/distill" in r]
    assert len(losses) == 12
    assert sum(losses[-4:]) / 4 < sum(losses[:4]) / 4  # the chosen KL to the teacher went down
    assert history[-1]["stats/student_tokens"] > 0 and "eval/agree_own_prefix" in history[-1]
    assert all(not p.requires_grad for p in teacher.parameters())

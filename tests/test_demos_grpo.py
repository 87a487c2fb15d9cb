"""The GRPO/DAPO/GSPO demos of notebook 06: hand-worked values, invariants and seeded runs."""

from __future__ import annotations

import math

import pytest
import torch

from rlprep.demos.grpo import (clip_ceiling, entropy_change, group_bandit, on_policy_zero_loss,
                               ratio_spread_by_length, softmax_entropy, two_digit_credit)


def test_two_digit_credit_by_hand():
    first = torch.tensor([True, True, False, True])
    second = torch.tensor([True, False, True, True])
    out = two_digit_credit(first, second, p_first=0.8, p_second=0.5, lam=0.0)
    # GRPO: rewards [1, 0, 0, 1], mean 0.5, std (Bessel) sqrt(1/3); one value per answer on all 3 tokens
    a = 0.5 / (math.sqrt(1 / 3) + 1e-4)
    assert torch.allclose(out["grpo"][:, 0], torch.tensor([a, -a, -a, a], dtype=torch.float64), atol=1e-9)
    assert torch.equal(out["grpo"][:, 0:1].expand(4, 3), out["grpo"])
    # exact critic, lambda = 0: credit goes to the digit that decided the outcome
    expected = torch.tensor([[0.8 * 0.5 - 0.4 + 0.1, 0.5, 0.0],  # V1 - V0 = 0.5 - 0.4, V2 - V1 = 1 - 0.5
                             [0.1, -0.5, 0.0],                   # second digit wrong: 0 - 0.5
                             [-0.4, 0.0, 0.0],                   # first digit wrong: V1 = 0
                             [0.1, 0.5, 0.0]], dtype=torch.float64)
    expected[0, 0] = 0.1
    assert torch.allclose(out["gae"], expected, atol=1e-12)
    # lambda = 1: every token gets the Monte-Carlo return minus its value
    mc = two_digit_credit(first, second, 0.8, 0.5, lam=1.0)["gae"]
    assert torch.allclose(mc[:, 0], out["reward"] - 0.4, atol=1e-12)


def test_on_policy_loss_is_zero_but_gradient_is_not():
    torch.manual_seed(0)
    out = on_policy_zero_loss(torch.randn(4, 10), lambda t: (t[:, 0] < 5).double(), group_size=8, seed=1)
    assert out["reward_std"] > 0
    assert abs(out["loss"]) < 1e-12 and out["grad_norm"] > 1e-3
    flat = on_policy_zero_loss(torch.randn(4, 10), lambda t: torch.ones(t.shape[0]), group_size=8, seed=1)
    assert flat["reward_std"] == 0 and flat["grad_norm"] == 0  # equal rewards: the real no-learning case


def test_entropy_change_first_order_matches_exact_for_small_steps():
    gen = torch.Generator().manual_seed(3)
    z = torch.randn(12, generator=gen, dtype=torch.float64)
    adv = torch.randn(12, generator=gen, dtype=torch.float64)
    pi = torch.softmax(z, 0)
    for eta in (1e-2, 1e-3):
        exact, first = entropy_change(z, eta * pi * (adv - (pi * adv).sum()))
        assert exact == pytest.approx(first, rel=20 * eta)
    # raising the most likely token lowers entropy; raising the least likely raises it
    top, low = torch.zeros(12, dtype=torch.float64), torch.zeros(12, dtype=torch.float64)
    top[z.argmax()] = 0.01
    low[z.argmin()] = 0.01
    assert entropy_change(z, top)[0] < 0 < entropy_change(z, low)[0]
    assert float(softmax_entropy(torch.zeros(8))) == pytest.approx(math.log(8))


def test_clip_ceiling_dapo_numbers():
    assert clip_ceiling(0.01, 0.2) == pytest.approx(0.012)
    assert clip_ceiling(0.9, 0.2) == pytest.approx(1.08)
    assert clip_ceiling(0.01, 0.28) == pytest.approx(0.0128)
    with pytest.raises(ValueError):
        clip_ceiling(0.0, 0.2)


def test_sequence_ratio_spread_shrinks_as_one_over_sqrt_length():
    out = ratio_spread_by_length([1, 16, 64], sigma=0.1, n_seqs=4000, seed=0)
    assert out["seq_log_std"][0] == pytest.approx(out["token_log_std"][0])  # one token: the same ratio
    for i, T in enumerate([1, 16, 64]):
        assert out["token_log_std"][i] == pytest.approx(0.1, rel=0.05)
        assert out["seq_log_std"][i] == pytest.approx(0.1 / math.sqrt(T), rel=0.08)
    assert out["seq_clip_frac"][-1] < out["token_clip_frac"][-1]


def test_group_bandit_kl_penalty_keeps_policy_closer_and_signal_dries_up():
    V = 20
    correct = torch.zeros(V, dtype=torch.bool)
    correct[:4] = True
    ref = torch.tensor([0.05] + [0.01] * 3 + [0.92 / 16] * 16)
    free = group_bandit(correct, ref, steps=60, lr=0.3, beta=0.0, seed=0)
    tied = group_bandit(correct, ref, steps=60, lr=0.3, beta=0.5, seed=0)
    assert free["accuracy"][-1] > free["accuracy"][0] + 0.3  # it learns
    assert free["entropy"][-1] < free["entropy"][0]
    assert tied["kl_ref"][-1] < free["kl_ref"][-1]
    long = group_bandit(correct, ref, steps=150, lr=0.3, seed=0)
    early, late = long["frac_zero_std_groups"][5:15], long["frac_zero_std_groups"][-10:]
    assert sum(late) / 10 > 0.8 > sum(early) / 10  # as the policy converges, groups tie: no advantage left

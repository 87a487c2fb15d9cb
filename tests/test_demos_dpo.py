"""The DPO bandit demos of notebook 05: each identity of the derivation, checked to float precision."""

from __future__ import annotations

import math

import pytest
import torch

from rlprep.demos.dpo import (dpo_gradient_weights, dpo_population_loss, fit_dpo_bandit, implicit_reward,
                              kl_divergence, kl_regularized_objective, kl_regularized_optimum)

REF = torch.tensor([0.3, 0.25, 0.2, 0.15, 0.1], dtype=torch.float64)
REWARDS = torch.tensor([1.0, 0.0, 2.0, -1.0, 0.5], dtype=torch.float64)


def test_optimum_beats_every_perturbation_of_the_objective():
    pi_star = kl_regularized_optimum(REF, REWARDS, 0.5)
    best = kl_regularized_objective(pi_star, REF, REWARDS, 0.5)
    gen = torch.Generator().manual_seed(0)
    for _ in range(200):
        other = torch.softmax(pi_star.log() + 0.3 * torch.randn(5, generator=gen, dtype=torch.float64), 0)
        assert kl_regularized_objective(other, REF, REWARDS, 0.5) < best
    # the maximum is beta log Z (plug pi* into the objective): a value worked by hand
    log_z = torch.logsumexp(REF.log() + REWARDS / 0.5, 0)
    assert best == pytest.approx(0.5 * float(log_z), abs=1e-12)


def test_implicit_reward_recovers_the_reward_up_to_a_constant():
    for beta in (0.1, 1.0, 3.0):
        pi_star = kl_regularized_optimum(REF, REWARDS, beta)
        shift = implicit_reward(pi_star, REF, beta) - REWARDS  # = -beta log Z for every response
        assert torch.allclose(shift, shift[0].expand(5), atol=1e-10)


def test_population_loss_is_ln2_at_the_reference_for_both_label_kinds():
    for labels in ("bt", "hard"):
        assert float(dpo_population_loss(REF.log(), REF, REWARDS, 0.3, labels)) == pytest.approx(math.log(2), abs=1e-12)


def test_dpo_with_bradley_terry_labels_converges_to_the_kl_regularised_optimum():
    kls = []
    for beta in (0.5, 1.0, 2.0):
        pi, losses = fit_dpo_bandit(REF, REWARDS, beta, steps=200, lr=0.1)
        assert torch.allclose(pi, kl_regularized_optimum(REF, REWARDS, beta), atol=1e-4), beta
        assert losses[-1] < losses[0]
        kls.append(kl_divergence(pi, REF))
    assert kls[0] > kls[1] > kls[2]  # larger beta stays closer to the reference


def test_hard_labels_drive_kl_past_the_regularised_optimum():
    pi, _ = fit_dpo_bandit(REF, REWARDS, 1.0, labels="hard", steps=400)
    assert kl_divergence(pi, REF) > 2 * kl_divergence(kl_regularized_optimum(REF, REWARDS, 1.0), REF)


def test_gradient_weight_is_beta_sigmoid_minus_beta_margin():
    margins = torch.tensor([-6.0, -1.0, 0.0, 2.0, 9.0], dtype=torch.float64)
    for beta in (0.1, 0.5, 2.0):
        assert torch.allclose(dpo_gradient_weights(margins, beta), beta * torch.sigmoid(-beta * margins), atol=1e-12)


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="beta must be > 0"):
        kl_regularized_optimum(REF, REWARDS, 0.0)
    with pytest.raises(ValueError, match=r"\[K\]"):
        kl_regularized_optimum(REF, REWARDS[:3], 1.0)
    with pytest.raises(ValueError, match="labels"):
        dpo_population_loss(REF.log(), REF, REWARDS, 1.0, labels="soft")


def test_adam_removes_beta_from_the_first_step_and_beta_acts_through_saturation():
    from rlprep.demos.dpo import dpo_optimizer_check

    rows = dpo_optimizer_check(betas=(0.1, 0.5, 1.0), steps=300, lr=0.05)
    adam = [r["adam_first_step"] for r in rows]
    sgd = [r["sgd_first_step"] for r in rows]
    rmsprop = [r["rmsprop_first_step"] for r in rows]
    # Adam's first step is lr * sign(g) on the two moving logits: lr * sqrt(2), whatever beta (up to eps)
    assert adam == pytest.approx([0.05 * math.sqrt(2)] * 3, rel=1e-6)
    # RMSprop (the DPO paper's optimizer): v = (1 - alpha) g^2, step lr * g / sqrt(v) = lr * sign(g) / sqrt(0.01):
    # 10 lr on each moving logit, whatever beta
    assert rmsprop == pytest.approx([0.05 * 10 * math.sqrt(2)] * 3, rel=1e-5)  # eps 1e-8 next to sqrt(v) ~ 1e-3
    # SGD's first step is lr * beta * sigma(0) * sqrt(2): proportional to beta
    assert sgd == pytest.approx([0.05 * b * 0.5 * math.sqrt(2) for b in (0.1, 0.5, 1.0)], rel=1e-9)
    margins = [r["adam_margin"] for r in rows]
    assert margins[0] > margins[1] > margins[2]  # a smaller beta lets the log-ratio margin grow further
    assert margins[0] > 1 / 0.1  # past 1/beta before the pair saturates
    assert all(r["pair_weight"] < 0.2 for r in rows)  # every pair has saturated by the end

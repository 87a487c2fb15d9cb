"""KL estimator demo (notebook 01, G05): exact bias claims, Schulman's table, gradient identities, placements."""

import math

import pytest
import torch

from rlprep.demos.kl_estimators import (categorical_kl, estimator_stats, expected_gradients,
                                        gaussian_estimator_samples, kl_in_reward_vs_in_loss)


def _logits(seed, k=7):
    return torch.randn(k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_k1_k3_exactly_unbiased_k2_biased_k3_nonnegative():
    stats = estimator_stats(_logits(0), _logits(1))
    assert stats["true_kl"]["value"] > 0.1
    assert abs(stats["k1"]["bias"]) < 1e-12 and abs(stats["k3"]["bias"]) < 1e-12
    assert abs(stats["k2"]["bias"]) > 1e-3
    assert stats["k3"]["p_negative"] == 0 and stats["k2"]["p_negative"] == 0
    assert stats["k1"]["p_negative"] > 0


def test_categorical_kl_by_hand():
    # q = (1/2, 1/2), p = (1/4, 3/4): KL = 0.5 ln 2 + 0.5 ln(2/3)
    q = torch.log(torch.tensor([0.5, 0.5], dtype=torch.float64))
    p = torch.log(torch.tensor([0.25, 0.75], dtype=torch.float64))
    assert categorical_kl(q, p) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3), abs=1e-12)


def test_gaussian_table_matches_schulman_2020():
    # Schulman's table for KL = 0.005 (shift 0.1): k1 std/KL ~ 20, k2 and k3 ~ 1.42.
    samples = gaussian_estimator_samples(0.1, n_samples=400_000, seed=3)
    kl = 0.005
    assert samples["k1"].std() / kl == pytest.approx(20, rel=0.03)
    assert samples["k3"].std() / kl == pytest.approx(1.42, rel=0.03)
    # KL = 0.5 (shift 1): k2 is biased by about +25 % of the true KL.
    samples = gaussian_estimator_samples(1.0, n_samples=400_000, seed=4)
    assert (samples["k2"].mean() - 0.5) / 0.5 == pytest.approx(0.25, abs=0.02)
    assert abs(float(samples["k3"].mean()) - 0.5) < 0.01


def test_expected_gradients_identities():
    g = expected_gradients(_logits(2, 5), _logits(3, 5))
    assert torch.allclose(g["k1"], torch.zeros(5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(g["k3"], g["forward_kl"], atol=1e-10)
    assert torch.allclose(g["k2"], g["reverse_kl"], atol=1e-10)
    assert not torch.allclose(g["k3"], g["reverse_kl"], atol=1e-3)


def test_placements_on_a_batch():
    gen = torch.Generator().manual_seed(0)
    B, T = 4, 5
    logp = -torch.rand(B, T, generator=gen)
    ref_logp = -torch.rand(B, T, generator=gen)
    mask = torch.ones(B, T)
    mask[1, 3:] = 0
    score = torch.tensor([1.0, 0.0, 0.5, 2.0])
    out = kl_in_reward_vs_in_loss(score, logp, ref_logp, mask, beta=0.1, group_size=2)
    # In the reward (gamma = lam = 1, zero critic): A_t = score - beta * sum_{t' >= t} k1_t'.
    k1 = (logp - ref_logp) * mask
    togo = k1.flip(1).cumsum(1).flip(1)
    expected = (score[:, None] - 0.1 * togo) * mask
    assert torch.allclose(out["adv_in_reward"], expected, atol=1e-6)
    # In the loss: one advantage per row, on valid tokens only; KL gradient is local: beta * (1 - pi_ref / pi).
    row = out["adv_in_loss"][0]
    assert torch.allclose(row, row[0].expand_as(row))
    assert torch.all(out["adv_in_loss"][1, 3:] == 0)
    assert torch.allclose(out["kl_grad_in_loss"], 0.1 * (1 - torch.exp(ref_logp - logp)) * mask, atol=1e-6)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="logits_q and logits_p"):
        estimator_stats(torch.zeros(3), torch.zeros(4))

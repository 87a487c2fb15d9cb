"""PPO toy (notebook 03): the surrogate's shape for A > 0 and A < 0, the adaptive-KL rule, and the toy bandit."""

import numpy as np
import pytest

from rlprep.demos.ppo_toy import ToyPPOConfig, adaptive_kl_beta, run_toy_ppo, surrogate_curve


def test_surrogate_positive_advantage():
    c = surrogate_curve([0.5, 1.0, 1.1, 1.5], advantage=2.0, clip_eps=0.2)
    np.testing.assert_allclose(c["min"], [1.0, 2.0, 2.2, 2.4])  # capped at (1 + eps) A
    np.testing.assert_allclose(c["grad"], [2.0, 2.0, 2.0, 0.0])  # flat (no gradient) above 1 + eps only


def test_surrogate_negative_advantage():
    c = surrogate_curve([0.5, 0.9, 1.5], advantage=-1.0, clip_eps=0.2)
    np.testing.assert_allclose(c["min"], [-0.8, -0.9, -1.5])  # floor at (1 - eps) A, unbounded below for large rho
    np.testing.assert_allclose(c["grad"], [0.0, -1.0, -1.0])  # gradient kept where a bad action became likelier
    assert (c["max"] >= c["min"]).all()


def test_adaptive_rule():
    assert adaptive_kl_beta(1.0, 0.001, 0.01) == 0.5
    assert adaptive_kl_beta(1.0, 0.02, 0.01) == 2.0
    assert adaptive_kl_beta(1.0, 0.012, 0.01) == 1.0
    with pytest.raises(ValueError):
        adaptive_kl_beta(0.0, 0.01, 0.01)


def test_toy_learns_and_clip_bounds_update():
    clip = run_toy_ppo(ToyPPOConfig(method="clip", iterations=15, epochs=2, seed=1))
    assert clip["normalized"][-1] > clip["normalized"][0] + 0.3
    none = run_toy_ppo(ToyPPOConfig(method="none", iterations=15, epochs=8, lr=0.3, seed=1))
    clip8 = run_toy_ppo(ToyPPOConfig(method="clip", iterations=15, epochs=8, lr=0.3, seed=1))
    assert clip8["kl_old_new"].mean() < none["kl_old_new"].mean()


def test_adaptive_beta_moves():
    out = run_toy_ppo(ToyPPOConfig(method="adaptive_kl", iterations=10, kl_target=1e-4, seed=2))
    assert out["beta"][-1] > out["beta"][0]  # KL far above target -> beta doubled


def test_config_errors():
    with pytest.raises(ValueError, match="method"):
        ToyPPOConfig(method="trpo")
    with pytest.raises(ValueError, match="divide"):
        ToyPPOConfig(batch_size=10, minibatch_size=4)


def test_target_kl_stops_a_round_early_and_bounds_its_kl():
    base = dict(method="clip", iterations=8, epochs=8, lr=0.3, seed=1)
    free = run_toy_ppo(ToyPPOConfig(**base))
    stopped = run_toy_ppo(ToyPPOConfig(target_kl=0.01, **base))
    full = 8 * 64 // 16
    assert (free["updates"] == full).all()                       # no target: every minibatch step is taken
    assert (stopped["updates"] < full).any() and (stopped["updates"] >= 1).all()  # the first step always runs
    assert stopped["kl_old_new"].mean() < free["kl_old_new"].mean()
    with pytest.raises(ValueError, match="target_kl"):
        ToyPPOConfig(target_kl=0.0)


def test_entropy_is_exact_and_falls_as_the_policy_sharpens():
    out = run_toy_ppo(ToyPPOConfig(method="none", iterations=10, epochs=8, lr=1.0, seed=0))
    assert out["entropy"].shape == (11,) and out["updates"].shape == (10,)
    assert 0 < out["entropy"][0] <= np.log(6) + 1e-12            # K = 6 actions
    assert out["entropy"][-1] < 0.5 * out["entropy"][0]          # a large unconstrained step collapses the policy


def test_clip_zeroes_gradients_but_ratios_overshoot_the_band():
    # the clip stops a sample's own push; its own last step, shared logits and Adam's momentum still carry it past
    aggressive = run_toy_ppo(ToyPPOConfig(method="clip", clip_eps=0.1, iterations=6, epochs=8, lr=0.3, seed=0))
    assert aggressive["overshoot"].shape == (6,)
    assert (aggressive["overshoot"] > 0.2).all()                  # a large share ends past the edge it favours
    gentle = run_toy_ppo(ToyPPOConfig(method="clip", clip_eps=0.1, iterations=6, epochs=8, lr=1e-4, seed=0))
    assert (gentle["overshoot"] == 0).all()                      # tiny steps never reach the edge

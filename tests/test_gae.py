"""compute_gae against a plain double loop, hand-worked values, its two limits (λ = 0, λ = 1), T = 1, a time
limit inside the buffer (SB3's reward fix) and the scan form gae_scan."""

from __future__ import annotations

import numpy as np
import pytest

from rlprep.algos.gae import compute_gae, gae_scan, truncation_rewards


def gae_by_definition(rewards, values, dones, last_value, gamma, lam):
    """A_t = Σ_l (γλ)^l δ_{t+l} summed explicitly up to the episode end (GAE Eq. 16), no recursion."""
    T = len(rewards)
    next_values = np.append(values[1:], last_value)
    deltas = rewards + gamma * next_values * (1 - dones) - values
    adv = np.zeros(T)
    for t in range(T):
        for k in range(t, T):
            adv[t] += (gamma * lam) ** (k - t) * deltas[k]
            if dones[k]:
                break
    return adv


@pytest.fixture
def rollout():
    rng = np.random.default_rng(0)
    T = 12
    rewards = rng.normal(size=T)
    values = rng.normal(size=T)
    dones = np.zeros(T)
    dones[[3, 7]] = 1.0
    return rewards, values, dones, 0.7


@pytest.mark.parametrize("gamma,lam", [(0.99, 0.95), (0.9, 0.5), (1.0, 1.0), (0.5, 0.0)])
def test_matches_the_sum_definition(rollout, gamma, lam):
    rewards, values, dones, last_value = rollout
    adv, ret = compute_gae(rewards, values, dones, last_value, gamma, lam)
    np.testing.assert_allclose(adv, gae_by_definition(rewards, values, dones, last_value, gamma, lam), atol=1e-12)
    np.testing.assert_allclose(ret, adv + values, atol=1e-12)


def test_hand_worked_three_steps():
    # r = [1, 0, 2], V = [0.5, 1, 1], not done, V(s_T) = 2, γ = 0.5, λ = 0.5:
    # δ = [1 + 0.5·1 − 0.5, 0 + 0.5·1 − 1, 2 + 0.5·2 − 1] = [1, −0.5, 2]
    # A_2 = 2, A_1 = −0.5 + 0.25·2 = 0, A_0 = 1 + 0.25·0 = 1
    adv, ret = compute_gae(np.array([1.0, 0.0, 2.0]), np.array([0.5, 1.0, 1.0]), np.zeros(3), 2.0, 0.5, 0.5)
    np.testing.assert_allclose(adv, [1.0, 0.0, 2.0])
    np.testing.assert_allclose(ret, [1.5, 1.0, 3.0])


def test_lambda_zero_is_the_td_residual(rollout):
    rewards, values, dones, last_value = rollout
    adv, _ = compute_gae(rewards, values, dones, last_value, gamma=0.9, lam=0.0)
    next_values = np.append(values[1:], last_value)
    np.testing.assert_allclose(adv, rewards + 0.9 * next_values * (1 - dones) - values, atol=1e-12)


def test_lambda_one_is_the_monte_carlo_return_minus_v(rollout):
    rewards, values, dones, last_value = rollout
    gamma = 0.9
    adv, ret = compute_gae(rewards, values, dones, last_value, gamma=gamma, lam=1.0)
    mc = np.zeros_like(rewards)
    running = last_value  # bootstrap only past the cut, dones[T-1] == 0 here
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running * (1 - dones[t])
        mc[t] = running
    np.testing.assert_allclose(adv, mc - values, atol=1e-12)
    np.testing.assert_allclose(ret, mc, atol=1e-12)


def test_last_value_ignored_when_the_last_step_is_terminal(rollout):
    rewards, values, dones, _ = rollout
    dones = dones.copy()
    dones[-1] = 1.0
    a1, _ = compute_gae(rewards, values, dones, 5.0)
    a2, _ = compute_gae(rewards, values, dones, -5.0)
    np.testing.assert_array_equal(a1, a2)


# --- T = 1, truncation inside the buffer, and the scan ------------------------------------------------------------
@pytest.mark.parametrize("done, want", [(0.0, 2.0 + 0.9 * 3.0 - 1.0), (1.0, 2.0 - 1.0)])
def test_one_step_rollout(done, want):
    # T = 1: A_0 = r_0 + γ V(s_1)(1 - d_0) - V(s_0), with V(s_1) = last_value; nothing to carry
    adv, ret = compute_gae(np.array([2.0]), np.array([1.0]), np.array([done]), 3.0, gamma=0.9, lam=0.5)
    assert adv.shape == ret.shape == (1,)
    np.testing.assert_allclose(adv, [want])
    np.testing.assert_allclose(ret, [want + 1.0])


def truncated_rollout():
    """Episode 1 (steps 0-4) cut by a time limit in state s' with V(s') = 2.5; episode 2 (steps 5-8) runs on."""
    rng = np.random.default_rng(3)
    rewards, values = rng.normal(size=9), rng.normal(size=9)
    truncated = np.zeros(9)
    truncated[4] = 1.0
    truncated_values = np.zeros(9)
    truncated_values[4] = 2.5
    return rewards, values, truncated, truncated_values


def test_truncation_inside_the_buffer_bootstraps_like_a_cut_rollout():
    """SB3's reward fix + done flag == the first episode as a rollout cut at s' (last_value = V(s')), then the second."""
    rewards, values, truncated, truncated_values = truncated_rollout()
    gamma, lam = 0.95, 0.9
    fixed = truncation_rewards(rewards, truncated, truncated_values, gamma)
    adv, ret = compute_gae(fixed, values, truncated, 0.4, gamma=gamma, lam=lam)
    first, _ = compute_gae(rewards[:5], values[:5], np.zeros(5), 2.5, gamma=gamma, lam=lam)
    second, _ = compute_gae(rewards[5:], values[5:], np.zeros(4), 0.4, gamma=gamma, lam=lam)
    np.testing.assert_allclose(adv, np.concatenate([first, second]), atol=1e-12)
    np.testing.assert_allclose(ret, adv + values, atol=1e-12)
    np.testing.assert_array_equal(fixed[[0, 1, 2, 3, 5, 6, 7, 8]], rewards[[0, 1, 2, 3, 5, 6, 7, 8]])


def test_the_truncation_bootstrap_enters_its_own_episode_only():
    """dA_k / dV(s') = γ (γλ)^(4-k) for the steps k <= 4 of the cut episode, and 0 in the next one."""
    rewards, values, truncated, truncated_values = truncated_rollout()
    gamma, lam = 0.95, 0.9
    base, _ = compute_gae(truncation_rewards(rewards, truncated, truncated_values, gamma), values, truncated, 0.4,
                          gamma=gamma, lam=lam)
    bumped, _ = compute_gae(truncation_rewards(rewards, truncated, truncated_values + 1.0, gamma), values, truncated,
                            0.4, gamma=gamma, lam=lam)
    want = np.concatenate([gamma * (gamma * lam) ** (4 - np.arange(5)), np.zeros(4)])
    np.testing.assert_allclose(bumped - base, want, atol=1e-12)


@pytest.mark.parametrize("T", [0, 1, 2, 3, 7, 8, 33, 257])
def test_scan_equals_the_loop(T):
    """gae_scan (associative scan, no loop over t) == compute_gae, with episode ends anywhere, to float64 rounding."""
    rng = np.random.default_rng(T)
    rewards, values = rng.normal(size=T), rng.normal(size=T)
    dones = (rng.random(T) < 0.2).astype(float)
    for gamma, lam in [(0.99, 0.95), (1.0, 1.0), (0.9, 0.0)]:
        want_adv, want_ret = compute_gae(rewards, values, dones, 0.7, gamma, lam)
        adv, ret = gae_scan(rewards, values, dones, 0.7, gamma, lam)
        assert adv.shape == (T,) and adv.dtype == np.float64
        np.testing.assert_allclose(adv, want_adv, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ret, want_ret, rtol=0, atol=1e-12)


def test_scan_takes_logarithmically_many_rounds(monkeypatch):
    """The up-sweep halves the sequence each round: ceil(log2 T) rounds of composition, not T steps."""
    import rlprep.algos.gae as gae

    calls = []
    real_append = np.append
    monkeypatch.setattr(gae.np, "append", lambda *a, **k: calls.append(1) or real_append(*a, **k))
    T = 1024
    gae_scan(np.ones(T), np.zeros(T), np.zeros(T), 0.0)
    # one append for next_values, two per up-sweep round, one per down-sweep round: 1 + 3 log2(T)
    assert len(calls) == 1 + 3 * 10


@pytest.mark.parametrize("T, want", [(1, 0), (2, 2), (9, 8), (1000, 20), (1024, 20), (4096, 24)])
def test_scan_reports_the_rounds_it_ran(T, want):
    """with_rounds=True: the rounds the scan counted (up-sweep + down-sweep) = 2 ceil(log2 T), ~20 at T = 1000."""
    rng = np.random.default_rng(T)
    adv, ret, rounds = gae_scan(rng.normal(size=T), rng.normal(size=T), np.zeros(T), 0.0, with_rounds=True)
    assert rounds == want and adv.shape == ret.shape == (T,)

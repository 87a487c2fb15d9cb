"""compute_gae against a plain double loop, hand-worked values and its two limits (λ = 0, λ = 1)."""

from __future__ import annotations

import numpy as np
import pytest

from rlprep.algos.gae import compute_gae


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

"""GAE three ways (notebook 02): n-step mix == explicit sum == the O(T) reference recursion; λ = 0 and λ = 1."""

import numpy as np
import pytest

from rlprep.algos.gae import compute_gae
from rlprep.demos.gae_nstep import (discounted_returns, gae_explicit_sum, gae_from_n_step, gae_weights,
                                    n_step_advantage, n_step_weights, td_residuals)


@pytest.fixture
def segment():
    rng = np.random.default_rng(0)
    return rng.normal(size=9), rng.normal(size=9), 0.7


@pytest.mark.parametrize("gamma,lam", [(0.99, 0.95), (0.9, 0.5), (1.0, 1.0), (0.8, 0.0)])
def test_three_views_agree(segment, gamma, lam):
    r, v, last = segment
    explicit = gae_explicit_sum(r, v, last, gamma, lam)
    mixed = gae_from_n_step(r, v, last, gamma, lam)
    recursion, returns = compute_gae(r, v, np.zeros(9), last, gamma=gamma, lam=lam)
    np.testing.assert_allclose(explicit, recursion, atol=1e-10)
    np.testing.assert_allclose(mixed, recursion, atol=1e-10)
    np.testing.assert_allclose(returns, recursion + v, atol=1e-12)


def test_lambda_limits(segment):
    r, v, last = segment
    np.testing.assert_allclose(gae_explicit_sum(r, v, last, 0.97, 0.0), td_residuals(r, v, last, 0.97), atol=1e-12)
    np.testing.assert_allclose(gae_explicit_sum(r, v, last, 0.97, 1.0), discounted_returns(r, 0.97, last) - v, atol=1e-10)


def test_n_step_by_hand():
    r, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 0.125])
    # A_0^(2) = r0 + g r1 + g^2 V(s2) - V(s0), g = 0.5
    assert n_step_advantage(r, v, 10.0, 0.5, 0, 2) == pytest.approx(1 + 1 + 0.25 * 0.125 - 0.5)
    # n past the end is capped and bootstraps last_value: A_2^(5) = r2 + g * 10 - V(s2)
    assert n_step_advantage(r, v, 10.0, 0.5, 2, 5) == pytest.approx(3 + 5 - 0.125)


def test_weights():
    np.testing.assert_allclose(gae_weights(0.5, 0.5, 3), [1, 0.25, 0.0625])
    w = n_step_weights(0.9, 20)
    assert w.sum() == pytest.approx(1.0)
    assert n_step_weights(0.0, 4)[0] == 1.0
    with pytest.raises(ValueError):
        gae_weights(1.2, 0.5, 3)

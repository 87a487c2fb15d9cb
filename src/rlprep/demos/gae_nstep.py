"""GAE seen three ways on one rollout segment: n-step advantages, their λ-weighted mix, and the explicit sum.

GAE (Schulman et al. 2015, arXiv 1506.02438), Eqs. 11-16. For a segment of T steps with no episode end inside
it and V(s_T) = ``last_value`` bootstrapping the cut:

    delta_t   = r_t + gamma V(s_{t+1}) - V(s_t)                          (Sec. 3; Eq. 10: unbiased if V = V^pi)
    A_t^(n)   = sum_{l<n} gamma^l r_{t+l} + gamma^n V(s_{t+n}) - V(s_t) = sum_{l<n} gamma^l delta_{t+l}   (Eq. 11-14)
    A_t^GAE   = (1 - lam) sum_{n>=1} lam^(n-1) A_t^(n) = sum_l (gamma lam)^l delta_{t+l}                 (Eq. 16)

On a finite segment the n-step estimators stop at N = T - t (A^(n) = A^(N) for n >= N), so the tail weight
lam^(N-1) sits on A^(N): (1 - lam) sum_{n<N} lam^(n-1) A^(n) + lam^(N-1) A^(N). These loops are deliberately
literal (O(T^2)): they are the oracle that ``rlprep.algos.gae.compute_gae``'s O(T) recursion is checked against.
"""

from __future__ import annotations

import numpy as np


def _as_arrays(rewards, values):
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if rewards.ndim != 1 or rewards.shape != values.shape or rewards.size == 0:
        raise ValueError(f"rewards and values must be non-empty 1-D arrays of one length T; got "
                         f"{rewards.shape} and {values.shape}")
    return rewards, values


def td_residuals(rewards, values, last_value: float, gamma: float) -> np.ndarray:
    """delta_t = r_t + gamma V(s_{t+1}) - V(s_t) for t < T, with V(s_T) = last_value. Returns [T]."""
    rewards, values = _as_arrays(rewards, values)
    next_values = np.append(values[1:], last_value)  # (T,) V(s_{t+1})
    return rewards + gamma * next_values - values


def n_step_advantage(rewards, values, last_value: float, gamma: float, t: int, n: int) -> float:
    """A_t^(n) = sum_{l<n} gamma^l r_{t+l} + gamma^n V(s_{t+n}) - V(s_t), n capped at T - t (bootstrap V(s_T))."""
    rewards, values = _as_arrays(rewards, values)
    T = len(rewards)
    if not (0 <= t < T and n >= 1):
        raise ValueError(f"need 0 <= t < T={T} and n >= 1; got t={t}, n={n}")
    n = min(n, T - t)
    v_ext = np.append(values, last_value)  # (T+1,) V(s_0..s_T)
    discounted = sum(gamma ** k * rewards[t + k] for k in range(n))  # k: the docstring's l
    return float(discounted + gamma ** n * v_ext[t + n] - values[t])


def gae_from_n_step(rewards, values, last_value: float, gamma: float, lam: float) -> np.ndarray:
    """A_t = (1 - lam) sum_{n<N} lam^(n-1) A_t^(n) + lam^(N-1) A_t^(N), N = T - t: GAE as a mix of n-step estimators."""
    rewards, values = _as_arrays(rewards, values)
    T = len(rewards)
    out = np.zeros(T)
    for t in range(T):
        N = T - t
        mix = sum((1 - lam) * lam ** (n - 1) * n_step_advantage(rewards, values, last_value, gamma, t, n)
                  for n in range(1, N))
        out[t] = mix + lam ** (N - 1) * n_step_advantage(rewards, values, last_value, gamma, t, N)
    return out


def gae_explicit_sum(rewards, values, last_value: float, gamma: float, lam: float) -> np.ndarray:
    """A_t = sum_{l=0}^{T-1-t} (gamma lam)^l delta_{t+l}: the exponentially-weighted sum of TD residuals. Returns [T]."""
    delta = td_residuals(rewards, values, last_value, gamma)
    T = len(delta)
    return np.array([sum((gamma * lam) ** k * delta[t + k] for k in range(T - t)) for t in range(T)])  # k: l above


def discounted_returns(rewards, gamma: float, last_value: float = 0.0) -> np.ndarray:
    """G_t = sum_{l} gamma^l r_{t+l} + gamma^(T-t) last_value: the Monte-Carlo return (bootstrapped at a cut). [T]."""
    rewards = np.asarray(rewards, dtype=np.float64)
    out = np.zeros(len(rewards))
    running = last_value
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def gae_weights(gamma: float, lam: float, horizon: int) -> np.ndarray:
    """The weight (gamma lam)^l that delta_{t+l} gets in A_t, for l = 0..horizon-1. Returns [horizon]."""
    if horizon < 1 or not (0 <= gamma <= 1 and 0 <= lam <= 1):
        raise ValueError(f"need horizon >= 1 and gamma, lam in [0, 1]; got {horizon}, {gamma}, {lam}")
    return (gamma * lam) ** np.arange(horizon)


def n_step_weights(lam: float, horizon: int) -> np.ndarray:
    """Weight of A^(n), n = 1..horizon, in GAE on a segment of ``horizon`` steps: (1-lam) lam^(n-1), tail lam^(horizon-1)."""
    if horizon < 1 or not 0 <= lam <= 1:
        raise ValueError(f"need horizon >= 1 and lam in [0, 1]; got {horizon}, {lam}")
    w = (1 - lam) * lam ** np.arange(horizon, dtype=np.float64)
    w[-1] = lam ** (horizon - 1)
    return w

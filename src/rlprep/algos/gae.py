"""Generalized Advantage Estimation for one rollout of T steps (the reference lab01_gae grades against).

This file holds the one copy of ``compute_gae``: ``rlprep release`` pastes its source into the lab01 answer
cell, so it only uses ``np`` at module level.
"""

from __future__ import annotations

import numpy as np


def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """GAE advantages and value targets for one rollout of T steps.

    Schulman et al. 2015, "High-Dimensional Continuous Control Using Generalized Advantage Estimation"
    (arXiv 1506.02438), Eq. 16: A_t = sum_l (gamma*lam)^l delta_{t+l}, with the TD residual
    delta_t = r_t + gamma * V(s_{t+1}) - V(s_t) (Eq. 10), computed backwards as
    A_t = delta_t + gamma * lam * A_{t+1}. The sum stops at an episode end.

    Args:
        rewards: [T] float array, r_t.
        values: [T] float array, V(s_t) under the current critic.
        dones: [T] float array; dones[t] == 1 means the episode ended at step t, so nothing is
            bootstrapped from step t+1 and the recursion restarts.
        last_value: float, V(s_T); used only when dones[T-1] == 0 (the rollout was cut mid-episode).
        gamma: discount factor.
        lam: GAE lambda; 0 gives the one-step TD residual, 1 the Monte-Carlo return minus V(s_t).

    Returns:
        advantages: [T] float array, A_t.
        returns: [T] float array, advantages + values (the critic's regression targets).
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    dones = np.asarray(dones, dtype=np.float64)
    T = rewards.shape[0]
    advantages = np.zeros(T, dtype=np.float64)  # (T,)
    lastgaelam = 0.0
    for t in reversed(range(T)):
        nextvalues = last_value if t == T - 1 else values[t + 1]
        nextnonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
        advantages[t] = lastgaelam
    returns = advantages + values
    return advantages, returns

"""Generalized Advantage Estimation for one rollout of T steps (the reference lab01_gae grades against).

- ``compute_gae``: the backward loop (CleanRL's names); ``rlprep release`` pastes its source into the lab01
  answer cell, so every function here only uses ``np`` at module level.
- ``gae_scan``: the same advantages from an associative scan, O(T) work in O(log T) vectorised rounds.
- ``truncation_rewards``: Stable-Baselines3's reward fix, which lets a time limit inside the buffer bootstrap.
"""

from __future__ import annotations

import numpy as np


def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """GAE advantages and value targets for one rollout of T steps.

    Schulman et al. 2015, "High-Dimensional Continuous Control Using Generalized Advantage Estimation"
    (arXiv 1506.02438), Eq. 16: A_t = sum_l (gamma*lam)^l delta_{t+l}, with the TD residual
    delta_t = r_t + gamma * V(s_{t+1}) - V(s_t) (Sec. 3, above Eq. 10), computed backwards as
    A_t = delta_t + gamma * lam * A_{t+1}. The sum stops at an episode end.

    Args:
        rewards: [T] float array, r_t.
        values: [T] float array, V(s_t) under the current critic.
        dones: [T] float array; dones[t] == 1 means the episode ended at step t (the flag env.step returned
            with r_t), so nothing is bootstrapped from step t+1 and the recursion restarts. CleanRL's ppo.py
            stores the flag one step later ("obs t starts an episode") and reads dones[t+1]; this contract
            does not. A time limit that cuts an episode at step t < T-1 bootstraps through the reward, as
            Stable-Baselines3 does: dones[t] = 1 and rewards[t] += gamma * V(s_{t+1}) of the cut state
            (``truncation_rewards``).
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


def gae_scan(rewards, values, dones, last_value, gamma=0.99, lam=0.95, with_rounds=False):
    """``compute_gae`` without a loop over time: GAE is the first-order linear recurrence
    A_t = delta_t + c_t A_{t+1}, c_t = gamma * lam * (1 - dones[t]), A_T = 0 (arXiv 1506.02438, Eq. 16 in
    its recursive form), so it is a suffix scan of the affine maps x -> delta_t + c_t x, whose composition
    (c1, d1) o (c2, d2) = (c1 c2, d1 + c1 d2) is associative. Pairs are composed until one map is left
    (up-sweep), then every A_t is read off on the way back (down-sweep): O(T) work in 2 log2(T) vectorised
    rounds, each a few numpy operations over at most T elements. No O(T^2) discount matrix.

    Args and returns: as ``compute_gae`` (rewards, values, dones: [T]; last_value: float; [T] advantages and
    returns). Equal to ``compute_gae`` up to float64 rounding (the products are grouped differently).
    ``with_rounds=True`` appends the number of vectorised rounds the scan ran (up-sweep plus down-sweep).
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    nonterminal = 1.0 - np.asarray(dones, dtype=np.float64)  # (T,)
    next_values = np.append(values[1:], last_value)  # (T,) V(s_{t+1}); V(s_T) = last_value
    delta = rewards + gamma * next_values * nonterminal - values  # (T,) Sec. 3
    c, d = gamma * lam * nonterminal, delta  # (T,) the map A_t = d_t + c_t A_{t+1}
    levels = []
    while len(d) > 1:  # up-sweep: compose the maps of steps (2j, 2j+1); an odd last one stays as it is
        levels.append((c, d))
        n = len(d) // 2
        c_even, c_odd, d_even, d_odd = c[0:2 * n:2], c[1:2 * n:2], d[0:2 * n:2], d[1:2 * n:2]  # (n,) each
        c, d = np.append(c_even * c_odd, c[2 * n:]), np.append(d_even + c_even * d_odd, d[2 * n:])
    advantages = d.copy()  # (1,) or (0,): the one map left, applied to A_T = 0
    for c, d in reversed(levels):  # down-sweep: even steps are known, odd step t reads A_{t+1}
        full = np.empty_like(d)  # (T_level,)
        full[0::2] = advantages
        next_adv = np.append(advantages[1:], 0.0)[: len(d) // 2]  # (T_level // 2,) A_{t+1} of odd t
        full[1::2] = d[1::2] + c[1::2] * next_adv
        advantages = full
    if with_rounds:
        return advantages, advantages + values, 2 * len(levels)
    return advantages, advantages + values


def truncation_rewards(rewards, truncated, truncated_values, gamma=0.99):
    """Stable-Baselines3's time-limit fix: r_t + gamma * V(s_{t+1}) where a time limit cut the episode at t.

    A truncated episode still has a future, worth V(s_{t+1}) of the state it was cut in; that state is not
    values[t+1] (the next episode's first state). Folding gamma * V(s_{t+1}) into r_t and marking the step done
    gives delta_t = r_t + gamma V(s_{t+1}) - V(s_t) with nothing carried across, which is exactly GAE with a
    bootstrap at the cut (SB3 ``OnPolicyAlgorithm.collect_rollouts``, ``TimeLimit.truncated``).

    Args:
        rewards: [T] float array, r_t.
        truncated: [T] float array, 1 where a time limit (not the task) ended the episode at step t.
        truncated_values: [T] float array, V(s_{t+1}) of the state the episode was cut in; read only where
            truncated is 1 (any finite value elsewhere).
        gamma: discount factor.

    Returns:
        [T] float array of rewards to pass to ``compute_gae`` with dones = terminated | truncated.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    truncated = np.asarray(truncated, dtype=np.float64)
    bootstrap = np.where(truncated > 0, gamma * np.asarray(truncated_values, dtype=np.float64), 0.0)  # (T,)
    return rewards + bootstrap

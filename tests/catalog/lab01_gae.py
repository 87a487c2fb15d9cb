"""Known-buggy and alternative-correct ``compute_gae`` implementations for lab01_gae.

Every entry in BUGS is a mistake seen in real GAE code (course forums, PPO re-implementations); each must
lose points under the lab's tests. Every entry in ALTERNATIVES is correct and must get full marks.
"""

from __future__ import annotations

import numpy as np


def _deltas(rewards, values, dones, last_value, gamma):
    next_values = np.append(values[1:], last_value)  # (T,) V(s_{t+1})
    return rewards + gamma * next_values * (1.0 - dones) - values


def bug_last_step_bootstraps_from_values(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Off-by-one bootstrap: the last step uses V(s_{T-1}) instead of last_value = V(s_T)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    return _correct_from_next(rewards, values, dones, np.append(values[1:], values[-1]), gamma, lam)


def bug_no_reset_at_episode_end(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """The recursion is not cut at dones: lastgaelam leaks across episodes."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    delta = _deltas(rewards, values, dones, last_value, gamma)
    adv = np.zeros_like(rewards)
    lastgaelam = 0.0
    for t in reversed(range(len(rewards))):
        lastgaelam = delta[t] + gamma * lam * lastgaelam
        adv[t] = lastgaelam
    return adv, adv + values


def bug_bootstraps_when_done(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """delta bootstraps V(s_{t+1}) even when the episode ended at t (the recursion does reset)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    next_values = np.append(values[1:], last_value)
    adv = np.zeros_like(rewards)
    lastgaelam = 0.0
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * next_values[t] - values[t]
        lastgaelam = delta + gamma * lam * (1.0 - dones[t]) * lastgaelam
        adv[t] = lastgaelam
    return adv, adv + values


def bug_gamma_lambda_swapped(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """lam used as the discount in delta (gamma and lam swapped in the TD residual)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    delta = _deltas(rewards, values, dones, last_value, lam)
    return _recurse(delta, values, dones, gamma, lam)


def bug_missing_lambda(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """The recursion decays by gamma only: always the lam = 1 estimate."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    delta = _deltas(rewards, values, dones, last_value, gamma)
    return _recurse(delta, values, dones, gamma, 1.0)


def bug_returns_are_advantages(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """returns = advantages (forgot to add the values back)."""
    adv, _ = alt_loop(rewards, values, dones, last_value, gamma, lam)
    return adv, adv.copy()


def bug_forward_recursion(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """The recursion runs forwards in time (accumulates past residuals instead of future ones)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    delta = _deltas(rewards, values, dones, last_value, gamma)
    adv = np.zeros_like(rewards)
    lastgaelam = 0.0
    for t in range(len(rewards)):
        nonterminal_prev = 1.0 - dones[t - 1] if t > 0 else 0.0
        lastgaelam = delta[t] + gamma * lam * nonterminal_prev * lastgaelam
        adv[t] = lastgaelam
    return adv, adv + values


def bug_dones_shifted(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """dones[t+1] used where dones[t] is meant (CleanRL's 'next_done' convention applied to this contract)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    shifted = np.append(dones[1:], 0.0)
    delta = _deltas(rewards, values, shifted, last_value, gamma)
    return _recurse(delta, values, shifted, gamma, lam)


def _recurse(delta, values, dones, gamma, lam):
    adv = np.zeros_like(delta)
    lastgaelam = 0.0
    for t in reversed(range(len(delta))):
        lastgaelam = delta[t] + gamma * lam * (1.0 - dones[t]) * lastgaelam
        adv[t] = lastgaelam
    return adv, adv + values


def _correct_from_next(rewards, values, dones, next_values, gamma, lam):
    delta = rewards + gamma * next_values * (1.0 - dones) - values
    return _recurse(delta, values, dones, gamma, lam)


def alt_loop(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Correct: residuals first, then one backward pass."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    return _recurse(_deltas(rewards, values, dones, last_value, gamma), values, dones, gamma, lam)


def alt_matrix(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Correct, vectorised: A = W @ delta with W[t, k] = (gamma*lam)^(k-t) while no episode ends in [t, k)."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    T = len(rewards)
    delta = _deltas(rewards, values, dones, last_value, gamma)  # (T,)
    idx = np.arange(T)
    ends_before = np.concatenate([[0.0], np.cumsum(dones)])  # (T+1,) dones strictly before each index
    same_episode = ends_before[idx[None, :]] - ends_before[idx[:, None]] == 0  # (T, T): no done in [t, k)
    power = np.clip(idx[None, :] - idx[:, None], 0, None)  # (T, T) k - t
    weights = np.where((idx[None, :] >= idx[:, None]) & same_episode, (gamma * lam) ** power, 0.0)  # (T, T)
    adv = weights @ delta  # (T,)
    return adv, adv + values


def alt_scan(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Correct, no loop over time: the package's associative scan (O(T) work, O(log T) rounds)."""
    from rlprep.algos.gae import gae_scan

    return gae_scan(rewards, values, dones, last_value, gamma, lam)


def alt_cleanrl_flags_translated(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Correct: CleanRL's ppo.py loop verbatim, after translating this contract's flags into CleanRL's buffer
    (CleanRL's dones[t] = "obs t starts an episode" = dones[t-1] here; its next_done = dones[T-1])."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    num_steps = len(rewards)
    episode_starts = np.append(0.0, dones[:-1])  # (T,) CleanRL's `dones`
    next_done, next_value = dones[-1], last_value
    advantages = np.zeros_like(rewards)
    lastgaelam = 0.0
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - episode_starts[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values


def alt_filter_per_episode(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Correct: each episode's residuals through the reversed first-order filter y_t = x_t + gamma*lam*y_{t+1}
    (what scipy.signal.lfilter([1], [1, -gamma*lam], delta[::-1])[::-1] computes), one episode at a time."""
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    delta = _deltas(rewards, values, dones, last_value, gamma)  # (T,)
    ends = np.flatnonzero(dones[:-1]) + 1  # (n_episodes - 1,) first index of each later episode
    adv = np.concatenate([_reversed_filter(seg, gamma * lam) for seg in np.split(delta, ends)]) if len(delta) else delta
    return adv, adv + values


def _reversed_filter(x, c):
    y = np.zeros_like(x)
    acc = 0.0
    for t in reversed(range(len(x))):
        acc = x[t] + c * acc
        y[t] = acc
    return y


BUGS = {name.removeprefix("bug_"): fn for name, fn in dict(globals()).items() if name.startswith("bug_")}
ALTERNATIVES = {name.removeprefix("alt_"): fn for name, fn in dict(globals()).items() if name.startswith("alt_")}

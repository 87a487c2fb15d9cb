"""Discounted returns over one rollout: G_t = r_t + gamma (1 - done_t) G_{t+1}, G_T = last_value. O(T), one pass."""

import torch


def discounted_returns(rewards, dones, gamma, last_value=0.0):
    """G_t = r_t + gamma * (1 - done_t) * G_{t+1} over one rollout, bootstrapped with last_value.
    rewards, dones: [T]. Returns [T]."""
    rewards = torch.as_tensor(rewards, dtype=torch.float64)
    dones = torch.as_tensor(dones, dtype=torch.float64)
    returns = torch.zeros_like(rewards)  # (T,)
    running = float(last_value)  # G_T: the critic's value of the state after the rollout
    for t in reversed(range(rewards.shape[0])):
        running = float(rewards[t]) + gamma * (1.0 - float(dones[t])) * running
        returns[t] = running
    return returns

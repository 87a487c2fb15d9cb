"""Reward-model loss for lab02_reward_model: the Bradley-Terry pairwise loss."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def bradley_terry_loss(chosen_rewards: torch.Tensor, rejected_rewards: torch.Tensor) -> torch.Tensor:
    """Mean over the batch of -log sigma(r_c - r_r).

    Bradley-Terry preference model as used for RLHF reward models: InstructGPT (Ouyang et al. 2022,
    arXiv 2203.02155), Eq. 1, with the 1/C(K,2) pair weighting reduced to a plain mean over pairs.

    Args:
        chosen_rewards: [B] scalar reward of the preferred completion of each pair.
        rejected_rewards: [B] scalar reward of the other completion of the same pair.

    Returns:
        Scalar tensor. ``F.logsigmoid`` keeps it finite for large margins (log(sigmoid(x)) underflows).
    """
    if chosen_rewards.ndim != 1 or chosen_rewards.shape != rejected_rewards.shape:
        raise ValueError(
            f"chosen_rewards and rejected_rewards must both be [B]; got {tuple(chosen_rewards.shape)} and "
            f"{tuple(rejected_rewards.shape)} (squeeze a reward head's [B, 1] output with .squeeze(-1))"
        )
    if chosen_rewards.numel() == 0:
        raise ValueError("empty batch: pass at least one preference pair")
    if not (torch.isfinite(chosen_rewards).all() and torch.isfinite(rejected_rewards).all()):
        raise ValueError("rewards contain NaN or inf: check the reward head's inputs and learning rate")
    margin = chosen_rewards - rejected_rewards  # (B,)
    return -F.logsigmoid(margin).mean()

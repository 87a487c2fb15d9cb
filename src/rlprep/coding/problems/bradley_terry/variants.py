"""Honest variants of bradley_terry_loss."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("softplus", "softplus(-margin)", source='''
        import torch
        import torch.nn.functional as F


        def bradley_terry_loss(chosen_rewards, rejected_rewards):
            if chosen_rewards.dim() != 1 or chosen_rewards.shape != rejected_rewards.shape or len(chosen_rewards) == 0:
                raise ValueError("need two [B] tensors with B >= 1")
            if not torch.isfinite(chosen_rewards).all() or not torch.isfinite(rejected_rewards).all():
                raise ValueError("non-finite rewards")
            return F.softplus(rejected_rewards - chosen_rewards).mean()
        '''),
    Edit("bce_with_logits", "binary cross-entropy with logits against a target of 1", source='''
        import torch
        import torch.nn.functional as F


        def bradley_terry_loss(chosen_rewards, rejected_rewards):
            if chosen_rewards.ndim != 1 or rejected_rewards.shape != chosen_rewards.shape:
                raise ValueError("rewards must be [B]")
            if chosen_rewards.numel() == 0:
                raise ValueError("empty batch")
            if torch.isnan(chosen_rewards).any() or torch.isnan(rejected_rewards).any():
                raise ValueError("NaN")
            margin = chosen_rewards - rejected_rewards
            return F.binary_cross_entropy_with_logits(margin, torch.ones_like(margin))
        '''),
]

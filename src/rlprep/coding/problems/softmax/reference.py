"""Stable softmax: shift by the max along dim, exponentiate, normalise. O(N) time, two passes over dim."""

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """exp(x) / sum(exp(x)) along dim, finite for large logits. x: float tensor; same shape and dtype out."""
    shifted = x - x.amax(dim=dim, keepdim=True)  # the largest logit becomes 0: exp never overflows
    e = torch.exp(shifted)  # -inf logits give exactly 0
    return e / e.sum(dim=dim, keepdim=True)  # the sum is >= 1: no division by an underflowed 0

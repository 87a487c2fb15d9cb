"""Stable log-softmax: x - m - log(sum(exp(x - m))), m the max along dim. O(N), two passes; no log(0)."""

import torch


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """log(softmax(x)) along dim, exact where softmax underflows. x: float tensor; same shape and dtype out."""
    shifted = x - x.amax(dim=dim, keepdim=True)  # the largest logit becomes 0
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))  # the sum lies in [1, n]

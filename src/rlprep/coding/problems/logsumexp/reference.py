"""logsumexp = m + log(sum(exp(x - m))), m the max along dim (0 where a slice is all -inf). O(N), two passes."""

import torch


def logsumexp(x: torch.Tensor, dim: int = -1, keepdim: bool = False) -> torch.Tensor:
    """log(sum(exp(x))) along dim without overflow or underflow. x: float tensor; dim reduced unless keepdim."""
    m = x.amax(dim=dim, keepdim=True)  # the largest term becomes exp(0) = 1
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all -inf slice: shift by 0, not -inf
    out = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
    return out if keepdim else out.squeeze(dim)

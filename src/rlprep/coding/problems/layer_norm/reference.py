"""LayerNorm over the last dim (Ba et al. 2016, arXiv 1607.06450), as torch.nn.functional.layer_norm.

O(N), two passes per row; centring before squaring avoids E[x^2] - E[x]^2's cancellation.
"""

import torch


def layer_norm(x: torch.Tensor, weight=None, bias=None, eps: float = 1e-5) -> torch.Tensor:
    """Normalise x over its last dim, then scale and shift. x: [..., D]; weight, bias: [D] or None."""
    mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1) biased: divide by D, as torch
    y = (x - mean) / torch.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y

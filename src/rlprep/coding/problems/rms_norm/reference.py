"""RMSNorm (Zhang and Sennrich 2019, arXiv 1910.07467), as torch.nn.functional.rms_norm and LlamaRMSNorm.

O(N), one reduction per row; eps inside the square root keeps a zero row at 0.
"""

import torch


def rms_norm(x: torch.Tensor, weight=None, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) over the last dim, times weight. x: [..., D]; weight: [D] or None."""
    rms = torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)  # (..., 1) no mean subtracted
    y = x / rms
    return y * weight if weight is not None else y

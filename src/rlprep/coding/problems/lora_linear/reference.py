"""LoRA linear (Hu et al. 2021, arXiv 2106.09685, Eq. 3 with the alpha / r scale of Sec. 4.1).

O(N (in out + r (in + out))); the low-rank path goes through an [N, r] intermediate, never W + B A.
"""

import torch


def lora_linear(x, weight, bias, lora_A, lora_B, alpha):
    """A frozen linear layer plus a low-rank update. x: [..., in]; weight: [out, in]; bias: [out] or None;
    lora_A: [r, in]; lora_B: [out, r]. Returns [..., out]."""
    r = lora_A.shape[0]
    base = x @ weight.T  # (..., out) the frozen layer
    if bias is not None:
        base = base + bias
    update = (x @ lora_A.T) @ lora_B.T  # (..., r) then (..., out)
    return base + (alpha / r) * update

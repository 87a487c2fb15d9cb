"""SwiGLU feed-forward (Shazeer 2020, arXiv 2002.05202, Eq. 6 FFN_SwiGLU), Llama's MLP. O(3 N D F)."""

import torch
import torch.nn.functional as F


def swiglu_mlp(x, w_gate, w_up, w_down):
    """Llama's MLP: (silu(x W_gate^T) * (x W_up^T)) W_down^T. x: [..., D]; w_gate, w_up: [F, D];
    w_down: [D, F]. Returns [..., D]."""
    gate = F.silu(x @ w_gate.T)  # (..., F) silu(z) = z * sigmoid(z)
    up = x @ w_up.T  # (..., F)
    return (gate * up) @ w_down.T  # (..., D)

"""Cross-entropy with ignore_index and label smoothing (torch.nn.functional.cross_entropy's definition).

O(N C) for N positions and C classes; log-softmax via logsumexp, so nothing overflows or takes log(0).
"""

import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean token cross-entropy. logits: [..., C] float; targets: [...] int64. Returns a scalar tensor."""
    logits = logits.reshape(-1, logits.shape[-1])  # (N, C), classes last
    targets = targets.reshape(-1)  # (N,)
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)  # (N, C) stable log-softmax
    valid = targets != ignore_index  # (N,)
    safe = torch.where(valid, targets, torch.zeros_like(targets))  # ignored rows gather class 0, masked below
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)  # (N,)
    uniform = -logp.mean(dim=-1)  # (N,) the loss against the uniform distribution
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * uniform
    return per_token[valid].mean()  # 0/0 = NaN when every target is ignored, as torch

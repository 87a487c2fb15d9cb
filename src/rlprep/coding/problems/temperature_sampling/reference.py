"""Temperature sampling by inverse CDF: softmax(logits / T), then the first index whose cumulative mass exceeds u.

O(B V); temperature 0 is the argmax (no division by zero).
"""

import torch


def sample_with_temperature(logits, temperature, u):
    """Sample one token per row from softmax(logits / temperature) with the given uniforms. logits: [B, V];
    u: [B] in [0, 1). temperature 0 means greedy. Returns int64 token ids [B]."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)  # greedy: first index among ties
    probs = torch.softmax(logits / temperature, dim=-1)  # (B, V)
    cdf = probs.cumsum(dim=-1)  # (B, V)
    idx = (cdf <= u[:, None]).sum(dim=-1)  # (B,) first index with cdf > u
    last = probs.shape[-1] - 1 - (probs > 0).flip(-1).to(torch.int64).argmax(dim=-1)  # (B,) last token with p > 0
    return torch.minimum(idx, last)

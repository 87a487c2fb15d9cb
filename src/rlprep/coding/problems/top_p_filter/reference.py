"""Top-p filtering as transformers' TopPLogitsWarper: ascending sort, cumulative probabilities, cut the tail.

O(B V log V) for the sort; softmax is monotone, so the softmax of the sorted logits is the sorted distribution.
"""

import torch


def top_p_filter(logits: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Set to -inf every logit outside the nucleus of each row. logits: [B, V] float; returns [B, V]."""
    if not 0.0 <= top_p <= 1.0:
        raise ValueError(f"top_p must lie in [0, 1], got {top_p}")
    if min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be >= 1, got {min_tokens_to_keep}")
    sorted_logits, sorted_idx = torch.sort(logits, dim=-1, descending=False)  # (B, V) least likely first
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)  # (B, V) mass of this token and all below it
    sorted_remove = cumulative <= 1.0 - top_p  # the tail holding at most 1 - top_p of the mass
    sorted_remove[..., -min_tokens_to_keep:] = False  # the most likely tokens always stay
    remove = sorted_remove.scatter(-1, sorted_idx, sorted_remove)  # (B, V) back to vocabulary order
    return logits.masked_fill(remove, float("-inf"))

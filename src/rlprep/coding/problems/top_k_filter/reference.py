"""Top-k filtering as transformers' TopKLogitsWarper: compare with the k-th largest value. O(B V) selection."""

import torch


def top_k_filter(logits, top_k):
    """Keep each row's top_k logits (ties with the k-th kept), set the rest to -inf. logits: [B, V]."""
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    k = min(top_k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # (B, 1) the k-th largest logit of each row
    return logits.masked_fill(logits < kth, float("-inf"))  # ties with the k-th survive

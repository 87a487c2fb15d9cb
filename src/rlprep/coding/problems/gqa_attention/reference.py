"""Grouped-query attention (Ainslie et al. 2023, arXiv 2305.13245): query head h reads KV head h // (Hq / Hkv).

O(B Hq T^2 d) compute like MHA; the KV cache holds Hkv heads.
"""

import math

import torch


def gqa_attention(q, k, v, is_causal=True):
    """Attention with fewer key/value heads than query heads. q: [B, Hq, T, d]; k, v: [B, Hkv, T, d] with Hkv
    dividing Hq. Returns [B, Hq, T, d]."""
    n_rep, rest = divmod(q.shape[1], k.shape[1])
    if rest != 0:
        raise ValueError(f"Hkv={k.shape[1]} must divide Hq={q.shape[1]}")
    k = k.repeat_interleave(n_rep, dim=1)  # (B, Hq, T, d): consecutive query heads share a KV head
    v = v.repeat_interleave(n_rep, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, Hq, T, T)
    if is_causal:
        T = q.shape[2]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T) keys after the query
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # (B, Hq, T, d)

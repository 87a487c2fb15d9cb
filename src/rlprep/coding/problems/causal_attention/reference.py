"""Causal multi-head self-attention with a key-padding mask (Vaswani et al. 2017, Eq. 1, with a causal mask).

O(B H T^2 hd) time, O(B H T^2) memory for the scores; -inf before the softmax gives masked keys weight 0.
"""

import math

import torch


def causal_attention(x, w_q, w_k, w_v, w_o, n_heads, attention_mask):
    """Causal multi-head self-attention. x: [B, T, D]; w_*: [D, D] (y = x @ w.T); attention_mask: [B, T] 1 real,
    0 padding. Returns [B, T, D]; padded query positions are 0."""
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} must divide D={D}")
    hd = D // n_heads

    def heads(t):
        return t.view(B, T, n_heads, hd).transpose(1, 2)  # (B, H, T, hd): head h owns features h*hd..

    q, k, v = heads(x @ w_q.T), heads(x @ w_k.T), heads(x @ w_v.T)
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)  # (B, H, T, T)
    real = attention_mask.bool()  # (B, T)
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool)) & real[:, None, None, :]  # (B, 1, T, T) causal, real keys
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)  # (B, H, T, T)
    weights = torch.where(keep.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))  # no key: 0, not NaN
    out = (weights @ v).transpose(1, 2).reshape(B, T, D)  # (B, T, D) heads merged back
    out = out * real[..., None].to(out.dtype)  # padded queries output 0
    return out @ w_o.T

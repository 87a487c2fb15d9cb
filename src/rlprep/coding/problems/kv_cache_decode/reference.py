"""One decode step with a KV cache: append, then attend from the new query (O(B H L d) per step)."""

import math

import torch


def decode_step(q, k_new, v_new, k_cache, v_cache, past_mask=None):
    """Append one token's key and value to the cache and attend from its query. q, k_new, v_new: [B, H, 1, d];
    k_cache, v_cache: [B, H, L, d] (L may be 0); past_mask: [B, L] (1 real, 0 padding) or None.
    Returns (out [B, H, 1, d], k_cache [B, H, L+1, d], v_cache [B, H, L+1, d])."""
    k_cache = torch.cat([k_cache, k_new], dim=2)  # (B, H, L+1, d) the new key at position L
    v_cache = torch.cat([v_cache, v_new], dim=2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, 1, L+1)
    if past_mask is not None:
        B = q.shape[0]
        keep = torch.cat([past_mask.bool(), torch.ones(B, 1, dtype=torch.bool)], dim=1)  # (B, L+1) self always real
        scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v_cache  # (B, H, 1, d)
    return out, k_cache, v_cache

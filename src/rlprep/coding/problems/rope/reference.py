"""RoPE (Su et al. 2021, arXiv 2104.09864, Eq. 34) in Llama's rotate_half layout, as transformers applies it.

O(B H T d) elementwise; the angles are computed in float32, as transformers' LlamaRotaryEmbedding does.
"""

import torch


def apply_rope(x, position_ids, base=10000.0):
    """Rotate query or key vectors by their positions, Llama's rotate_half layout. x: [B, H, T, d] (d even);
    position_ids: [B, T] int. Returns [B, H, T, d]."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"the head size must be even, got {d}")
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))  # (d/2,)
    freqs = position_ids[..., None].float() * inv_freq  # (B, T, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (B, T, d): pair (i, i + d/2) shares an angle
    cos, sin = emb.cos()[:, None].to(x.dtype), emb.sin()[:, None].to(x.dtype)  # (B, 1, T, d) broadcast over heads
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)  # rotate_half
    return x * cos + rotated * sin

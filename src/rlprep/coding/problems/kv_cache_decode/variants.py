"""Honest variants of decode_step."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("sdpa", "scaled_dot_product_attention with a boolean mask over the appended cache", source='''
        import torch
        import torch.nn.functional as F


        def decode_step(q, k_new, v_new, k_cache, v_cache, past_mask=None):
            k = torch.cat((k_cache, k_new), dim=-2)
            v = torch.cat((v_cache, v_new), dim=-2)
            mask = None
            if past_mask is not None:
                ones = torch.ones(past_mask.shape[0], 1, dtype=torch.bool)
                mask = torch.cat((past_mask.to(torch.bool), ones), dim=1)[:, None, None, :]
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), k, v
        '''),
    Edit("preallocated", "writes into a preallocated buffer, einsum for the scores", source='''
        import math

        import torch


        def decode_step(q, k_new, v_new, k_cache, v_cache, past_mask=None):
            B, H, L, d = k_cache.shape
            K = torch.empty(B, H, L + 1, d, dtype=k_cache.dtype)
            V = torch.empty_like(K)
            K[:, :, :L], K[:, :, L:] = k_cache, k_new
            V[:, :, :L], V[:, :, L:] = v_cache, v_new
            s = torch.einsum("bhqd,bhkd->bhqk", q, K) * (1.0 / math.sqrt(d))
            if past_mask is not None:
                pad = torch.zeros(B, L + 1, dtype=torch.bool)
                pad[:, :L] = past_mask == 0
                s = s.masked_fill(pad[:, None, None, :], -math.inf)
            w = torch.softmax(s, dim=-1)
            return torch.einsum("bhqk,bhkd->bhqd", w, V), K, V
        '''),
]

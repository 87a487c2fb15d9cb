"""Honest variants of gqa_attention."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("groups_in_a_dimension", "reshapes the query heads into [B, Hkv, group, T, d] and broadcasts K and V", source='''
        import math

        import torch


        def gqa_attention(q, k, v, is_causal=True):
            B, Hq, T, d = q.shape
            Hkv = k.shape[1]
            if Hq % Hkv:
                raise ValueError("Hkv must divide Hq")
            qg = q.reshape(B, Hkv, Hq // Hkv, T, d)
            s = torch.einsum("bhgtd,bhsd->bhgts", qg, k) / math.sqrt(d)
            if is_causal:
                s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            out = torch.einsum("bhgts,bhsd->bhgtd", torch.softmax(s, -1), v)
            return out.reshape(B, Hq, T, d)
        '''),
    Edit("sdpa", "the library call itself, after checking the heads", source='''
        import torch.nn.functional as F


        def gqa_attention(q, k, v, is_causal=True):
            if q.shape[1] % k.shape[1] != 0:
                raise ValueError("query heads must be a multiple of KV heads")
            return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True)
        '''),
]

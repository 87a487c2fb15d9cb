"""Honest variants of causal_attention."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("sdpa_with_mask", "F.scaled_dot_product_attention with a boolean mask, NaN rows zeroed", source='''
        import torch
        import torch.nn.functional as F


        def causal_attention(x, w_q, w_k, w_v, w_o, n_heads, attention_mask):
            B, T, D = x.shape
            if D % n_heads:
                raise ValueError("n_heads must divide D")
            split = lambda t: t.reshape(B, T, n_heads, D // n_heads).permute(0, 2, 1, 3)
            q, k, v = split(x @ w_q.T), split(x @ w_k.T), split(x @ w_v.T)
            real = attention_mask.bool()
            allowed = torch.ones(T, T, dtype=torch.bool).tril()[None, None] & real[:, None, None, :]
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
            out = out.permute(0, 2, 1, 3).reshape(B, T, D)
            out = torch.where(real[..., None], out, torch.zeros_like(out))
            return out @ w_o.T
        '''),
    Edit("loop_over_heads", "one head at a time with a large negative fill and einsum", source='''
        import math

        import torch


        def causal_attention(x, w_q, w_k, w_v, w_o, n_heads, attention_mask):
            B, T, D = x.shape
            if D % n_heads != 0:
                raise ValueError("bad n_heads")
            hd = D // n_heads
            q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
            pad = attention_mask.to(torch.bool)
            causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
            outs = []
            for h in range(n_heads):
                sl = slice(h * hd, (h + 1) * hd)
                s = torch.einsum("btd,bsd->bts", q[..., sl], k[..., sl]) / math.sqrt(hd)
                ok = causal[None] & pad[:, None, :]
                s = s.masked_fill(~ok, -1e30)
                p = torch.softmax(s, dim=-1) * ok
                outs.append(torch.einsum("bts,bsd->btd", p, v[..., sl]))
            out = torch.cat(outs, dim=-1) * pad[..., None]
            return out @ w_o.T
        '''),
]

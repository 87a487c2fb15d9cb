"""Honest variants of log_softmax."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("explicit_lse", "the logsumexp written out, then subtracted from x", source='''
        import torch


        def log_softmax(x, dim=-1):
            m = torch.max(x, dim=dim, keepdim=True).values
            lse = m + torch.log(torch.sum(torch.exp(x - m), dim=dim, keepdim=True))
            return x - lse
        '''),
    Edit("moved_dim_float64", "moves dim last, works in float64, casts back", source='''
        import torch


        def log_softmax(x, dim=-1):
            z = x.movedim(dim, -1).double()
            z = z - z.max(-1, keepdim=True).values
            out = z - z.exp().sum(-1, keepdim=True).log()
            return out.to(x.dtype).movedim(-1, dim)
        '''),
]

"""Honest variants of rms_norm."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("rsqrt_pow", "Llama's own form: x * rsqrt(x.pow(2).mean + eps)", source='''
        import torch


        def rms_norm(x, weight=None, eps=1e-6):
            variance = x.pow(2).mean(-1, keepdim=True)
            x = x * torch.rsqrt(variance + eps)
            if weight is None:
                return x
            return weight * x
        '''),
    Edit("norm_over_sqrt_d", "the L2 norm divided by sqrt(D)", source='''
        import math

        import torch


        def rms_norm(x, weight=None, eps=1e-6):
            d = x.shape[-1]
            ms = torch.linalg.vector_norm(x, dim=-1, keepdim=True) ** 2 / d
            out = x / torch.sqrt(ms + eps)
            return out * (weight if weight is not None else 1.0)
        '''),
]

"""Honest variants of layer_norm."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("var_unbiased_false", "torch.var(unbiased=False) and rsqrt", source='''
        import torch


        def layer_norm(x, weight=None, bias=None, eps=1e-5):
            mu = x.mean(-1, keepdim=True)
            y = (x - mu) * torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
            if weight is not None:
                y = weight * y
            return y + bias if bias is not None else y
        '''),
    Edit("welford", "Welford's one-pass running mean and M2 along the last dim", source='''
        import torch


        def layer_norm(x, weight=None, bias=None, eps=1e-5):
            mean = torch.zeros(x.shape[:-1], dtype=x.dtype)
            m2 = torch.zeros(x.shape[:-1], dtype=x.dtype)
            for k in range(x.shape[-1]):
                v = x[..., k]
                delta = v - mean
                mean = mean + delta / (k + 1)
                m2 = m2 + delta * (v - mean)
            var = m2 / x.shape[-1]
            y = (x - mean[..., None]) / torch.sqrt(var[..., None] + eps)
            w = weight if weight is not None else torch.ones(x.shape[-1], dtype=x.dtype)
            b = bias if bias is not None else torch.zeros(x.shape[-1], dtype=x.dtype)
            return y * w + b
        '''),
]

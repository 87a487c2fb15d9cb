"""Honest variants of importance_weights."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("min_with_tensor", "torch.minimum with a constant tensor", source='''
        import torch


        def importance_weights(logp_target, logp_behavior, clip=None):
            if logp_target.shape != logp_behavior.shape:
                raise ValueError("shapes differ")
            if torch.isnan(logp_target).any() or torch.isnan(logp_behavior).any():
                raise ValueError("NaN log-probs")
            if clip is not None and clip <= 0:
                raise ValueError("clip must be positive")
            w = (logp_target - logp_behavior).exp()
            return w if clip is None else torch.minimum(w, torch.full_like(w, clip))
        '''),
    Edit("log_clip", "truncates in log space: min(log w, log clip), then exp", source='''
        import math

        import torch


        def importance_weights(logp_target, logp_behavior, clip=None):
            if logp_target.size() != logp_behavior.size():
                raise ValueError("size mismatch")
            if logp_target.isnan().any() or logp_behavior.isnan().any():
                raise ValueError("nan")
            log_w = logp_target - logp_behavior
            if clip is not None:
                if not clip > 0:
                    raise ValueError("clip must be > 0")
                log_w = torch.clamp(log_w, max=math.log(clip))
            return torch.exp(log_w)
        '''),
]

"""Honest variants of group_advantages."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("loop_over_groups", "a Python loop over groups with statistics.stdev", source='''
        import math
        import statistics

        import torch


        def group_advantages(rewards, group_size, scale="group", eps=1e-4):
            vals = rewards.detach().tolist()
            if group_size < 2 or len(vals) % group_size or not all(math.isfinite(v) for v in vals):
                raise ValueError("need finite rewards in groups of size >= 2")
            if scale not in ("group", "batch", "none"):
                raise ValueError(f"unknown scale {scale}")
            out = []
            batch_std = statistics.stdev(vals) if len(vals) > 1 else 0.0
            for s in range(0, len(vals), group_size):
                g = vals[s:s + group_size]
                mu = sum(g) / group_size
                div = {"group": statistics.stdev(g) + eps, "batch": batch_std + eps, "none": 1.0}[scale]
                out += [(v - mu) / div for v in g]
            return torch.tensor(out, dtype=rewards.dtype)
        '''),
    Edit("unbiased_var_by_hand", "the Bessel-corrected variance written out", source='''
        import torch


        def group_advantages(rewards, group_size, scale="group", eps=1e-4):
            if rewards.ndim != 1 or group_size < 2 or rewards.numel() % group_size:
                raise ValueError("bad shapes")
            if not torch.isfinite(rewards).all():
                raise ValueError("non-finite rewards")
            r = rewards.detach().reshape(-1, group_size)
            centred = r - r.mean(1, keepdim=True)
            if scale == "none":
                return centred.reshape(-1)
            if scale == "group":
                std = (centred.pow(2).sum(1, keepdim=True) / (group_size - 1)).sqrt()
            elif scale == "batch":
                flat = rewards.detach()
                std = ((flat - flat.mean()).pow(2).sum() / (flat.numel() - 1)).sqrt()
            else:
                raise ValueError("scale must be group, batch or none")
            return (centred / (std + eps)).reshape(-1)
        '''),
]

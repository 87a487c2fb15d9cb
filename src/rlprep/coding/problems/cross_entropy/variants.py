"""Honest variants of cross_entropy."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("smoothed_target_distribution", "builds the smoothed target distribution and takes -sum q log p", source='''
        import torch
        import torch.nn.functional as F


        def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
            C = logits.shape[-1]
            logits, targets = logits.reshape(-1, C), targets.reshape(-1)
            keep = targets != ignore_index
            logp = F.log_softmax(logits[keep], dim=-1)
            q = torch.full_like(logp, label_smoothing / C)
            q = q + (1 - label_smoothing) * F.one_hot(targets[keep], C).to(logp.dtype)
            return -(q * logp).sum(-1).mean()
        '''),
    Edit("sum_then_divide", "sums the masked per-token losses and divides by the count of valid targets", source='''
        import torch


        def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
            x = logits.reshape(-1, logits.shape[-1])
            t = targets.reshape(-1)
            m = x.max(dim=-1, keepdim=True).values
            logp = x - m - torch.log(torch.exp(x - m).sum(dim=-1, keepdim=True))
            mask = (t != ignore_index).to(x.dtype)
            t = t.clamp(min=0) * (t != ignore_index)
            nll = -logp[torch.arange(len(t)), t]
            loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(-1)
            return (loss * mask).sum() / mask.sum()
        '''),
]

"""Honest variants of dpo_loss."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("softplus", "softplus(-z) = -log sigmoid(z), with explicit checks", source='''
        import torch
        import torch.nn.functional as F


        def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
            shapes = {tuple(t.shape) for t in (policy_chosen_logps, policy_rejected_logps, ref_chosen_logps,
                                               ref_rejected_logps)}
            if len(shapes) != 1 or len(next(iter(shapes))) != 1:
                raise ValueError("all four log-prob tensors must be [B]")
            if not beta > 0:
                raise ValueError("beta must be > 0")
            with torch.no_grad():
                ref_margin = ref_chosen_logps - ref_rejected_logps
            z = beta * ((policy_chosen_logps - policy_rejected_logps) - ref_margin)
            return F.softplus(-z).mean()
        '''),
    Edit("manual_stable_logsigmoid", "log sigmoid(z) = min(z, 0) - log1p(exp(-|z|)) by hand", source='''
        import torch


        class BadInput(ValueError):
            pass


        def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
            xs = [policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps]
            if beta <= 0 or any(x.ndim != 1 or x.shape != xs[0].shape for x in xs):
                raise BadInput("need four [B] tensors and beta > 0")
            z = beta * (policy_chosen_logps - ref_chosen_logps.detach()
                        - policy_rejected_logps + ref_rejected_logps.detach())
            log_sig = torch.clamp(z, max=0) - torch.log1p(torch.exp(-z.abs()))
            return -log_sig.mean()
        '''),
]

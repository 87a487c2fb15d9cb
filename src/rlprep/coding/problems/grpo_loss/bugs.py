"""Catalogued bugs of grpo_loss."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("sequence_as_token_mean", "aggregates 'sequence' as the token-level mean",
         {'"sequence": lambda: (masked.sum(dim=1) / m.sum(dim=1).clamp(min=1.0)).mean(),':
          '"sequence": lambda: masked.sum() / m.sum().clamp(min=1.0),'}),
    Edit("k1_instead_of_k3", "adds beta * (logp - ref), the k1 estimate, instead of k3",
         {"per_token = per_token + beta * kl_k3(logp_new, ref_logp.detach(), mask)":
          "per_token = per_token + beta * torch.where(mask.bool(), logp_new - ref_logp.detach(), torch.zeros_like(logp_new))"}),
    Edit("symmetric_clip", "clips with eps_low on both sides",
         {"torch.clamp(ratio, 1 - eps_low, 1 + eps_high)": "torch.clamp(ratio, 1 - eps_low, 1 + eps_low)"}),
    Edit("advantages_not_detached", "lets the gradient reach the advantages",
         {"adv = advantages.detach() if advantages.ndim == 2 else advantages.detach().unsqueeze(1)":
          "adv = advantages if advantages.ndim == 2 else advantages.unsqueeze(1)"}),
    Edit("kl_reference_not_detached", "lets the gradient reach ref_logp through the KL",
         {"kl_k3(logp_new, ref_logp.detach(), mask)": "kl_k3(logp_new, ref_logp, mask)"}),
    Edit("max_instead_of_min", "takes the max of the surrogates",
         {"per_token = -torch.min(ratio * adv, clipped_ratio * adv)  # (B, T)": "per_token = -torch.max(ratio * adv, clipped_ratio * adv)"}),
]

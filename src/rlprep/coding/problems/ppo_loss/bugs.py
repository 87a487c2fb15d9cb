"""Catalogued bugs of ppo_loss."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("max_instead_of_min", "takes the max of the two surrogates: an optimistic bound, no trust region",
         {"per_token = -torch.min(ratio * adv, clipped_ratio * adv)": "per_token = -torch.max(ratio * adv, clipped_ratio * adv)"}),
    Edit("entropy_sign", "adds the entropy instead of subtracting the bonus: the policy is pushed to collapse",
         {"- ent_coef * masked_mean(entropy, mask)": "+ ent_coef * masked_mean(entropy, mask)"}),
    Edit("value_min_not_max", "takes the min of the clipped and unclipped value errors",
         {"torch.max((values - target) ** 2, (values_clipped - target) ** 2)": "torch.min((values - target) ** 2, (values_clipped - target) ** 2)"}),
    Edit("ratio_not_detached", "lets the gradient flow into logp_old",
         {"logp_new - logp_old.detach(), zeros": "logp_new - logp_old, zeros"}),
    Edit("mean_over_padding", "divides the policy term by every position, padding included",
         {"    return per_token.sum() / valid.sum()\n\n\ndef value_loss": "    return per_token.mean()\n\n\ndef value_loss"}),
    Edit("value_clip_around_returns", "clips the value around the returns instead of the old values",
         {"values_clipped = old + torch.clamp(values - old, -clip_range, clip_range)": "values_clipped = target + torch.clamp(values - target, -clip_range, clip_range)"}),
]

"""Known bugs for lab09_atlas: ``leave_one_out_advantages``, ``dr_grpo_loss``, ``cispo_loss``, ``ipo_loss`` and
``simpo_loss``; and correct alternatives written differently (loops, other formulas), which must get full marks."""

import torch
import torch.nn.functional as F


# leave_one_out_advantages --------------------------------------------------------------------------------------
def loo_includes_self(rewards, group_size):
    """The group mean with r_i in it (GRPO without the std): A_i = r_i - mean, off by the factor G / (G - 1)."""
    grouped = rewards.detach().view(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).view(-1)


def loo_divides_by_group_size(rewards, group_size):
    """Sums the other G - 1 rewards but divides by G."""
    grouped = rewards.detach().view(-1, group_size)
    return (grouped - (grouped.sum(dim=1, keepdim=True) - grouped) / group_size).view(-1)


def loo_over_the_batch(rewards, group_size):
    """Leaves one out of the whole batch instead of its own group."""
    r = rewards.detach()
    return r - (r.sum() - r) / (r.numel() - 1)


def loo_divides_by_std(rewards, group_size):
    """Divides the leave-one-out advantage by the group std, as GRPO does: RLOO has no std."""
    grouped = rewards.detach().view(-1, group_size)
    loo = grouped - (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)
    return (loo / (grouped.std(dim=1, keepdim=True) + 1e-4)).view(-1)


def loo_interleaved_groups(rewards, group_size):
    """Reads the groups as interleaved (view(G, -1)) although they are consecutive."""
    grouped = rewards.detach().view(group_size, -1)  # (G, N): wrong layout
    return (grouped - (grouped.sum(dim=0, keepdim=True) - grouped) / (group_size - 1)).reshape(-1)


def loo_sign_flipped(rewards, group_size):
    """Baseline minus reward: pushes the worse completions up."""
    grouped = rewards.detach().view(-1, group_size)
    return ((grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1) - grouped).view(-1)


def loo_not_detached(rewards, group_size):
    """The right values, but not detached: a gradient flows from the advantages back into the rewards."""
    grouped = rewards.view(-1, group_size)
    return (grouped - (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)).view(-1)


# dr_grpo_loss --------------------------------------------------------------------------------------------------
# The graded signature since the registry took over the KL: (logp_new, logp_old, advantages, mask, *, eps_low=0.2,
# eps_high=0.2, max_length=None); the same for cispo_loss with eps_low=None, eps_high=4.0.
def _clipped(logp_new, logp_old, advantages, mask, eps_low, eps_high):
    ratio = torch.exp(torch.where(mask.bool(), logp_new - logp_old.detach(), torch.zeros_like(logp_new)))
    adv = advantages.detach().unsqueeze(1)
    return -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)  # (B, T)


def dr_sequence_mean(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """Keeps GRPO's 1/|o_i| (mean over rows of each row's token mean): the length bias Dr. GRPO removes."""
    per_token = _clipped(logp_new, logp_old, advantages, mask, eps_low, eps_high) * mask
    return (per_token.sum(dim=1) / mask.sum(dim=1)).mean()


def dr_token_mean(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """Divides by the number of valid tokens (DAPO) instead of the constant B * max_length."""
    return (_clipped(logp_new, logp_old, advantages, mask, eps_low, eps_high) * mask).sum() / mask.sum()


def dr_ignores_max_length(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """Always divides by B * T, whatever max_length says."""
    return (_clipped(logp_new, logp_old, advantages, mask, eps_low, eps_high) * mask).sum() / mask.numel()


def dr_no_clip(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """No PPO clip: -ratio * A for every token."""
    B, T = mask.shape
    ratio = torch.exp((logp_new - logp_old.detach()) * mask)
    return (-ratio * advantages.detach().unsqueeze(1) * mask).sum() / (B * (max_length or T))


def dr_no_stop_gradient(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """logp_old is not detached: the loss also trains the sampler's log-probs."""
    B, T = mask.shape
    ratio = torch.exp((logp_new - logp_old) * mask)
    adv = advantages.detach().unsqueeze(1)
    per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)
    return (per_token * mask).sum() / (B * (max_length or T))


def dr_max_not_min(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """max instead of min: takes the optimistic term, so the clip never limits a bad update."""
    B, T = mask.shape
    ratio = torch.exp((logp_new - logp_old.detach()) * mask)
    adv = advantages.detach().unsqueeze(1)
    per_token = -torch.max(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)
    return (per_token * mask).sum() / (B * (max_length or T))


def dr_symmetric_clip(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """Reads eps_low only: the clip is [1 - eps_low, 1 + eps_low], so eps_high (clip-higher) changes nothing."""
    B, T = mask.shape
    return (_clipped(logp_new, logp_old, advantages, mask, eps_low, eps_low) * mask).sum() / (B * (max_length or T))


# cispo_loss ----------------------------------------------------------------------------------------------------
def _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low):
    ratio = torch.exp(torch.where(mask.bool(), logp_new - logp_old.detach(), torch.zeros_like(logp_new)))
    return ratio, torch.clamp(ratio, min=None if eps_low is None else 1 - eps_low, max=1 + eps_high)


def cispo_ppo_clip(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """PPO/DAPO's min-clip surrogate: the tokens whose ratio left the band lose their gradient."""
    ratio, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low)
    adv = advantages.detach().unsqueeze(1)
    return (-torch.min(ratio * adv, clipped * adv) * mask).sum() / mask.sum()


def cispo_weight_not_detached(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """No stop-gradient on the clipped weight: the gradient also flows through the ratio."""
    _, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low)
    return (-clipped * advantages.detach().unsqueeze(1) * logp_new * mask).sum() / mask.sum()


def cispo_sequence_mean(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """Averages each completion over its tokens, then over completions (GRPO's aggregation, not CISPO's)."""
    _, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low)
    per_token = -clipped.detach() * advantages.detach().unsqueeze(1) * logp_new
    return ((per_token * mask).sum(dim=1) / mask.sum(dim=1)).mean()


def cispo_no_clip(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """The importance weight is not clipped at all."""
    ratio, _ = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low)
    return (-ratio.detach() * advantages.detach().unsqueeze(1) * logp_new * mask).sum() / mask.sum()


def cispo_ratio_not_logp(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """Multiplies the weight by the ratio instead of log pi: a ratio surrogate, not CISPO's REINFORCE form."""
    ratio, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_low)
    return (-clipped.detach() * advantages.detach().unsqueeze(1) * ratio * mask).sum() / mask.sum()


def cispo_always_lower_bound(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """Applies a lower bound of 1 - 0.2 even when eps_low is None."""
    _, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, 0.2 if eps_low is None else eps_low)
    return (-clipped.detach() * advantages.detach().unsqueeze(1) * logp_new * mask).sum() / mask.sum()


def cispo_symmetric_default_low(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """eps_low=None falls back to eps_high (a symmetric clip): a lower bound 1 - eps_high, binding once eps_high < 1."""
    _, clipped = _cispo_weight(logp_new, logp_old, mask, eps_high, eps_high if eps_low is None else eps_low)
    return (-clipped.detach() * advantages.detach().unsqueeze(1) * logp_new * mask).sum() / mask.sum()


# ipo_loss ------------------------------------------------------------------------------------------------------
def ipo_sums_not_averages(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                          chosen_lengths, rejected_lengths, beta=0.1):
    """Ignores the lengths: the margin of summed log-ratios."""
    h = (policy_chosen_logps - ref_chosen_logps.detach()) - (policy_rejected_logps - ref_rejected_logps.detach())
    return ((h - 1 / (2 * beta)) ** 2).mean()


def ipo_target_one_over_beta(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                             chosen_lengths, rejected_lengths, beta=0.1):
    """Targets 1/beta instead of 1/(2 beta)."""
    c = (policy_chosen_logps - ref_chosen_logps.detach()) / chosen_lengths
    r = (policy_rejected_logps - ref_rejected_logps.detach()) / rejected_lengths
    return ((c - r - 1 / beta) ** 2).mean()


def ipo_target_sign(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                    chosen_lengths, rejected_lengths, beta=0.1):
    """Adds the target instead of subtracting it: pulls the margin to -1/(2 beta)."""
    c = (policy_chosen_logps - ref_chosen_logps.detach()) / chosen_lengths
    r = (policy_rejected_logps - ref_rejected_logps.detach()) / rejected_lengths
    return ((c - r + 1 / (2 * beta)) ** 2).mean()


def ipo_dpo_sigmoid(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                    chosen_lengths, rejected_lengths, beta=0.1):
    """DPO's -log sigma(beta h) on the length-normalised margin: no finite target."""
    c = (policy_chosen_logps - ref_chosen_logps.detach()) / chosen_lengths
    r = (policy_rejected_logps - ref_rejected_logps.detach()) / rejected_lengths
    return -F.logsigmoid(beta * (c - r)).mean()


def ipo_sum_not_mean(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                     chosen_lengths, rejected_lengths, beta=0.1):
    """Sums over pairs instead of averaging."""
    c = (policy_chosen_logps - ref_chosen_logps.detach()) / chosen_lengths
    r = (policy_rejected_logps - ref_rejected_logps.detach()) / rejected_lengths
    return ((c - r - 1 / (2 * beta)) ** 2).sum()


def ipo_one_length_for_both(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                            chosen_lengths, rejected_lengths, beta=0.1):
    """Divides both log-ratios by the chosen completion's length."""
    h = (policy_chosen_logps - ref_chosen_logps.detach()) - (policy_rejected_logps - ref_rejected_logps.detach())
    return ((h / chosen_lengths - 1 / (2 * beta)) ** 2).mean()


def ipo_reference_gradient(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                           chosen_lengths, rejected_lengths, beta=0.1):
    """No stop-gradient on the reference log-probs: the reference would be trained too."""
    c = (policy_chosen_logps - ref_chosen_logps) / chosen_lengths
    r = (policy_rejected_logps - ref_rejected_logps) / rejected_lengths
    return ((c - r - 1 / (2 * beta)) ** 2).mean()


# simpo_loss ----------------------------------------------------------------------------------------------------
def simpo_sums_not_averages(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                            gamma=0.5):
    """No length normalisation: the summed log-probs, which favour short completions."""
    return -F.logsigmoid(beta * (policy_chosen_logps - policy_rejected_logps) - gamma).mean()


def simpo_gamma_added(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                      gamma=0.5):
    """Adds the margin gamma instead of subtracting it."""
    z = beta * (policy_chosen_logps / chosen_lengths - policy_rejected_logps / rejected_lengths) + gamma
    return -F.logsigmoid(z).mean()


def simpo_gamma_scaled_by_beta(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths,
                               beta=2.0, gamma=0.5):
    """Puts gamma inside the beta: beta * (difference - gamma)."""
    z = beta * (policy_chosen_logps / chosen_lengths - policy_rejected_logps / rejected_lengths - gamma)
    return -F.logsigmoid(z).mean()


def simpo_sum_not_mean(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                       gamma=0.5):
    """Sums over pairs instead of averaging."""
    z = beta * (policy_chosen_logps / chosen_lengths - policy_rejected_logps / rejected_lengths) - gamma
    return -F.logsigmoid(z).sum()


def simpo_swapped(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0, gamma=0.5):
    """Chosen and rejected swapped: learns to prefer the rejected completion."""
    z = beta * (policy_rejected_logps / rejected_lengths - policy_chosen_logps / chosen_lengths) - gamma
    return -F.logsigmoid(z).mean()


def simpo_lengths_swapped(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                          gamma=0.5):
    """Divides each completion by the other one's length."""
    z = beta * (policy_chosen_logps / rejected_lengths - policy_rejected_logps / chosen_lengths) - gamma
    return -F.logsigmoid(z).mean()


def simpo_log_of_sigmoid(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                         gamma=0.5):
    """log(sigmoid(z)) instead of logsigmoid: right for moderate margins, but sigmoid(z) underflows to 0 in float32
    at a margin of about -100 and the loss becomes inf (its gradient NaN)."""
    z = beta * policy_chosen_logps / chosen_lengths - beta * policy_rejected_logps / rejected_lengths - gamma
    return -torch.log(torch.sigmoid(z)).mean()


BUGS = {
    "leave_one_out_advantages": [loo_includes_self, loo_divides_by_group_size, loo_over_the_batch, loo_divides_by_std,
                                 loo_interleaved_groups, loo_sign_flipped, loo_not_detached],
    "dr_grpo_loss": [dr_sequence_mean, dr_token_mean, dr_ignores_max_length, dr_no_clip, dr_no_stop_gradient,
                     dr_max_not_min, dr_symmetric_clip],
    "cispo_loss": [cispo_ppo_clip, cispo_weight_not_detached, cispo_sequence_mean, cispo_no_clip, cispo_ratio_not_logp,
                   cispo_always_lower_bound, cispo_symmetric_default_low],
    "ipo_loss": [ipo_sums_not_averages, ipo_target_one_over_beta, ipo_target_sign, ipo_dpo_sigmoid, ipo_sum_not_mean,
                 ipo_one_length_for_both, ipo_reference_gradient],
    "simpo_loss": [simpo_sums_not_averages, simpo_gamma_added, simpo_gamma_scaled_by_beta, simpo_sum_not_mean,
                   simpo_swapped, simpo_lengths_swapped, simpo_log_of_sigmoid],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_loo_loop(rewards, group_size):
    """A plain loop over groups and members, one Python float at a time."""
    values = rewards.detach().tolist()
    out = []
    for start in range(0, len(values), group_size):
        group = values[start:start + group_size]
        out += [r - (sum(group) - r) / (group_size - 1) for r in group]
    return torch.tensor(out, dtype=rewards.dtype)


def alt_loo_rescaled_centred(rewards, group_size):
    """G / (G - 1) * (r - group mean), with torch.no_grad()."""
    with torch.no_grad():
        grouped = rewards.reshape(-1, group_size)
        return (group_size / (group_size - 1) * (grouped - grouped.mean(dim=1, keepdim=True))).reshape(-1)


def alt_dr_grpo_loop(logp_new, logp_old, advantages, mask, *, eps_low=0.2, eps_high=0.2, max_length=None):
    """Row by row, masked by multiplication."""
    B, T = mask.shape
    total = torch.zeros((), dtype=logp_new.dtype)
    for b in range(B):
        m = mask[b]
        ratio = ((logp_new[b] - logp_old[b].detach()) * m).exp()
        a = float(advantages[b])
        surrogate = torch.minimum(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
        total = total - (surrogate * m).sum()
    return total / (B * (T if max_length is None else max_length))


def alt_cispo_no_grad_weight(logp_new, logp_old, advantages, mask, *, eps_low=None, eps_high=4.0):
    """The weight computed under torch.no_grad(), masked by multiplication, clamp_max then clamp_min."""
    with torch.no_grad():
        weight = torch.exp((logp_new - logp_old) * mask).clamp_max(1 + eps_high)
        if eps_low is not None:
            weight = weight.clamp_min(1 - eps_low)
    return (-weight * advantages[:, None] * logp_new * mask).sum() / mask.sum()


def alt_ipo_expanded(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                     chosen_lengths, rejected_lengths, beta=0.1):
    """The margin built from policy and reference differences separately, squared by multiplication."""
    policy = policy_chosen_logps / chosen_lengths - policy_rejected_logps / rejected_lengths
    ref = (ref_chosen_logps / chosen_lengths - ref_rejected_logps / rejected_lengths).detach()
    gap = policy - ref - 0.5 / beta
    return (gap * gap).sum() / gap.numel()


def alt_simpo_softplus(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta=2.0,
                       gamma=0.5):
    """softplus(-z), averaging log-probs with float lengths."""
    chosen = policy_chosen_logps / chosen_lengths.double()
    rejected = policy_rejected_logps / rejected_lengths.double()
    return F.softplus(-(beta * (chosen - rejected) - gamma)).mean()


ALTERNATIVES = {
    "leave_one_out_advantages": [alt_loo_loop, alt_loo_rescaled_centred],
    "dr_grpo_loss": [alt_dr_grpo_loop],
    "cispo_loss": [alt_cispo_no_grad_weight],
    "ipo_loss": [alt_ipo_expanded],
    "simpo_loss": [alt_simpo_softplus],
}

"""Known bugs for lab04_dpo: ``sequence_logprobs`` and ``dpo_loss``."""

import torch
import torch.nn.functional as F


# sequence_logprobs ---------------------------------------------------------------------------------------------
def _gather(logp, labels, mask):
    safe = torch.where(mask.bool(), labels, torch.zeros_like(labels))
    return logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)


def slp_mean_not_sum(logits, labels, mask):
    """Mean over valid tokens instead of the sum: a length-normalized log-prob, not log pi(y|x)."""
    m = mask.to(logits.dtype)
    return (_gather(logits.log_softmax(-1), labels, mask) * m).sum(-1) / m.sum(-1)


def slp_ignores_mask(logits, labels, mask):
    """Sums over every position, prompt and padding included."""
    safe = labels.clamp(min=0)
    return logits.log_softmax(-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1).sum(-1)


def slp_raw_logits(logits, labels, mask):
    """Gathers raw logits (no log_softmax): unnormalized scores, not log-probs."""
    return (_gather(logits, labels, mask) * mask).sum(-1)


def slp_double_shift(logits, labels, mask):
    """Shifts again although logits are already aligned: scores labels[t] with logits[t - 1]."""
    logp = logits.log_softmax(-1)
    shifted = torch.cat([logp[:, :1], logp[:, :-1]], dim=1)  # (B, T, V) logits[t-1] at t
    return (_gather(shifted, labels, mask) * mask).sum(-1)


def slp_softmax_over_time(logits, labels, mask):
    """log_softmax over the time dimension instead of the vocabulary."""
    return (_gather(logits.log_softmax(1), labels, mask) * mask).sum(-1)


def slp_log_of_softmax(logits, labels, mask):
    """torch.log(torch.softmax(...)): right for small logits, -inf once a label's probability underflows
    (float32 logits a few hundred nats apart)."""
    return (_gather(torch.log(torch.softmax(logits, dim=-1)), labels, mask) * mask).sum(-1)


def slp_view_cross_entropy(logits, labels, mask):
    """Cross-entropy on logits.view(-1, V): right on contiguous logits, raises on a transposed view."""
    B, T, V = logits.shape
    targets = labels.masked_fill(mask == 0, -100).view(-1)  # (B*T,)
    return -F.cross_entropy(logits.view(-1, V), targets, ignore_index=-100, reduction="none").view(B, T).sum(-1)


def slp_keeps_low_precision(logits, labels, mask):
    """log_softmax in the logits' own dtype: bfloat16 logits give a bfloat16 sum (8 bits of mantissa), not the
    float32 sum the contract asks for."""
    valid = mask.bool()
    token = _gather(torch.log_softmax(logits, dim=-1), labels, mask)
    return torch.where(valid, token, torch.zeros_like(token)).sum(-1)


# dpo_loss ------------------------------------------------------------------------------------------------------
def dpo_chosen_rejected_swapped(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                                beta=0.1):
    """Chosen and rejected swapped: learns to prefer the rejected completion."""
    d = (policy_rejected_logps - ref_rejected_logps) - (policy_chosen_logps - ref_chosen_logps)
    return -F.logsigmoid(beta * d).mean()


def dpo_beta_outside(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """beta multiplies the loss instead of the logit: -beta * log sigma(delta)."""
    d = (policy_chosen_logps - ref_chosen_logps) - (policy_rejected_logps - ref_rejected_logps)
    return -beta * F.logsigmoid(d).mean()


def dpo_no_reference(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """Forgets the reference model: -log sigma(beta (pi_c - pi_r))."""
    return -F.logsigmoid(beta * (policy_chosen_logps - policy_rejected_logps)).mean()


def dpo_reference_gradient(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                           beta=0.1):
    """No stop-gradient on the reference log-probs: the reference would be trained too."""
    d = (policy_chosen_logps - ref_chosen_logps) - (policy_rejected_logps - ref_rejected_logps)
    return -F.logsigmoid(beta * d).mean()


def dpo_sum_not_mean(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """Sum over the batch instead of the mean."""
    d = (policy_chosen_logps - ref_chosen_logps.detach()) - (policy_rejected_logps - ref_rejected_logps.detach())
    return -F.logsigmoid(beta * d).sum()


def dpo_reference_added(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """Reference log-probs added instead of subtracted."""
    d = (policy_chosen_logps + ref_chosen_logps.detach()) - (policy_rejected_logps + ref_rejected_logps.detach())
    return -F.logsigmoid(beta * d).mean()


def dpo_log_of_sigmoid(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """-torch.log(torch.sigmoid(z)): right for small margins, inf (and a NaN gradient) once sigmoid(z) underflows
    to 0, at z = -200 in float32."""
    chosen, rejected = policy_chosen_logps - ref_chosen_logps.detach(), policy_rejected_logps - ref_rejected_logps.detach()
    z = beta * (chosen - rejected)
    return -torch.log(torch.sigmoid(z)).mean()


BUGS = {
    "sequence_logprobs": [slp_mean_not_sum, slp_ignores_mask, slp_raw_logits, slp_double_shift, slp_softmax_over_time,
                          slp_log_of_softmax, slp_view_cross_entropy, slp_keeps_low_precision],
    "dpo_loss": [dpo_chosen_rejected_swapped, dpo_beta_outside, dpo_no_reference, dpo_reference_gradient,
                 dpo_sum_not_mean, dpo_reference_added, dpo_log_of_sigmoid],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_slp_cross_entropy(logits, labels, mask):
    """Negative token-level cross-entropy with ignore_index=-100 on masked positions, summed per row (half-precision
    logits upcast to float32 first)."""
    logits = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    targets = labels.masked_fill(mask == 0, -100)
    return -F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=-100, reduction="none").sum(-1)


def alt_dpo_softplus(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """softplus(-beta * delta) under torch.no_grad() reference log-ratios."""
    with torch.no_grad():
        ref_margin = ref_chosen_logps - ref_rejected_logps
    return F.softplus(-beta * (policy_chosen_logps - policy_rejected_logps - ref_margin)).mean()


def alt_slp_logsumexp(logits, labels, mask):
    """logit of the label minus logsumexp over V, masked with torch.where, on a .reshape'd flat view, in float32 at
    least."""
    B, T, V = logits.shape
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    flat = logits.reshape(B * T, V)  # (B*T, V) copies when the logits are not contiguous
    safe = torch.where(mask.bool(), labels, torch.zeros_like(labels)).reshape(-1)  # (B*T,)
    token = flat.gather(1, safe[:, None])[:, 0] - torch.logsumexp(flat, dim=-1)  # (B*T,)
    return torch.where(mask.bool(), token.reshape(B, T), torch.zeros(B, T, dtype=token.dtype)).sum(-1)


def alt_dpo_logsigmoid(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """-F.logsigmoid of the margin, written as the difference of the two implicit rewards."""
    chosen_rewards = beta * (policy_chosen_logps - ref_chosen_logps.detach())
    rejected_rewards = beta * (policy_rejected_logps - ref_rejected_logps.detach())
    return -F.logsigmoid(chosen_rewards - rejected_rewards).mean()


def alt_dpo_bce_with_logits(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                            beta=0.1):
    """Binary cross-entropy with logits against the label 1 (the chosen completion wins)."""
    chosen, rejected = policy_chosen_logps - ref_chosen_logps.detach(), policy_rejected_logps - ref_rejected_logps.detach()
    z = beta * (chosen - rejected)
    return F.binary_cross_entropy_with_logits(z, torch.ones_like(z))


ALTERNATIVES = {"sequence_logprobs": [alt_slp_cross_entropy, alt_slp_logsumexp],
                "dpo_loss": [alt_dpo_softplus, alt_dpo_logsigmoid, alt_dpo_bce_with_logits]}

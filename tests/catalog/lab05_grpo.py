"""Known bugs for lab05_grpo: group_advantages, kl_k3, grpo_loss, diagnose_zero_loss."""

import torch


# group_advantages ----------------------------------------------------------------------------------------------
def _divide(centred, std, scale, eps):
    return centred if scale == "none" else centred / (std + eps)


def ga_population_std(rewards, group_size, scale="group", eps=1e-4):
    """Population std (unbiased=False) instead of Bessel's correction (TRL uses Bessel)."""
    g = rewards.view(-1, group_size)
    c = (g - g.mean(1, keepdim=True)).view(-1)
    std = g.std(1, unbiased=False).repeat_interleave(group_size) if scale == "group" else rewards.std(unbiased=False)
    return _divide(c, std, scale, eps)


def ga_missing_eps(rewards, group_size, scale="group", eps=1e-4):
    """Missing eps: a group whose rewards are all equal divides 0 by 0 and gives NaN."""
    g = rewards.view(-1, group_size)
    c = (g - g.mean(1, keepdim=True)).view(-1)
    std = g.std(1).repeat_interleave(group_size) if scale == "group" else rewards.std()
    return _divide(c, std, scale, 0.0)


def ga_batch_mean(rewards, group_size, scale="group", eps=1e-4):
    """Centres on the batch mean instead of each group's mean."""
    g = rewards.view(-1, group_size)
    c = rewards - rewards.mean()
    std = g.std(1).repeat_interleave(group_size) if scale == "group" else rewards.std()
    return _divide(c, std, scale, eps)


def ga_strided_groups(rewards, group_size, scale="group", eps=1e-4):
    """Groups taken as strided columns (view(G, -1)) instead of consecutive runs (view(-1, G))."""
    g = rewards.view(group_size, -1)  # (G, N) wrong layout
    c = (g - g.mean(0, keepdim=True)).reshape(-1)
    std = g.std(0).repeat(group_size) if scale == "group" else rewards.std()
    return _divide(c, std, scale, eps)


def ga_none_still_divides(rewards, group_size, scale="group", eps=1e-4):
    """scale="none" still divides by the group std (Dr. GRPO's fix not applied)."""
    g = rewards.view(-1, group_size)
    c = (g - g.mean(1, keepdim=True)).view(-1)
    std = rewards.std() if scale == "batch" else g.std(1).repeat_interleave(group_size)
    return c / (std + eps)


def ga_eps_in_sqrt(rewards, group_size, scale="group", eps=1e-4):
    """eps added to the variance under the square root instead of to the std."""
    g = rewards.view(-1, group_size)
    c = (g - g.mean(1, keepdim=True)).view(-1)
    var = g.var(1).repeat_interleave(group_size) if scale == "group" else rewards.var()
    return c if scale == "none" else c / torch.sqrt(var + eps)


def ga_tied_group_noise(rewards, group_size, scale="group", eps=1e-4):
    """(r - mean) / (std + eps) with no exact zero for a tied group: in float32 the centred rewards of six equal
    rewards are rounding noise, which a small eps turns into advantages of order 1."""
    grouped = rewards.detach().view(-1, group_size)
    centred = (grouped - grouped.mean(dim=1, keepdim=True)).view(-1)
    std = {"group": lambda: grouped.std(dim=1).repeat_interleave(group_size) + eps,
           "batch": lambda: rewards.detach().std() + eps, "none": lambda: torch.ones((), dtype=rewards.dtype)}[scale]
    return centred / std()


# kl_k3 ---------------------------------------------------------------------------------------------------------
def _log_ratio(logp, ref_logp, mask):
    """ref_logp - logp, 0 where the mask is 0 (selected before any exp, as the contract asks)."""
    d = ref_logp - logp
    return d if mask is None else torch.where(mask.bool(), d, torch.zeros_like(d))


def k3_wrong_direction(logp, ref_logp, mask=None):
    """KL in the wrong direction: r = pi / pi_ref instead of pi_ref / pi (estimates KL(pi_ref || pi) badly)."""
    d = -_log_ratio(logp, ref_logp, mask)
    return torch.exp(d) - d - 1


def k3_is_k1(logp, ref_logp, mask=None):
    """Returns k1 = log pi - log pi_ref (unbiased but can be negative), not k3."""
    return -_log_ratio(logp, ref_logp, mask)


def k3_is_k2(logp, ref_logp, mask=None):
    """Returns k2 = (log r)^2 / 2, not k3."""
    return 0.5 * _log_ratio(logp, ref_logp, mask) ** 2


def k3_missing_minus_one(logp, ref_logp, mask=None):
    """Missing the -1: equals 1 (not 0) when pi == pi_ref."""
    d = _log_ratio(logp, ref_logp, mask)
    return torch.exp(d) - d


def k3_log_term_sign(logp, ref_logp, mask=None):
    """Sign error on the log term: exp(d) + d - 1."""
    d = _log_ratio(logp, ref_logp, mask)
    return torch.exp(d) + d - 1


def k3_masks_after_exp(logp, ref_logp, mask=None):
    """Multiplies by the mask after the exp: a -inf log-prob in padding gives exp(inf) * 0 = NaN there (and a NaN
    gradient), where the contract says exactly 0."""
    d = ref_logp - logp
    k3 = torch.exp(d) - d - 1
    return k3 if mask is None else k3 * mask


# grpo_loss -----------------------------------------------------------------------------------------------------
def _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation, importance_level,
          *, use_max=False, detach_old=True, kl_sign=1.0, kl_reversed=False, denominator="valid", force_agg=None,
          detach_adv=True, clamp_den=True, kl_on_sequence=False, adv_per_row=False):
    """The contract, but for the one mistake a keyword names."""
    old = logp_old.detach() if detach_old else logp_old
    m = mask.to(logp_new.dtype)
    log_ratio = (logp_new - old) * m
    if importance_level == "sequence":  # GSPO: every token gets its row's length-normalised log-ratio
        log_ratio = (log_ratio.sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp(min=1.0)).expand_as(m)
    ratio = torch.exp(log_ratio)
    adv = advantages.detach() if detach_adv else advantages
    a = adv.unsqueeze(1) if adv.ndim == 1 or adv_per_row else adv
    a = a[..., :1] if adv_per_row and a.ndim == 3 else a
    pick = torch.max if use_max else torch.min
    per_token = -pick(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
    if beta > 0:
        logp = old + log_ratio if kl_on_sequence else logp_new
        d = (logp - ref_logp) if kl_reversed else (ref_logp - logp)
        per_token = per_token + kl_sign * beta * (torch.exp(d) - d - 1)
    if per_token.ndim == 3:  # [B, T] advantages taken per row: a [B, 1, T] broadcast
        per_token = per_token[:, 0]
    lo = 1.0 if clamp_den else 0.0
    agg = force_agg or aggregation
    if agg == "token":
        den = m.sum().clamp(min=lo) if denominator == "valid" else torch.tensor(float(m.numel()))
        return (per_token * m).sum() / den
    den = m.sum(1).clamp(min=lo) if denominator == "valid" else torch.tensor(float(m.shape[1]))
    return ((per_token * m).sum(1) / den).mean()


def grpo_max_not_min(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                     aggregation="token", importance_level="token"):
    """max instead of min in the clipped surrogate."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, use_max=True)


def grpo_symmetric_clip(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                        aggregation="token", importance_level="token"):
    """Ignores eps_high: clips symmetrically with eps_low (no clip-higher)."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_low, beta, ref_logp, aggregation, importance_level)


def grpo_always_sequence(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                         aggregation="token", importance_level="token"):
    """Ignores ``aggregation``: always the per-sequence mean (GRPO), never DAPO's token-level sum."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, force_agg="sequence")


def grpo_mean_over_padding(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                           ref_logp=None, aggregation="token", importance_level="token"):
    """Denominator counts padding: divides by B*T (token) or T (sequence)."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, denominator="all")


def grpo_kl_sign(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                 aggregation="token", importance_level="token"):
    """KL term subtracted from the loss: rewards drifting away from the reference."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation, importance_level,
                 kl_sign=-1.0)


def grpo_kl_wrong_direction(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                            ref_logp=None, aggregation="token", importance_level="token"):
    """k3 with the ratio inverted (pi / pi_ref): KL in the wrong direction."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, kl_reversed=True)


def grpo_no_stop_gradient(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                          ref_logp=None, aggregation="token", importance_level="token"):
    """No stop-gradient on the old log-probs."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, detach_old=False)


def grpo_eps_swapped(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                     aggregation="token", importance_level="token"):
    """eps_low and eps_high swapped: clip-higher becomes clip-lower."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_high, eps_low, beta, ref_logp, aggregation, importance_level)


def grpo_ignores_importance_level(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                                  ref_logp=None, aggregation="token", importance_level="token"):
    """Ignores importance_level: always the token ratio, never GSPO's sequence ratio."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation, "token")


def grpo_kl_on_sequence_logp(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                             ref_logp=None, aggregation="token", importance_level="token"):
    """With importance_level="sequence", computes k3 from the smoothed log-probs logp_old + sequence log-ratio
    instead of the real per-token logp_new."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, kl_on_sequence=True)


def grpo_advantages_not_detached(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                                 ref_logp=None, aggregation="token", importance_level="token"):
    """The advantages are not detached: a gradient flows into them (they must be constants)."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, detach_adv=False)


def grpo_empty_mask_nan(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                        aggregation="token", importance_level="token"):
    """Denominators not clamped at 1: a batch with no valid token gives 0/0 = NaN instead of 0."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, clamp_den=False)


def grpo_advantages_always_per_row(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0,
                                   ref_logp=None, aggregation="token", importance_level="token"):
    """Always reads advantages as one per completion: [B, T] advantages are cut to their first token."""
    return _grpo(logp_new, logp_old, advantages, mask, eps_low, eps_high, beta, ref_logp, aggregation,
                 importance_level, adv_per_row=True)


# diagnose_zero_loss --------------------------------------------------------------------------------------------
def dz_wrong_order(stats):
    """Checks zero advantage before valid tokens: an all-masked batch is reported as zero_advantage."""
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["clip_frac"] >= 1:
        return "all_clipped"
    return "expected"


def dz_loss_zero_is_expected(stats):
    """Any zero loss is called expected: ignores the other stats."""
    if stats["loss"] == 0:
        return "expected"
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    return "zero_advantage"


def dz_any_zero_std_group(stats):
    """One zero-std group is enough to call it zero_advantage (should be: every group)."""
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] > 0:
        return "zero_advantage"
    if stats["clip_frac"] >= 1:
        return "all_clipped"
    return "expected"


def dz_half_clipped(stats):
    """Calls all_clipped when more than half the tokens are clipped."""
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    if stats["clip_frac"] > 0.5:
        return "all_clipped"
    return "expected"


def dz_any_invalid_token(stats):
    """Calls no_valid_tokens when any token is invalid (frac_valid_tokens < 1) instead of when none is valid."""
    if stats["frac_valid_tokens"] < 1:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    if stats["clip_frac"] >= 1:
        return "all_clipped"
    return "expected"


def dz_never_clipped(stats):
    """Missing the all_clipped branch."""
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    return "expected"


def dz_unexplained_is_expected(stats):
    """A zero gradient that none of the three causes explains is called "expected" instead of raising ValueError."""
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    if stats["clip_frac"] >= 1:
        return "all_clipped"
    return "expected"


def dz_beta_not_required(stats):
    """Reads only the keys the decision uses: stats without beta or num_iterations pass unchecked."""
    for key in ("loss", "grad_norm", "frac_zero_std_groups", "frac_valid_tokens", "clip_frac"):
        if key not in stats:
            raise ValueError(f"stats is missing {key}")
    if stats["frac_valid_tokens"] == 0:
        return "no_valid_tokens"
    if stats["frac_zero_std_groups"] >= 1:
        return "zero_advantage"
    if stats["clip_frac"] >= 1:
        return "all_clipped"
    if stats["grad_norm"] > 0:
        return "expected"
    raise ValueError("grad_norm is 0 and nothing explains it")


BUGS = {
    "group_advantages": [ga_population_std, ga_missing_eps, ga_batch_mean, ga_strided_groups, ga_none_still_divides,
                         ga_eps_in_sqrt, ga_tied_group_noise],
    "kl_k3": [k3_wrong_direction, k3_is_k1, k3_is_k2, k3_missing_minus_one, k3_log_term_sign, k3_masks_after_exp],
    "grpo_loss": [grpo_max_not_min, grpo_symmetric_clip, grpo_always_sequence, grpo_mean_over_padding, grpo_kl_sign,
                  grpo_kl_wrong_direction, grpo_no_stop_gradient, grpo_eps_swapped, grpo_ignores_importance_level,
                  grpo_kl_on_sequence_logp, grpo_advantages_not_detached, grpo_empty_mask_nan,
                  grpo_advantages_always_per_row],
    "diagnose_zero_loss": [dz_wrong_order, dz_loss_zero_is_expected, dz_any_zero_std_group, dz_half_clipped,
                           dz_any_invalid_token, dz_never_clipped, dz_unexplained_is_expected, dz_beta_not_required],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_ga_group_loop(rewards, group_size, scale="group", eps=1e-4):
    """Loop over groups with statistics.stdev (Bessel) and the batch std from torch.std."""
    import statistics

    out = []
    batch_std = float(rewards.std())
    values = rewards.tolist()
    for i in range(0, len(values), group_size):
        group = values[i:i + group_size]
        mean = sum(group) / len(group)
        std = {"group": statistics.stdev(group), "batch": batch_std, "none": None}[scale]
        out += [(r - mean) if std is None else (r - mean) / (std + eps) for r in group]
    return torch.tensor(out, dtype=rewards.dtype)


def alt_k3_ratio_form(logp, ref_logp, mask=None):
    """(r - 1) - log r with r = pi_ref / pi computed first; masked positions filled with equal log-probs first."""
    if mask is not None:
        logp, ref_logp = logp.masked_fill(mask == 0, 0.0), ref_logp.masked_fill(mask == 0, 0.0)
    ratio = torch.exp(ref_logp - logp)
    return (ratio - 1) - torch.log(ratio)


def alt_grpo_explicit(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                      aggregation="token", importance_level="token"):
    """maximum of negated terms; the GSPO ratio by a row loop; a row loop for the sequence aggregation; an empty
    batch returns 0 explicitly."""
    valid = mask.bool()
    if not valid.any():
        return (logp_new * 0).sum()
    log_ratio = (logp_new - logp_old.detach()).masked_fill(~valid, 0.0)
    if importance_level == "sequence":
        rows = [log_ratio[b][valid[b]].mean() if valid[b].any() else log_ratio[b, 0] * 0 for b in range(len(mask))]
        log_ratio = torch.stack(rows)[:, None].expand_as(log_ratio)
    ratio = torch.exp(log_ratio)
    adv = advantages.detach()
    adv = adv[:, None] if adv.ndim == 1 else adv
    loss = torch.maximum(-ratio * adv, -torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)
    if beta:
        d = ref_logp - logp_new
        loss = loss + beta * (torch.exp(d) - d - 1)
    if aggregation == "token":
        return loss[valid].mean()
    return torch.stack([loss[b][valid[b]].mean() if valid[b].any() else loss[b, 0] * 0
                        for b in range(loss.shape[0])]).mean()


def alt_dz_table(stats):
    """Same decision order written as a table of (predicate, label); the keys checked with a set difference."""
    missing = {"loss", "grad_norm", "frac_zero_std_groups", "frac_valid_tokens", "clip_frac", "beta",
               "num_iterations"} - set(stats)
    if missing:
        raise KeyError(f"stats is missing {sorted(missing)}")
    rules = [(lambda s: s["frac_valid_tokens"] == 0, "no_valid_tokens"),
             (lambda s: s["frac_zero_std_groups"] == 1, "zero_advantage"),
             (lambda s: s["clip_frac"] == 1, "all_clipped"),
             (lambda s: s["grad_norm"] > 0, "expected")]
    for rule, label in rules:
        if rule(stats):
            return label
    raise ValueError("grad_norm is 0 and nothing explains it: look for a detached loss or a frozen model")


ALTERNATIVES = {
    "group_advantages": [alt_ga_group_loop],
    "kl_k3": [alt_k3_ratio_form],
    "grpo_loss": [alt_grpo_explicit],
    "diagnose_zero_loss": [alt_dz_table],
}

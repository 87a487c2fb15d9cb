"""Known bugs for lab03_ppo_rlhf: masked_mean, kl_penalized_rewards, compute_gae_tokens, ppo_clip_loss, value_loss."""

import torch


# masked_mean ---------------------------------------------------------------------------------------------------
def mm_ignores_mask(x, mask):
    """Mean over padding: x.mean() ignores the mask."""
    return x.mean()


def mm_divides_by_numel(x, mask):
    """Zeroes padding but divides by all B*T positions."""
    return (x * mask).sum() / x.numel()


def mm_mean_of_row_means(x, mask):
    """Sequence-level mean (mean of per-row means) instead of the token-level mean over all valid tokens."""
    m = mask.to(x.dtype)
    return ((x * m).sum(1) / m.sum(1)).mean()


def mm_no_division(x, mask):
    """Masked sum, never divided by the number of valid tokens."""
    return (x * mask).sum()


def mm_inverted_mask(x, mask):
    """Mask inverted: averages the padding instead of the valid tokens."""
    m = 1 - mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1)


def mm_product_with_mask(x, mask):
    """(x * mask).sum() / mask.sum(): right on finite padding, NaN once padding holds inf or NaN (0 * inf)."""
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum()


def mm_view_flatten(x, mask):
    """Flattens with .view(-1), which raises on non-contiguous inputs such as x.T (reshape would copy)."""
    return torch.where(mask.view(-1) > 0, x.view(-1), torch.zeros_like(x.view(-1))).sum() / mask.sum()


# kl_penalized_rewards ------------------------------------------------------------------------------------------
def mm_rejects_bool_mask(x, mask):
    """Selects with 1 - mask, which torch refuses for a bool mask (the contract allows bool or float)."""
    return x.masked_fill((1 - mask).bool(), 0.0).sum() / mask.sum()


def kl_score_at_last_column(score, logp, ref_logp, mask, kl_coef):
    """Score added at position T-1 (padding for short rows) instead of the last valid token."""
    r = -kl_coef * (logp - ref_logp) * mask
    r[:, -1] += score
    return r


def kl_sign_flipped(score, logp, ref_logp, mask, kl_coef):
    """KL in the wrong direction: -kl_coef * (ref_logp - logp) rewards drifting away from the reference."""
    r = -kl_coef * (ref_logp - logp) * mask
    last = mask.shape[1] - 1 - mask.flip(1).to(torch.int64).argmax(1)
    r[torch.arange(mask.shape[0]), last] += score
    return r


def kl_padding_not_zeroed(score, logp, ref_logp, mask, kl_coef):
    """KL penalty left on invalid (padding) positions."""
    r = -kl_coef * (logp - ref_logp)
    last = mask.shape[1] - 1 - mask.flip(1).to(torch.int64).argmax(1)
    r[torch.arange(mask.shape[0]), last] += score
    return r


def kl_score_at_first_token(score, logp, ref_logp, mask, kl_coef):
    """Score added at the first completion token instead of the last valid one."""
    r = -kl_coef * (logp - ref_logp) * mask
    r[:, 0] += score
    return r


def kl_score_every_token(score, logp, ref_logp, mask, kl_coef):
    """Score added at every valid token (a length bonus) instead of once at the end."""
    return (-kl_coef * (logp - ref_logp) + score[:, None]) * mask


def kl_last_index_off_by_one(score, logp, ref_logp, mask, kl_coef):
    """Last valid index taken as mask.sum(1) (one past the end), clamped at T-1."""
    r = -kl_coef * (logp - ref_logp) * mask
    last = mask.sum(1).long().clamp(max=mask.shape[1] - 1)
    r[torch.arange(mask.shape[0]), last] += score
    return r


def kl_not_detached(score, logp, ref_logp, mask, kl_coef):
    """The right rewards, but not detached: a gradient would flow from the rewards into the policy's log-probs."""
    valid = mask.bool()
    rewards = torch.where(valid, -kl_coef * (logp - ref_logp), torch.zeros_like(logp))
    last = mask.shape[1] - 1 - valid.flip(dims=[1]).to(torch.int64).argmax(dim=1)
    return rewards.index_put((torch.arange(mask.shape[0]), last), score.to(rewards.dtype), accumulate=True)


# compute_gae_tokens --------------------------------------------------------------------------------------------
def _gae_loop(rewards, values, mask, gamma, lam, bootstrap_padding=False, zero_invalid=True, delta_swapped=False,
              lam_only=False):
    rewards, values = rewards.detach(), values.detach()  # targets: detached, as the contract says
    B, T = rewards.shape
    adv = torch.zeros_like(values)
    for b in range(B):
        last = 0.0
        for t in reversed(range(T)):
            nxt_valid = float(mask[b, t + 1]) if t + 1 < T else 0.0
            if bootstrap_padding and t + 1 < T:
                nxt_valid = 1.0
            nxt_v = float(values[b, t + 1]) if t + 1 < T else 0.0
            if delta_swapped:
                delta = float(rewards[b, t]) + gamma * float(values[b, t]) - nxt_v * nxt_valid
            else:
                delta = float(rewards[b, t]) + gamma * nxt_v * nxt_valid - float(values[b, t])
            decay = lam if lam_only else gamma * lam
            last = delta + decay * nxt_valid * last
            if zero_invalid and mask[b, t] == 0:
                last = 0.0
            adv[b, t] = last
    return adv


def gae_bootstraps_padding(rewards, values, mask, gamma=1.0, lam=0.95):
    """Bootstraps from the value at the first padding position: the episode does not end at the last token."""
    adv = _gae_loop(rewards * mask, values, mask, gamma, lam, bootstrap_padding=True)
    return adv, adv + values


def gae_returns_without_values(rewards, values, mask, gamma=1.0, lam=0.95):
    """returns = advantages (forgets to add the values back)."""
    adv = _gae_loop(rewards * mask, values, mask, gamma, lam)
    return adv, adv.clone()


def gae_invalid_not_zeroed(rewards, values, mask, gamma=1.0, lam=0.95):
    """Advantages at padding positions left as -V (garbage that leaks into a masked loss if the mask slips)."""
    adv = _gae_loop(rewards * mask, values, mask, gamma, lam, zero_invalid=False)
    return adv, adv + values


def gae_delta_swapped(rewards, values, mask, gamma=1.0, lam=0.95):
    """TD residual with the values swapped: r + gamma V_t - V_{t+1}."""
    adv = _gae_loop(rewards * mask, values, mask, gamma, lam, delta_swapped=True)
    return adv, adv + values


def gae_lambda_without_gamma(rewards, values, mask, gamma=1.0, lam=0.95):
    """Decays the recursion by lam alone instead of gamma * lam."""
    adv = _gae_loop(rewards * mask, values, mask, gamma, lam, lam_only=True)
    return adv, adv + values


def gae_forward_recursion(rewards, values, mask, gamma=1.0, lam=0.95):
    """Runs the recursion forward in time (accumulates the past instead of the future)."""
    m = mask.to(values.dtype)
    adv = torch.zeros_like(values)
    last = torch.zeros_like(values[:, 0])
    T = values.shape[1]
    for t in range(T):
        nv = values[:, t + 1] * m[:, t + 1] if t + 1 < T else torch.zeros_like(last)
        delta = rewards[:, t] * m[:, t] + gamma * nv - values[:, t]
        last = (delta + gamma * lam * last) * m[:, t]
        adv[:, t] = last
    return adv, adv + values


def gae_masks_by_product(rewards, values, mask, gamma=1.0, lam=0.95):
    """Zeroes padding by multiplying with the mask: right on finite padding, NaN once a padding value is inf or NaN
    (the contract says values at invalid positions are never read)."""
    m = mask.to(values.dtype)
    r, v = rewards.detach() * m, values.detach() * m
    adv = torch.zeros_like(v)
    last = torch.zeros_like(v[:, 0])
    for t in reversed(range(v.shape[1])):
        nxt_m = m[:, t + 1] if t + 1 < v.shape[1] else torch.zeros_like(last)
        nxt_v = v[:, t + 1] if t + 1 < v.shape[1] else torch.zeros_like(last)
        last = (r[:, t] + gamma * nxt_v * nxt_m - v[:, t] + gamma * lam * nxt_m * last) * m[:, t]
        adv[:, t] = last
    return adv, adv + values.detach()


def gae_not_detached(rewards, values, mask, gamma=1.0, lam=0.95):
    """The right advantages, but not detached: targets that carry a graph back into the value head."""
    m = mask.to(values.dtype)
    r = torch.where(m > 0, rewards, torch.zeros_like(m))
    v = torch.where(m > 0, values, torch.zeros_like(m))
    steps, last = [], torch.zeros_like(v[:, 0])
    for t in reversed(range(v.shape[1])):
        nxt_m = m[:, t + 1] if t + 1 < v.shape[1] else torch.zeros_like(last)
        nxt_v = v[:, t + 1] if t + 1 < v.shape[1] else torch.zeros_like(last)
        last = (r[:, t] + gamma * nxt_v * nxt_m - v[:, t] + gamma * lam * nxt_m * last) * m[:, t]
        steps.append(last)
    adv = torch.stack(steps[::-1], dim=1)
    return adv, adv + values


# ppo_clip_loss -------------------------------------------------------------------------------------------------
# Each bug below reads its inputs through _inputs (validated as the contract asks, padding replaced by 0 before
# anything is computed, the constants detached), so it carries its one named mistake and not also the
# NaN-in-padding one (that is ppo_exp_before_mask) or a missing stop-gradient or check.
def _masked(x, mask):
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum()


def _valid_only(mask, *tensors):
    return tuple(torch.where(mask > 0, t, torch.zeros_like(t)) for t in tensors)


def _validate(mask, validate, *checked):
    """The contract's validate=True: a NaN at a valid token, or no valid token, is a ValueError."""
    if validate and (any(torch.isnan(t[mask.bool()]).any() for t in checked) or not mask.bool().any()):
        raise ValueError("NaN at a valid token, or an empty mask")


def _inputs(mask, validate, trained, *constants):
    """(trained, *constants) validated, with padding zeroed and the constants detached."""
    _validate(mask, validate, trained, *constants[:1])
    return _valid_only(mask, trained, *(c.detach() for c in constants))


def ppo_max_not_min(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """max instead of min: an optimistic, not pessimistic, bound."""
    logp_new, logp_old, advantages = _inputs(mask, validate, logp_new, logp_old, advantages)
    ratio = torch.exp(logp_new - logp_old)
    return _masked(-torch.max(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages), mask)


def ppo_no_stop_gradient(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """No stop-gradient on the old log-probs: gradient flows into logp_old."""
    _validate(mask, validate, logp_new, logp_old)
    logp_new, logp_old, advantages = _valid_only(mask, logp_new, logp_old, advantages.detach())
    ratio = torch.exp(logp_new - logp_old)
    return _masked(-torch.min(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages), mask)


def ppo_inverted_ratio(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """Ratio inverted: exp(logp_old - logp_new)."""
    logp_new, logp_old, advantages = _inputs(mask, validate, logp_new, logp_old, advantages)
    ratio = torch.exp(logp_old - logp_new)
    return _masked(-torch.min(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages), mask)


def ppo_no_clipping(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """Plain importance-weighted policy gradient: the clipped term is missing."""
    logp_new, logp_old, advantages = _inputs(mask, validate, logp_new, logp_old, advantages)
    ratio = torch.exp(logp_new - logp_old)
    return _masked(-ratio * advantages, mask)


def ppo_mean_over_padding(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """Mean over padding: (loss * mask).mean() divides by B*T."""
    logp_new, logp_old, advantages = _inputs(mask, validate, logp_new, logp_old, advantages)
    ratio = torch.exp(logp_new - logp_old)
    per_token = -torch.min(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages)
    return (per_token * mask).mean()


def ppo_not_negated(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """Returns the surrogate objective itself, not its negation: gradient descent minimizes reward."""
    logp_new, logp_old, advantages = _inputs(mask, validate, logp_new, logp_old, advantages)
    ratio = torch.exp(logp_new - logp_old)
    return _masked(torch.min(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages), mask)


def ppo_exp_before_mask(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """CleanRL's pg_loss1/pg_loss2 on every position, masked afterwards: the value is right, but a padding
    log-prob of -inf makes exp(-inf - (-inf)) = NaN, and the masked-out NaN still reaches the gradient as 0 * NaN."""
    _validate(mask, validate, logp_new, logp_old)
    ratio = (logp_new - logp_old.detach()).exp()  # (B, T) NaN where both are -inf
    pg_loss1 = -advantages.detach() * ratio
    pg_loss2 = -advantages.detach() * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.maximum(pg_loss1, pg_loss2)[mask.bool()].mean()


def ppo_advantages_not_detached(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """The advantages are not detached: a gradient flows into them (they must be constants)."""
    _validate(mask, validate, logp_new, logp_old)
    new, old, adv = _valid_only(mask, logp_new, logp_old.detach(), advantages)
    ratio = torch.exp(new - old)
    return _masked(-torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv), mask)


def ppo_no_validation(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """Ignores validate: a NaN log-prob at a valid token gives a NaN loss, an empty mask 0/0, instead of an error."""
    new, old, adv = _valid_only(mask, logp_new, logp_old.detach(), advantages.detach())
    ratio = torch.exp(new - old)
    return _masked(-torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv), mask)


# value_loss ----------------------------------------------------------------------------------------------------
# As above: validated, padding zeroed, old_values and returns detached, but for the one named mistake.
def vl_min_not_max(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """min of the two squared errors instead of max."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    vc = old_values + (values - old_values).clamp(-clip_range, clip_range)
    return 0.5 * _masked(torch.min((values - returns) ** 2, (vc - returns) ** 2), mask)


def vl_missing_half(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Missing the 0.5 factor."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    vc = old_values + (values - old_values).clamp(-clip_range, clip_range)
    return _masked(torch.max((values - returns) ** 2, (vc - returns) ** 2), mask)


def vl_clip_around_returns(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Clips V around the returns instead of around the old values."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    vc = returns + (values - returns).clamp(-clip_range, clip_range)
    return 0.5 * _masked(torch.max((values - returns) ** 2, (vc - returns) ** 2), mask)


def vl_no_clipping(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Unclipped value loss only."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    return 0.5 * _masked((values - returns) ** 2, mask)


def vl_mean_over_padding(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Mean over padding: divides by B*T."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    vc = old_values + (values - old_values).clamp(-clip_range, clip_range)
    return 0.5 * (torch.max((values - returns) ** 2, (vc - returns) ** 2) * mask).mean()


def vl_clamp_values_absolute(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Clamps V itself to [-c, c] instead of to [V_old - c, V_old + c]."""
    values, returns, old_values = _inputs(mask, validate, values, returns, old_values)
    vc = values.clamp(-clip_range, clip_range)
    return 0.5 * _masked(torch.max((values - returns) ** 2, (vc - returns) ** 2), mask)


def vl_no_stop_gradient(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """old_values and returns are not detached: the loss would also train the targets."""
    _validate(mask, validate, values, returns)
    values, old_values, returns = _valid_only(mask, values, old_values, returns)
    vc = old_values + torch.clamp(values - old_values, -clip_range, clip_range)
    return 0.5 * _masked(torch.max((values - returns) ** 2, (vc - returns) ** 2), mask)


def vl_product_with_mask(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Masks by multiplying the per-token loss: right on finite padding, NaN once padding holds inf or NaN."""
    _validate(mask, validate, values, returns)
    old, ret = old_values.detach(), returns.detach()
    vc = old + torch.clamp(values - old, -clip_range, clip_range)
    return 0.5 * (torch.max((values - ret) ** 2, (vc - ret) ** 2) * mask).sum() / mask.sum()


def vl_no_validation(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """Ignores validate: a NaN value at a valid token gives a NaN loss, an empty mask 0/0, instead of an error."""
    values, old_values, returns = _valid_only(mask, values, old_values.detach(), returns.detach())
    vc = old_values + torch.clamp(values - old_values, -clip_range, clip_range)
    return 0.5 * _masked(torch.max((values - returns) ** 2, (vc - returns) ** 2), mask)


BUGS = {
    "masked_mean": [mm_ignores_mask, mm_divides_by_numel, mm_mean_of_row_means, mm_no_division, mm_inverted_mask,
                    mm_product_with_mask, mm_view_flatten, mm_rejects_bool_mask],
    "kl_penalized_rewards": [kl_score_at_last_column, kl_sign_flipped, kl_padding_not_zeroed, kl_score_at_first_token,
                             kl_score_every_token, kl_last_index_off_by_one, kl_not_detached],
    "compute_gae_tokens": [gae_bootstraps_padding, gae_returns_without_values, gae_invalid_not_zeroed,
                           gae_delta_swapped, gae_lambda_without_gamma, gae_forward_recursion, gae_masks_by_product,
                           gae_not_detached],
    "ppo_clip_loss": [ppo_max_not_min, ppo_no_stop_gradient, ppo_inverted_ratio, ppo_no_clipping,
                      ppo_mean_over_padding, ppo_not_negated, ppo_exp_before_mask, ppo_advantages_not_detached,
                      ppo_no_validation],
    "value_loss": [vl_min_not_max, vl_missing_half, vl_clip_around_returns, vl_no_clipping, vl_mean_over_padding,
                   vl_clamp_values_absolute, vl_no_stop_gradient, vl_product_with_mask, vl_no_validation],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_masked_mean_boolean_index(x, mask):
    """Boolean indexing: mean of the selected elements."""
    return x[mask.bool()].mean()


def alt_kl_rewards_row_loop(score, logp, ref_logp, mask, kl_coef):
    """Row-by-row loop, score placed at index (row length - 1) for right-padded rows."""
    rewards = torch.zeros_like(logp)
    for b in range(logp.shape[0]):
        n = int(mask[b].sum())
        rewards[b, :n] = -kl_coef * (logp[b, :n] - ref_logp[b, :n])
        rewards[b, n - 1] += score[b]
    return rewards.detach()


def alt_gae_row_loop(rewards, values, mask, gamma=1.0, lam=0.95):
    """Per-row Python loop over the valid prefix, CleanRL style."""
    adv = torch.zeros_like(values)
    for b in range(values.shape[0]):
        n, last = int(mask[b].sum()), 0.0
        for t in reversed(range(n)):
            next_value = values[b, t + 1] if t + 1 < n else 0.0
            delta = rewards[b, t] + gamma * next_value - values[b, t]
            last = delta + gamma * lam * last
            adv[b, t] = last
    adv = adv.detach()
    return adv, adv + values.detach()


def alt_ppo_maximum_of_negatives(logp_new, logp_old, advantages, mask, clip_eps=0.2, validate=True):
    """max(-rho A, -clip(rho) A) (CleanRL's pg_loss1/pg_loss2) on the valid tokens only (boolean indexing first),
    the checks written out with assert-style raises."""
    valid = mask.bool()
    if validate and (not valid.any() or logp_new[valid].isnan().any() or logp_old[valid].isnan().any()):
        raise RuntimeError("bad input: NaN log-prob at a valid token, or no valid token")
    ratio = (logp_new[valid] - logp_old.detach()[valid]).exp()  # (n_valid,)
    adv = advantages.detach()[valid]
    pg_loss1 = -adv * ratio
    pg_loss2 = -adv * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.maximum(pg_loss1, pg_loss2).mean()


def alt_masked_mean_masked_fill(x, mask):
    """masked_fill zeroes the padding (no product, so no 0 * inf), then a sum over the count."""
    return x.masked_fill(mask == 0, 0.0).sum() / mask.sum()


def alt_value_loss_clamp_min_max(values, old_values, returns, mask, clip_range=0.2, validate=True):
    """torch.clamp with tensor bounds on the valid tokens only (boolean indexing first), mean over them."""
    valid = mask.bool()
    v, old, ret = values[valid], old_values.detach()[valid], returns.detach()[valid]  # (n_valid,)
    if validate and (v.numel() == 0 or v.isnan().any() or ret.isnan().any()):
        raise ValueError("NaN at a valid token, or no valid token")
    clipped = torch.clamp(v, old - clip_range, old + clip_range)
    return 0.5 * torch.maximum((v - ret) ** 2, (clipped - ret) ** 2).mean()


ALTERNATIVES = {
    "masked_mean": [alt_masked_mean_boolean_index, alt_masked_mean_masked_fill],
    "kl_penalized_rewards": [alt_kl_rewards_row_loop],
    "compute_gae_tokens": [alt_gae_row_loop],
    "ppo_clip_loss": [alt_ppo_maximum_of_negatives],
    "value_loss": [alt_value_loss_clamp_min_max],
}

"""GRPO / DAPO / Dr. GRPO pieces for lab05_grpo, plus the GSPO sequence-level ratio (W20 demo, not graded).

Layout: ``rewards`` is a flat [N*G] tensor of N consecutive groups of G completions of one prompt each;
per-token tensors are [B, T] with B = N*G rows over completion tokens; ``mask`` is 1 on valid completion
tokens (first completion token up to and including eos), 0 on padding and on masked (e.g. truncated) rows.
"""

from __future__ import annotations

import math

import torch


def group_advantages(rewards: torch.Tensor, group_size: int, scale: str = "group", eps: float = 1e-4) -> torch.Tensor:
    """Group-relative advantages: reward minus its group's mean, optionally divided by a std.

    GRPO (Shao et al. 2024, DeepSeekMath, arXiv 2402.03300), Sec. 4.1.2 outcome supervision:
    A_i = (r_i - mean(r)) / std(r) over the G outputs of one prompt. Dr. GRPO (Liu et al. 2025,
    arXiv 2503.20783) drops the std division (``scale="none"``); ``"batch"`` divides by the std of the whole
    batch while still centring per group (TRL's ``scale_rewards="batch"``). Stds use Bessel's correction and
    ``eps`` is added to the std, exactly as TRL 1.16's GRPOTrainer.

    Args:
        rewards: [N*G] float rewards, groups consecutive.
        group_size: G >= 2.
        scale: "group" | "batch" | "none".
        eps: added to the std before dividing (>= 0).

    Returns:
        [N*G] advantages, detached; a group whose rewards are all equal gets exactly 0 (the zero-advantage case),
        whatever ``eps``: its centred rewards are rounding noise (a float32 mean of six 0.3s is not 0.3), not signal.
    """
    if rewards.ndim != 1 or group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"rewards must be a flat [N*G] tensor with G = group_size >= 2 dividing its length; "
                         f"got shape {tuple(rewards.shape)} and group_size={group_size}")
    if not torch.isfinite(rewards).all():
        raise ValueError("rewards contain NaN or inf: check the reward function")
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0 (it is added to the std), got {eps}")
    grouped = rewards.detach().view(-1, group_size)  # (N, G)
    tied = (grouped == grouped[:, :1]).all(dim=1).repeat_interleave(group_size)  # (N*G,) all G rewards equal
    centred = (grouped - grouped.mean(dim=1, keepdim=True)).view(-1)  # (N*G,)
    std_by_scale = {  # the divisor for each scale mode (Bessel-corrected stds)
        "group": lambda: grouped.std(dim=1, unbiased=True).repeat_interleave(group_size) + eps,  # (N*G,)
        "batch": lambda: rewards.detach().std(unbiased=True) + eps,  # scalar, broadcast
        "none": lambda: torch.ones((), dtype=rewards.dtype),
    }
    if scale not in std_by_scale:
        raise ValueError(f"scale must be one of {sorted(std_by_scale)}, got {scale!r}")
    return torch.where(tied, torch.zeros_like(centred), centred / std_by_scale[scale]())  # a tie: 0, never 0/0


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The k3 estimator of KL(pi || pi_ref) per token: exp(ref - logp) - (ref - logp) - 1.

    Schulman 2020, "Approximating KL Divergence": with r = pi_ref / pi and tokens sampled from pi,
    k3 = (r - 1) - log r is unbiased for KL(pi || pi_ref), has low variance and is always >= 0.
    It is the KL term of GRPO (arXiv 2402.03300), Eq. 4.

    Args:
        logp: [B, T] (any shape) log pi of the sampled tokens.
        ref_logp: same shape, log pi_ref of the same tokens.
        mask: optional, same shape, 1 on the positions to score. The others are set to 0 *before* the exp (select
            before exp), so they give exactly 0 and a zero gradient even when their log-prob is -inf (padding).

    Returns:
        Same shape as ``logp``; without ``mask`` every position is computed (the caller masks).
    """
    if logp.shape != ref_logp.shape or (mask is not None and mask.shape != logp.shape):
        raise ValueError(f"logp {tuple(logp.shape)}, ref_logp {tuple(ref_logp.shape)} and the mask must have the "
                         "same shape")
    if mask is not None:
        valid = mask.bool()
        logp = torch.where(valid, logp, torch.zeros_like(logp))
        ref_logp = torch.where(valid, ref_logp, torch.zeros_like(ref_logp))
    if torch.isnan(logp).any() or torch.isnan(ref_logp).any():
        raise ValueError("log-probs contain NaN: check the policy and reference forward passes")
    log_r = ref_logp - logp  # log(pi_ref / pi)
    return torch.exp(log_r) - log_r - 1


def grpo_loss(
    logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
    eps_low: float = 0.2, eps_high: float = 0.2, beta: float = 0.0, ref_logp: torch.Tensor | None = None,
    aggregation: str = "token", importance_level: str = "token",
) -> torch.Tensor:
    """GRPO clipped surrogate with optional k3 KL, aggregated per token (DAPO) or per sequence (GRPO).

    Per token: -min(rho A, clip(rho, 1 - eps_low, 1 + eps_high) A) + beta * k3, rho = exp(logp_new - logp_old).
    GRPO (arXiv 2402.03300), Eq. 3 with the k3 KL of Eq. 4; clip-higher (eps_high > eps_low) and the token-level
    aggregation are DAPO's (Yu et al. 2025, arXiv 2503.14476, Eq. 8). ``importance_level="sequence"`` replaces
    every token's rho by its row's GSPO ratio exp(masked mean of logp_new - logp_old) (Zheng et al. 2025,
    arXiv 2507.18071, Eq. 7); the k3 KL always uses the real per-token ``logp_new``.
    ``logp_old`` and ``advantages`` are constants.

    Args:
        logp_new: [B, T] log-probs under the current policy (carries the gradient).
        logp_old: [B, T] log-probs under the sampling policy.
        advantages: [B] one advantage per completion, broadcast over its tokens, or [B, T] one per token.
        mask: [B, T] 1 on valid completion tokens.
        eps_low, eps_high: clip range [1 - eps_low, 1 + eps_high].
        beta: KL coefficient >= 0; ref_logp [B, T] is required when beta > 0.
        aggregation: "token" = sum over all valid tokens / number of valid tokens (DAPO; TRL "bnpo", and
            TRL "dapo" on a single batch); "sequence" = mean over rows of each row's masked mean (GRPO; TRL "grpo").
        importance_level: "token" (GRPO) or "sequence" (GSPO; TRL ``importance_sampling_level``).

    Returns:
        Scalar tensor; 0 when no token is valid (denominators clamped at 1, as TRL).
    """
    if logp_new.ndim != 2 or not (logp_new.shape == logp_old.shape == mask.shape) \
            or advantages.shape not in (logp_new.shape[:1], logp_new.shape):
        raise ValueError(f"need logp_new, logp_old, mask [B, T] and advantages [B] or [B, T]; got "
                         f"{tuple(logp_new.shape)}, {tuple(logp_old.shape)}, {tuple(mask.shape)}, "
                         f"{tuple(advantages.shape)}")
    valid = mask.bool()
    if torch.isnan(logp_new[valid]).any() or torch.isnan(logp_old[valid]).any() or torch.isnan(advantages).any():
        raise ValueError("logp_new, logp_old or advantages contain NaN: check the forward pass and group_advantages")
    if eps_low < 0 or eps_high < 0 or beta < 0:
        raise ValueError(f"eps_low, eps_high and beta must be >= 0; got {eps_low}, {eps_high}, {beta}")
    if beta > 0 and (ref_logp is None or ref_logp.shape != logp_new.shape):
        raise ValueError("beta > 0 needs ref_logp with the same [B, T] shape as logp_new")
    m = mask.to(logp_new.dtype)
    log_ratio = torch.where(valid, logp_new - logp_old.detach(), torch.zeros_like(logp_new))  # (B, T)
    if importance_level == "sequence":  # one length-normalised log-ratio per row, shared by its tokens
        log_ratio = (log_ratio.sum(dim=1, keepdim=True) / m.sum(dim=1, keepdim=True).clamp(min=1.0)).expand_as(m)
    elif importance_level != "token":
        raise ValueError(f"importance_level must be 'token' or 'sequence', got {importance_level!r}")
    ratio = torch.exp(log_ratio)  # (B, T)
    adv = advantages.detach() if advantages.ndim == 2 else advantages.detach().unsqueeze(1)  # (B, T) or (B, 1)
    clipped_ratio = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    per_token = -torch.min(ratio * adv, clipped_ratio * adv)  # (B, T)
    if beta > 0:  # the k3 of Eq. 4 on valid tokens only: padding (even a -inf log-prob) never reaches the exp
        per_token = per_token + beta * kl_k3(logp_new, ref_logp.detach(), mask)
    masked = torch.where(m > 0, per_token, torch.zeros_like(per_token))  # padding never leaks into the value, even as NaN
    aggregations = {
        "token": lambda: masked.sum() / m.sum().clamp(min=1.0),
        "sequence": lambda: (masked.sum(dim=1) / m.sum(dim=1).clamp(min=1.0)).mean(),
    }
    if aggregation not in aggregations:
        raise ValueError(f"aggregation must be one of {sorted(aggregations)}, got {aggregation!r}")
    return aggregations[aggregation]()


def diagnose_zero_loss(stats: dict) -> str:
    """Name the reason a GRPO step logged a zero (or useless) loss, from the step's logged stats.

    Decision order (first match wins), most fundamental cause first:
      1. ``"no_valid_tokens"``: frac_valid_tokens == 0. Nothing is scored (e.g. every completion truncated and
         masked, or a mask bug); the loss is 0 by the clamped denominator and nothing else can be judged.
      2. ``"zero_advantage"``: frac_zero_std_groups == 1. Every group's rewards are equal (all prompts too easy
         or too hard), so every advantage is 0 and the policy gradient vanishes whatever the ratio.
      3. ``"all_clipped"``: clip_frac == 1. Every token's ratio left the clip range on the side where min()
         keeps the constant clipped term, so no token passes a gradient (possible only off-policy:
         num_iterations > 1 or stale rollouts). The logged loss is then the clipped rho * A, not 0: a useless
         step, named here because its grad_norm is 0.
      4. ``"expected"``: grad_norm > 0. The on-policy first step: ratio == 1 in value, beta * k3 == 0 at
         pi == pi_ref, and centred advantages make the sequence-mean loss -(1/G) sum A_i = 0, yet the gradient
         is not zero (huggingface/trl issues #2703, #3452).
    A zero gradient that none of 1-3 explains raises ValueError (look for a detached loss or a frozen model).
    ``beta`` and ``num_iterations`` are required and checked but do not change the decision: they say why a case 4
    loss is 0 (beta = 0, or pi == pi_ref on the first step) and whether case 3 is plausible (num_iterations > 1).

    Args:
        stats: dict with keys loss, grad_norm, frac_zero_std_groups, frac_valid_tokens, clip_frac, beta,
            num_iterations (floats; fractions in [0, 1]).

    Returns:
        One of "no_valid_tokens", "zero_advantage", "all_clipped", "expected".
    """
    required = ("loss", "grad_norm", "frac_zero_std_groups", "frac_valid_tokens", "clip_frac", "beta",
                "num_iterations")
    missing = [key for key in required if key not in stats]
    if missing:
        raise ValueError(f"stats is missing {missing}; log all of {list(required)} each step")
    values = {key: float(stats[key]) for key in required}
    if any(math.isnan(v) for v in values.values()):
        raise ValueError(f"stats contain NaN: {values}")
    tol = 1e-9
    if values["frac_valid_tokens"] <= tol:
        return "no_valid_tokens"
    if values["frac_zero_std_groups"] >= 1 - tol:
        return "zero_advantage"
    if values["clip_frac"] >= 1 - tol:
        return "all_clipped"
    if values["grad_norm"] > tol:
        return "expected"
    raise ValueError(f"grad_norm is 0 but tokens are valid, advantages non-zero and not all clipped: {values}; "
                     "check that the loss is not detached and that the parameters require grad")


def gspo_sequence_ratio(logp_new: torch.Tensor, logp_old: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GSPO's sequence-level importance ratio s_i = (pi(y_i|x) / pi_old(y_i|x))^(1/|y_i|) (not graded; W20 demo).

    GSPO (Zheng et al. 2025, arXiv 2507.18071), the s_i(theta) of its objective: the length-normalized sequence
    ratio, clipped per sequence instead of per token. Equals TRL's ``importance_sampling_level="sequence"`` weight.

    Args:
        logp_new: [B, T] log-probs under the current policy; logp_old: [B, T] under the sampling policy.
        mask: [B, T] 1 on valid completion tokens.

    Returns:
        [B] exp(masked mean over tokens of (logp_new - logp_old)); logp_old is a constant.
    """
    if not (logp_new.shape == logp_old.shape == mask.shape) or logp_new.ndim != 2:
        raise ValueError("logp_new, logp_old and mask must share one [B, T] shape")
    m = mask.to(logp_new.dtype)
    log_ratio = (logp_new - logp_old.detach()) * m  # (B, T)
    return torch.exp(log_ratio.sum(dim=1) / m.sum(dim=1).clamp(min=1.0))  # (B,)

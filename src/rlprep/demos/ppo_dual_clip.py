"""G09's production additions to the PPO-Clip loss: dual-clip and a clamp on the log-ratio before ``exp``.

The graded contract is ``rlprep.algos.ppo.ppo_clip_loss`` (PPO, arXiv 1707.06347, Eq. 7). Trainers at scale add two
guards, shown here beside it so notebook 03 can compare them on the same tensors:

- **dual-clip** (Ye et al. 2020, arXiv 1912.09729): for A < 0 the min keeps the unclipped ρ·A once ρ > 1 + ε, which
  is unbounded below and whose gradient grows with ρ; the floor ``max(·, c·A)`` with c > 1 caps it. It acts only where
  A < 0 and ρ > c; there the loss is the constant −c·A and the token's gradient is 0.
- **log-ratio clamp**: ``exp(logp_new − logp_old)`` overflows float32 (and bf16) once the difference passes ~88 nats,
  e.g. a token whose old log-prob came from a different engine; clamping the log-ratio to ±``max_log_ratio`` before
  ``exp`` (verl uses ±20) keeps the loss finite. The clamp also cuts the gradient of the clamped tokens.
"""

from __future__ import annotations

import torch


def dual_clip_ppo_loss(logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
                       clip_eps: float = 0.2, dual_clip: float | None = 3.0,
                       max_log_ratio: float | None = 20.0) -> torch.Tensor:
    """PPO-Clip with dual-clip and a log-ratio clamp, negated, as a token-level masked mean.

    Per token: ``s = min(ρA, clip(ρ, 1−ε, 1+ε)A)``; where ``A < 0``: ``s = max(s, c·A)`` (arXiv 1912.09729);
    loss ``= −Σ m·s / Σ m``, with ``ρ = exp(clamp(logp_new − logp_old, ±max_log_ratio))``.

    Args:
        logp_new: [B, T] log-probs under the current policy (carries the gradient).
        logp_old: [B, T] log-probs under the sampling policy (treated as data).
        advantages: [B, T] advantages (treated as data).
        mask: [B, T] 1 on valid completion tokens; padding may hold anything, -inf or NaN included: it is
            selected out before ``exp``, so it reaches neither the loss nor the gradient.
        clip_eps: ε of the clip range, > 0.
        dual_clip: c > 1 of the dual-clip floor; None turns it off (plain PPO-Clip).
        max_log_ratio: clamp of the log-ratio before ``exp``; None turns it off.

    Returns:
        Scalar loss tensor.
    """
    if not (logp_new.shape == logp_old.shape == advantages.shape == mask.shape) or logp_new.ndim != 2:
        raise ValueError("logp_new, logp_old, advantages and mask must share one [B, T] shape")
    if clip_eps <= 0 or (dual_clip is not None and dual_clip <= 1) or (max_log_ratio is not None and max_log_ratio <= 0):
        raise ValueError(f"need clip_eps > 0, dual_clip > 1 (or None), max_log_ratio > 0 (or None); got "
                         f"{clip_eps}, {dual_clip}, {max_log_ratio}")
    valid = mask.bool()
    if not valid.any():
        raise ValueError("mask has no valid token: check completion_mask")
    zeros = torch.zeros_like(logp_new)
    # select before exp: a where after exp keeps the value clean but 0 * exp(NaN) = NaN reaches the gradient
    log_ratio = torch.where(valid, logp_new - logp_old.detach(), zeros)  # (B, T), 0 on padding
    if max_log_ratio is not None:
        log_ratio = log_ratio.clamp(-max_log_ratio, max_log_ratio)
    ratio = torch.exp(log_ratio)  # (B, T)
    adv = torch.where(valid, advantages.detach(), zeros)  # (B, T), 0 on padding
    surrogate = torch.min(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)  # (B, T), 0 on padding
    if dual_clip is not None:
        surrogate = torch.where(adv < 0, torch.max(surrogate, dual_clip * adv), surrogate)
    return -surrogate.sum() / valid.sum()

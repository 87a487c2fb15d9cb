"""One GRPO update from log-probs, shared by every GRPO-style loop: the loss -> :func:`optimizer_step` ->
:func:`update_stats`.

:class:`rlprep.trainers.grpo.GRPOTrainer` calls :func:`grpo_update` on completions of arithmetic prompts; the
multi-turn agentic trainer (``rlprep.agentic.train``) on the action tokens of transcripts, with per-token
advantages ``[B, T]``; the colour-QA demo (``rlprep.multimodal.colour_qa``) on one-token answers ``[N*G, 1]``.
The loss is GRPO's clipped surrogate (Shao et al. 2024, arXiv 2402.03300, Eq. 3), ``rlprep.algos.grpo.grpo_loss``,
or any variant of the atlas (``rlprep.algos.pg_losses.PG_LOSSES``, which all take the same keywords); the caller
passes its keywords and the clip it applies (``pg_clip``), which ``stats/clipfrac_one_sided`` counts.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from rlprep.algos.grpo import grpo_loss
from rlprep.algos.pg_losses import ClipRange


def optimizer_step(policy, optimizer, loss: torch.Tensor, max_grad_norm: float) -> float:
    """Backward, clip the gradient to ``max_grad_norm``, step when the norm is finite; the pre-clip norm.

    A loss without a graph (no valid token, or an injected function that detached it) takes no step.
    """
    optimizer.zero_grad(set_to_none=True)
    if loss.requires_grad:
        loss.backward()
    grad_norm = float(torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm))
    if loss.requires_grad and math.isfinite(grad_norm):
        optimizer.step()
    return grad_norm


@torch.no_grad()
def update_stats(logp: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *,
                 clip: ClipRange | None, entropy: torch.Tensor | None = None) -> dict[str, float]:
    """Statistics of one update, means over the valid tokens of ``mask`` [B, T] (``logp``, ``logp_old`` [B, T]).

    ``stats/clipfrac_one_sided``: share of tokens whose gradient the loss's own ``clip`` stops: its ratio (per token,
    or the row's, at ``clip.level``) below 1 - eps_low with A < 0 or above 1 + eps_high with A > 0; 0 when the loss
    has no such clip (``clip=None``: REINFORCE, CISPO, SAPO). ``stats/approx_kl``: mean of 0.5 (logp - logp_old)^2
    (Schulman 2020's k2) to the sampling policy; ``stats/entropy`` when ``entropy`` [B, T] is given.
    ``advantages`` is [B] or [B, T].
    """
    m = mask.to(logp.dtype)
    denom = m.sum().clamp(min=1)
    out = {"stats/frac_valid_tokens": float(m.sum() / m.numel()),
           "stats/clipfrac_one_sided": float((clipped_tokens(logp, logp_old, advantages, m, clip) * m).sum() / denom),
           "stats/approx_kl": float((0.5 * (logp - logp_old) ** 2 * m).sum() / denom)}
    if entropy is not None:
        out["stats/entropy"] = float((entropy * m).sum() / denom)
    return out


def clipped_tokens(logp: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, m: torch.Tensor,
                   clip: ClipRange | None) -> torch.Tensor:
    """``[B, T]`` (or ``[B, 1]``, a row's verdict for its tokens) 1.0 where ``clip`` stops the gradient, else 0."""
    if clip is None:
        return torch.zeros_like(m)
    log_ratio = torch.where(m > 0, logp - logp_old, torch.zeros_like(logp))  # (B, T)
    levels = {"token": lambda: log_ratio,
              "sequence": lambda: log_ratio.sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1),  # (B, 1)
              "sequence_sum": lambda: log_ratio.sum(-1, keepdim=True)}  # (B, 1)
    ratio = torch.exp(levels[clip.level]())
    adv = advantages if advantages.ndim == 2 else advantages.unsqueeze(-1)  # (B, T) or (B, 1)
    stopped = ((ratio < 1 - clip.eps_low) & (adv < 0)) | ((ratio > 1 + clip.eps_high) & (adv > 0))
    return stopped.to(m.dtype)


def grpo_update(policy, optimizer, logp: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor,
                mask: torch.Tensor, *, clip: ClipRange | None, loss_fn: Callable = grpo_loss, max_grad_norm: float = 1.0,
                entropy: torch.Tensor | None = None, **loss_kwargs) -> dict[str, float]:
    """One gradient step of ``policy`` on ``loss_fn(logp, logp_old, advantages, mask, **loss_kwargs)``; its metrics.

    Args:
        logp: [B, T] log-probs of the sampled tokens under ``policy`` (with grad).
        logp_old: [B, T] under the sampling policy (``logp.detach()`` on-policy: ratio 1 in value).
        advantages: [B] per completion or [B, T] per token.
        mask: [B, T] 1 on the tokens the loss scores.
        clip: the clip ``loss_fn`` applies with these keywords (its range and ratio level; None: no clip stops a
            gradient), for ``stats/clipfrac_one_sided``.
        loss_fn: ``rlprep.algos.grpo.grpo_loss`` (a lab passes the learner's), or a ``PG_LOSSES`` entry.
        entropy: [B, T] per-token entropy, for ``stats/entropy``.
        loss_kwargs: the loss's keywords (``eps_low``, ``beta``, ``ref_logp``, ``aggregation``, ...).

    Returns:
        ``loss/policy``, ``stats/grad_norm`` (before clipping) and :func:`update_stats`.
    """
    loss = loss_fn(logp, logp_old, advantages, mask, **loss_kwargs)
    out = {"loss/policy": float(loss.detach()),
           "stats/grad_norm": optimizer_step(policy, optimizer, loss, max_grad_norm)}
    out.update(update_stats(logp.detach(), logp_old.detach(), advantages.detach(), mask, clip=clip,
                            entropy=None if entropy is None else entropy.detach()))
    return out

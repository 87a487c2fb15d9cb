"""One GRPO update from log-probs, shared by every GRPO-style loop: ``grpo_loss`` -> :func:`optimizer_step` ->
:func:`update_stats`.

:class:`rlprep.trainers.grpo.GRPOTrainer` calls :func:`grpo_update` on completions of arithmetic prompts; the
multi-turn agentic trainer (``rlprep.agentic.train``) on the action tokens of transcripts, with per-token
advantages ``[B, T]``; the colour-QA demo (``rlprep.multimodal.colour_qa``) on one-token answers ``[N*G, 1]``.
The loss is GRPO's clipped surrogate (Shao et al. 2024, arXiv 2402.03300, Eq. 3) from ``rlprep.algos.grpo``, or
any variant of the atlas chosen by name (:func:`registry_loss`, :func:`registry_advantages`: ``PG_LOSSES`` and
``PG_ADVANTAGES`` of ``rlprep.algos.pg_losses``).
"""

from __future__ import annotations

import inspect
import math
from typing import Callable

import torch

from rlprep.algos.pg_losses import ClipRange


def registry_advantages(name: str) -> Callable:
    """``PG_ADVANTAGES[name]`` called as the trainer calls ``group_advantages``: ``(rewards [N*G], G, scale=...)``.

    The variant's own baseline applies (RLOO: leave-one-out, Dr. GRPO: group mean, ...); ``scale`` is not used.
    """
    from rlprep.algos.pg_losses import PG_ADVANTAGES

    baseline = PG_ADVANTAGES[name]
    return lambda rewards, group_size, scale=None: baseline(rewards, group_size)


def registry_loss(name: str, max_length: int | None = None) -> Callable:
    """``PG_LOSSES[name]`` called as :func:`grpo_update` calls ``grpo_loss``; a scalar [B, T] -> () loss.

    The variant keeps its paper's clip range, aggregation and ratio level (``eps_low``, ``eps_high``,
    ``aggregation`` and ``importance_level`` of the call are not used); it gets ``beta`` and ``ref_logp`` when
    ``beta > 0`` (a variant without a KL term refuses that) and ``max_length`` where it takes one (Dr. GRPO's
    constant, TRL's ``max_completion_length``).
    """
    from rlprep.algos.pg_losses import PG_LOSSES

    if name not in PG_LOSSES:
        raise ValueError(f"unknown policy-gradient loss {name!r}; choose one of {sorted(PG_LOSSES)}")
    loss_fn = PG_LOSSES[name]
    accepted = inspect.signature(loss_fn).parameters
    fixed = {"max_length": max_length} if "max_length" in accepted and max_length is not None else {}

    def loss(logp_new, logp_old, advantages, mask, beta: float = 0.0, ref_logp=None, **unused) -> torch.Tensor:
        if beta > 0 and "beta" not in accepted:
            raise ValueError(f"the {name} loss has no KL term; set beta=0 (its KL, if any, belongs in the reward)")
        kl = {"beta": beta, "ref_logp": ref_logp} if beta > 0 else {}
        return loss_fn(logp_new, logp_old, advantages, mask, **fixed, **kl)

    loss.__name__ = f"registry_loss_{name}"
    return loss


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
def update_stats(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *,
                 clip: ClipRange | None, entropy: torch.Tensor | None = None) -> dict[str, float]:
    """Statistics of one update, means over the valid tokens of ``mask`` [B, T] (``logp``, ``old_logp`` [B, T]).

    ``stats/clipfrac_one_sided``: share of tokens whose gradient the loss's own ``clip`` stops: its ratio (per token,
    or the row's, at ``clip.level``) below 1 - eps_low with A < 0 or above 1 + eps_high with A > 0; 0 when the loss
    has no such clip (``clip=None``: REINFORCE, CISPO, SAPO). ``stats/approx_kl``: mean of 0.5 (logp - old_logp)^2
    (Schulman 2020's k2) to the sampling policy; ``stats/entropy`` when ``entropy`` [B, T] is given.
    ``advantages`` is [B] or [B, T].
    """
    m = mask.to(logp.dtype)
    denom = m.sum().clamp(min=1)
    out = {"stats/frac_valid_tokens": float(m.sum() / m.numel()),
           "stats/clipfrac_one_sided": float((clipped_tokens(logp, old_logp, advantages, m, clip) * m).sum() / denom),
           "stats/approx_kl": float((0.5 * (logp - old_logp) ** 2 * m).sum() / denom)}
    if entropy is not None:
        out["stats/entropy"] = float((entropy * m).sum() / denom)
    return out


def clipped_tokens(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, m: torch.Tensor,
                   clip: ClipRange | None) -> torch.Tensor:
    """``[B, T]`` (or ``[B, 1]``, a row's verdict for its tokens) 1.0 where ``clip`` stops the gradient, else 0."""
    if clip is None:
        return torch.zeros_like(m)
    log_ratio = torch.where(m > 0, logp - old_logp, torch.zeros_like(logp))  # (B, T)
    levels = {"token": lambda: log_ratio,
              "sequence": lambda: log_ratio.sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1),  # (B, 1)
              "sequence_sum": lambda: log_ratio.sum(-1, keepdim=True)}  # (B, 1)
    ratio = torch.exp(levels[clip.level]())
    adv = advantages if advantages.ndim == 2 else advantages.unsqueeze(-1)  # (B, T) or (B, 1)
    stopped = ((ratio < 1 - clip.eps_low) & (adv < 0)) | ((ratio > 1 + clip.eps_high) & (adv > 0))
    return stopped.to(m.dtype)


def grpo_update(policy, optimizer, logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                mask: torch.Tensor, *, grpo_loss: Callable | None = None, eps_low: float = 0.2,
                eps_high: float = 0.2, beta: float = 0.0, ref_logp: torch.Tensor | None = None,
                aggregation: str = "token", importance_level: str = "token", clip: ClipRange | None,
                max_grad_norm: float = 1.0, entropy: torch.Tensor | None = None) -> dict[str, float]:
    """One gradient step of ``policy`` on ``grpo_loss`` and the step's metrics.

    Args:
        logp: [B, T] log-probs of the sampled tokens under ``policy`` (with grad).
        old_logp: [B, T] under the sampling policy (``logp.detach()`` on-policy: ratio 1 in value).
        advantages: [B] per completion or [B, T] per token.
        mask: [B, T] 1 on the tokens the loss scores.
        grpo_loss: the loss (default: ``rlprep.algos.grpo.grpo_loss``; a lab passes the learner's, which need not
            know ``importance_level`` unless it is ``"sequence"``). The other keywords are its arguments.
        ref_logp: [B, T] under the frozen reference, for ``beta > 0``.
        clip: the clip of the loss that runs, as it runs (its range and ratio level; None: no clip stops a
            gradient), for ``stats/clipfrac_one_sided``.

    Returns:
        ``loss/policy``, ``stats/grad_norm`` (before clipping) and :func:`update_stats`.
    """
    if grpo_loss is None:
        from rlprep.algos.grpo import grpo_loss
    gspo = {"importance_level": importance_level} if importance_level != "token" else {}
    loss = grpo_loss(logp, old_logp, advantages, mask, eps_low=eps_low, eps_high=eps_high, beta=beta,
                     ref_logp=ref_logp if beta > 0 else None, aggregation=aggregation, **gspo)
    out = {"loss/policy": float(loss.detach()),
           "stats/grad_norm": optimizer_step(policy, optimizer, loss, max_grad_norm)}
    out.update(update_stats(logp.detach(), old_logp.detach(), advantages.detach(), mask, clip=clip,
                            entropy=None if entropy is None else entropy.detach()))
    return out

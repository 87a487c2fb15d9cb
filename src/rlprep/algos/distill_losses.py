"""The distillation atlas: forward KL, reverse KL and GKD's generalised JSD, per token and as losses (bank A16-A18).

``DISTILL_LOSSES[name](student_logits, teacher_logits, mask, **hyper)`` is a scalar: the per-token divergence
between the teacher p_T and the student q_S on full-vocabulary logits, averaged over valid positions. The teacher
logits are constants (detached here); which model wrote the completions (teacher samples = off-policy KD, student
samples = on-policy distillation) is the caller's choice, not the loss's.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def _log_probs(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(log q_S, log p_T), both [B, T, V] in at least float32 (float64 stays float64); the teacher detached."""
    if student_logits.shape != teacher_logits.shape or student_logits.ndim != 3:
        raise ValueError(f"student and teacher logits must have the same [B, T, V] shape, got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    dtype = torch.promote_types(student_logits.dtype, torch.float32)
    return (F.log_softmax(student_logits.to(dtype), dim=-1),
            F.log_softmax(teacher_logits.detach().to(dtype), dim=-1))


def forward_kl_per_token(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(p_T || q_S) at each position: sum_v p_T(v) (log p_T(v) - log q_S(v)) (Hinton et al. 2015, arXiv 1503.02531).

    Args:
        student_logits: [B, T, V] logits of the student q_S.
        teacher_logits: [B, T, V] logits of the teacher p_T.
    Returns:
        [B, T], >= 0. Mass-covering: large where the teacher has mass the student lacks.
    """
    log_q, log_p = _log_probs(student_logits, teacher_logits)  # (B, T, V) each
    return (log_p.exp() * (log_p - log_q)).sum(-1)


def reverse_kl_per_token(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(q_S || p_T) at each position: sum_v q_S(v) (log q_S(v) - log p_T(v)) (MiniLLM, arXiv 2306.08543).

    Args:
        student_logits: [B, T, V] logits of the student q_S.
        teacher_logits: [B, T, V] logits of the teacher p_T.
    Returns:
        [B, T], >= 0. Mode-seeking: large where the student puts mass the teacher does not.
    """
    log_q, log_p = _log_probs(student_logits, teacher_logits)  # (B, T, V) each
    return (log_q.exp() * (log_q - log_p)).sum(-1)


def generalized_jsd_per_token(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                              beta: float = 0.5) -> torch.Tensor:
    """GKD's generalised JSD (Agarwal et al. 2023, arXiv 2306.13649) at each position.

    JSD(beta)(p_T || q_S) = beta KL(p_T || M) + (1 - beta) KL(q_S || M), M = beta p_T + (1 - beta) q_S. It
    interpolates between the two KLs; as TRL 1.16's ``GKDTrainer.generalized_jsd_loss``, beta = 0 is taken to mean
    forward KL(p_T || q_S) and beta = 1 reverse KL(q_S || p_T) (the JSD itself vanishes at both ends).

    Args:
        student_logits, teacher_logits: [B, T, V]. beta: in [0, 1].
    Returns:
        [B, T], >= 0.
    """
    if not 0 <= beta <= 1:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if beta == 0:
        return forward_kl_per_token(student_logits, teacher_logits)
    if beta == 1:
        return reverse_kl_per_token(student_logits, teacher_logits)
    log_q, log_p = _log_probs(student_logits, teacher_logits)  # (B, T, V) each
    log_m = torch.logsumexp(torch.stack([log_p + math.log(beta), log_q + math.log(1 - beta)]), dim=0)  # (B, T, V)
    kl_p_m = (log_p.exp() * (log_p - log_m)).sum(-1)  # (B, T)
    kl_q_m = (log_q.exp() * (log_q - log_m)).sum(-1)
    return beta * kl_p_m + (1 - beta) * kl_q_m


def _masked_mean(per_token: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over positions where mask is 1 (0 when none is), as TRL's ``reduction="batchmean"`` with labels."""
    if mask.shape != per_token.shape:
        raise ValueError(f"mask {tuple(mask.shape)} must be [B, T] like the logits' first two dims "
                         f"{tuple(per_token.shape)}")
    m = mask.to(per_token.dtype)
    return (per_token * m).sum() / m.sum().clamp(min=1.0)


def forward_kl_loss(student_logits, teacher_logits, mask, temperature: float = 1.0) -> torch.Tensor:
    """Mean over valid positions of KL(p_T || q_S) at ``temperature`` (word-level KD). Shapes: [B, T, V], mask [B, T]."""
    return _masked_mean(forward_kl_per_token(student_logits / temperature, teacher_logits / temperature), mask)


def reverse_kl_loss(student_logits, teacher_logits, mask, temperature: float = 1.0) -> torch.Tensor:
    """Mean over valid positions of KL(q_S || p_T) at ``temperature``. Shapes: [B, T, V], mask [B, T]."""
    return _masked_mean(reverse_kl_per_token(student_logits / temperature, teacher_logits / temperature), mask)


def generalized_jsd_loss(student_logits, teacher_logits, mask, beta: float = 0.5,
                         temperature: float = 1.0) -> torch.Tensor:
    """Mean over valid positions of GKD's JSD(beta) at ``temperature``; equals TRL 1.16's
    ``GKDTrainer.generalized_jsd_loss`` with labels masked to -100 off ``mask``. Shapes: [B, T, V], mask [B, T]."""
    return _masked_mean(generalized_jsd_per_token(student_logits / temperature, teacher_logits / temperature, beta),
                        mask)


DISTILL_LOSSES = {
    "forward_kl": forward_kl_loss,
    "reverse_kl": reverse_kl_loss,
    "gkd_jsd": generalized_jsd_loss,
}

"""DPO for lab04_dpo: sequence log-probabilities and the sigmoid DPO loss."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def sequence_logprobs(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum over masked positions of log softmax(logits)[label]: log pi(completion | prompt).

    Args:
        logits: [B, T, V] already aligned with ``labels`` (logits[:, t] scores labels[:, t]; shift before calling).
        labels: [B, T] int64 token ids; any value (e.g. -100) is allowed where mask is 0.
        mask: [B, T] 1 on the completion tokens to score, 0 on prompt and padding.

    Returns:
        [B] sum_t mask[b, t] * log p(labels[b, t]), computed in float32 at least.
    """
    if logits.ndim != 3 or labels.shape != logits.shape[:2] or mask.shape != labels.shape:
        raise ValueError(f"need logits [B, T, V], labels [B, T], mask [B, T]; got {tuple(logits.shape)}, "
                         f"{tuple(labels.shape)}, {tuple(mask.shape)} (shift logits[:, :-1] / labels[:, 1:] first)")
    valid = mask.bool()
    safe_labels = torch.where(valid, labels, torch.zeros_like(labels))  # (B, T) -100 -> 0, masked below
    logp = torch.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)  # (B, T, V)
    token_logp = logp.gather(-1, safe_labels.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return torch.where(valid, token_logp, torch.zeros_like(token_logp)).sum(dim=-1)  # (B,)


def dpo_loss(
    policy_chosen_logps: torch.Tensor, policy_rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor, ref_rejected_logps: torch.Tensor, beta: float = 0.1,
) -> torch.Tensor:
    """Mean over pairs of -log sigma(beta * [(pi_c - ref_c) - (pi_r - ref_r)]).

    DPO (Rafailov et al. 2023, arXiv 2305.18290), Eq. 7. All inputs are [B] sequence log-probs (sums over
    completion tokens, see ``sequence_logprobs``); the reference log-probs are constants (stop-gradient).
    At policy = reference the loss is ln 2 and its gradient raises pi_c and lowers pi_r.

    Args:
        policy_chosen_logps, policy_rejected_logps: [B] log pi_theta(y_w | x), log pi_theta(y_l | x).
        ref_chosen_logps, ref_rejected_logps: [B] the same under the frozen reference.
        beta: the KL coefficient, > 0; it scales the implicit reward beta * log(pi / pi_ref) and is the
            sigmoid's inverse temperature.

    Returns:
        Scalar tensor.
    """
    logps = (policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps)
    shapes = [tuple(t.shape) for t in logps]
    if len(set(shapes)) != 1 or len(shapes[0]) != 1:
        raise ValueError(f"all four log-prob tensors must be [B] with the same B; got {shapes}")
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if any(torch.isnan(t).any() for t in (policy_chosen_logps, policy_rejected_logps)):
        raise ValueError("policy log-probs contain NaN: check the forward pass")
    chosen_logratios = policy_chosen_logps - ref_chosen_logps.detach()  # (B,)
    rejected_logratios = policy_rejected_logps - ref_rejected_logps.detach()  # (B,)
    return -F.logsigmoid(beta * (chosen_logratios - rejected_logratios)).mean()

"""GRPO's loss from the course's one copy, rlprep.algos.grpo.grpo_loss (lab 5's reference; GRPO Eq. 3 with the k3 KL
of Eq. 4, DAPO's clip-higher and token aggregation), with token-level importance ratios. O(B T).
"""

from rlprep.algos.grpo import grpo_loss as _grpo_loss


def grpo_loss(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
              aggregation="sequence"):
    """GRPO's clipped surrogate with an optional k3 KL. logp_*: [B, T]; advantages: [B] or [B, T]; mask: [B, T].
    aggregation "sequence" (GRPO) or "token" (DAPO). Returns a scalar tensor."""
    return _grpo_loss(logp_new, logp_old, advantages, mask, eps_low=eps_low, eps_high=eps_high, beta=beta,
                      ref_logp=ref_logp, aggregation=aggregation)

"""PPO-RLHF pieces for lab03_ppo_rlhf. All tensors are [B, T] over completion tokens.

``mask`` is 1 on valid completion tokens: from the first token after the prompt up to and including eos,
0 on right padding (the layout ``rlprep.rollout.generate`` returns as ``completion_mask``).
"""

from __future__ import annotations

import torch


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over the positions where ``mask`` is 1 (all rows pooled: a token-level mean).

    Args:
        x: [B, T] values (per-token losses, KL estimates, ...).
        mask: [B, T] 1 on valid completion tokens, 0 on padding (bool or float).

    Returns:
        Scalar tensor sum(x * mask) / sum(mask). Padding never enters the numerator or the denominator.
    """
    if x.shape != mask.shape:
        raise ValueError(f"x {tuple(x.shape)} and mask {tuple(mask.shape)} must have the same [B, T] shape")
    if torch.isnan(x[mask.bool()]).any():
        raise ValueError("x is NaN at a valid position: check the computation that produced it")
    mask = mask.to(x.dtype)
    n_valid = mask.sum()
    if n_valid == 0:
        raise ValueError("mask has no valid position: every completion token is masked out (check the mask)")
    # torch.where, not x * mask: a NaN/inf in padding must not leak into the mean.
    return torch.where(mask > 0, x, torch.zeros_like(x)).sum() / n_valid


def kl_penalized_rewards(
    score: torch.Tensor, logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor, kl_coef: float
) -> torch.Tensor:
    """Per-token RLHF reward: -kl_coef * (logp - ref_logp) on valid tokens, plus the RM score at the last one.

    InstructGPT (Ouyang et al. 2022, arXiv 2203.02155), Eq. 2: R(x, y) = r_theta(x, y) - beta log(pi_RL / pi_SFT),
    with the KL term spread over tokens as the k1 estimate log pi - log pi_ref (Schulman 2020, "Approximating
    KL Divergence"). Inputs are treated as data: the result is detached.

    Args:
        score: [B] reward-model score of each completion.
        logp: [B, T] log pi(token) under the policy that sampled it.
        ref_logp: [B, T] log pi_ref(token) under the frozen SFT reference.
        mask: [B, T] 1 on valid completion tokens (up to and including eos); every row needs at least one.
        kl_coef: the KL coefficient beta >= 0.

    Returns:
        [B, T] rewards, 0 on invalid positions; score[b] is added at the last valid token of row b.
    """
    if logp.ndim != 2 or logp.shape != ref_logp.shape or logp.shape != mask.shape:
        raise ValueError(f"logp, ref_logp, mask must share one [B, T] shape; got {tuple(logp.shape)}, "
                         f"{tuple(ref_logp.shape)}, {tuple(mask.shape)}")
    if score.shape != logp.shape[:1]:
        raise ValueError(f"score must be [B] = [{logp.shape[0]}]; got {tuple(score.shape)}")
    if kl_coef < 0:
        raise ValueError(f"kl_coef must be >= 0, got {kl_coef}")
    valid = mask.bool()
    if torch.isnan(logp[valid]).any() or torch.isnan(ref_logp[valid]).any() or torch.isnan(score).any():
        raise ValueError("score, logp or ref_logp is NaN on a valid token: check the forward passes")
    if not valid.any(dim=1).all():
        raise ValueError("a row has no valid token, so its score has nowhere to go: check completion_mask")
    kl = (logp - ref_logp).detach()  # (B, T), k1 estimate per token
    rewards = torch.where(valid, -kl_coef * kl, torch.zeros_like(kl))
    T = mask.shape[1]
    last = T - 1 - valid.flip(dims=[1]).to(torch.int64).argmax(dim=1)  # (B,) index of the last valid token
    rewards[torch.arange(mask.shape[0]), last] += score.detach().to(rewards.dtype)
    return rewards


def compute_gae_tokens(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0, lam: float = 0.95
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation along each row of completion tokens.

    GAE (Schulman et al., ICLR 2016, arXiv 1506.02438), Eq. 16: A_t = sum_l (gamma lam)^l delta_{t+l}, with
    delta_t = r_t + gamma V_{t+1} - V_t. The episode ends at the last valid token: nothing is bootstrapped
    beyond it, and values at invalid positions are never read. Results are detached (they are targets).

    Args:
        rewards: [B, T] per-token rewards (e.g. from ``kl_penalized_rewards``).
        values: [B, T] value-head estimates V(s_t).
        mask: [B, T] 1 on valid completion tokens, 0 on right padding.
        gamma: discount; lam: GAE lambda (lam = 1: Monte-Carlo return minus V; lam = 0: one-step TD residual).

    Returns:
        (advantages, returns), both [B, T]; advantages are 0 on invalid positions; returns = advantages + values.
    """
    if rewards.ndim != 2 or rewards.shape != values.shape or rewards.shape != mask.shape:
        raise ValueError(f"rewards, values, mask must share one [B, T] shape; got {tuple(rewards.shape)}, "
                         f"{tuple(values.shape)}, {tuple(mask.shape)}")
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError(f"gamma and lam must lie in [0, 1]; got gamma={gamma}, lam={lam}")
    if torch.isnan(rewards[mask.bool()]).any() or torch.isnan(values[mask.bool()]).any():
        raise ValueError("rewards or values are NaN on a valid token: check the reward and value heads")
    m = mask.to(values.dtype).detach()
    r = torch.where(m > 0, rewards.detach(), torch.zeros_like(m))  # (B, T) invalid positions contribute nothing
    v = torch.where(m > 0, values.detach(), torch.zeros_like(m))
    advantages = torch.zeros_like(v)
    last_gae = torch.zeros_like(v[:, 0])  # (B,)
    T = v.shape[1]
    for t in reversed(range(T)):
        next_valid = m[:, t + 1] if t + 1 < T else torch.zeros_like(last_gae)  # 0 past the last valid token
        next_value = v[:, t + 1] if t + 1 < T else torch.zeros_like(last_gae)
        delta = r[:, t] + gamma * next_value * next_valid - v[:, t]
        last_gae = (delta + gamma * lam * next_valid * last_gae) * m[:, t]
        advantages[:, t] = last_gae
    return advantages, advantages + values.detach()


def ppo_clip_loss(
    logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
    clip_eps: float = 0.2, validate: bool = True,
) -> torch.Tensor:
    """PPO clipped surrogate, negated for gradient descent, averaged over all valid tokens.

    PPO (Schulman et al. 2017, arXiv 1707.06347), Eq. 7: L = -E_t[min(rho_t A_t, clip(rho_t, 1 - eps, 1 + eps) A_t)],
    rho_t = exp(logp_new - logp_old). ``logp_old`` and ``advantages`` are constants (stop-gradient). Padding is
    never read: -inf or NaN there (a log-prob of a pad token) changes neither the loss nor any gradient.

    Args:
        logp_new: [B, T] log-probs of the sampled tokens under the current policy (carries the gradient).
        logp_old: [B, T] log-probs under the policy that sampled them.
        advantages: [B, T] per-token advantages.
        mask: [B, T] 1 on valid completion tokens.
        clip_eps: epsilon of the clip range [1 - eps, 1 + eps], > 0.
        validate: check for NaN log-probs and an empty mask (clear errors for bad input). These checks read
            values on the host, a device sync per call on a GPU, so training loops pass False.

    Returns:
        Scalar tensor: token-level masked mean of -min(rho A, clip(rho) A).
    """
    if not (logp_new.shape == logp_old.shape == advantages.shape == mask.shape) or logp_new.ndim != 2:
        raise ValueError(f"logp_new, logp_old, advantages, mask must share one [B, T] shape; got "
                         f"{[tuple(t.shape) for t in (logp_new, logp_old, advantages, mask)]}")
    if clip_eps <= 0:
        raise ValueError(f"clip_eps must be > 0, got {clip_eps}")
    valid = mask.bool()  # (B, T)
    if validate:
        if torch.isnan(logp_new[valid]).any() or torch.isnan(logp_old[valid]).any():
            raise ValueError("log-probs contain NaN: check the forward pass (fp16 overflow, -inf logits)")
        if not valid.any():
            raise ValueError("mask has no valid token: check completion_mask")
    zeros = torch.zeros_like(logp_new)
    # select before exp: exp(-inf - -inf) = NaN in padding would reach the gradient as 0 * NaN
    log_ratio = torch.where(valid, logp_new - logp_old.detach(), zeros)  # (B, T)
    ratio = torch.exp(log_ratio)
    adv = torch.where(valid, advantages.detach(), zeros)  # (B, T)
    clipped_ratio = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    per_token = -torch.min(ratio * adv, clipped_ratio * adv)  # (B, T), 0 on padding
    return per_token.sum() / valid.sum()


def value_loss(
    values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor,
    clip_range: float = 0.2, validate: bool = True,
) -> torch.Tensor:
    """Clipped value loss: 0.5 * masked mean of max((V - R)^2, (clip(V, V_old - c, V_old + c) - R)^2).

    The value clipping of the PPO reference implementation (openai/baselines ppo2; discussed in Engstrom et al.
    2020, arXiv 2005.12729, Sec. 3) that RLHF PPO code keeps; the unclipped term is Eq. 9's L^VF of
    arXiv 1707.06347. ``old_values`` and ``returns`` are constants (stop-gradient). Padding is never read.
    Match that code here; in your own runs the clip is optional (Andrychowicz et al., arXiv 2006.05990, choice
    C13, found that it hurts; the G09 follow-up on value clipping says why).

    Args:
        values: [B, T] current value-head outputs (carry the gradient).
        old_values: [B, T] value estimates at rollout time.
        returns: [B, T] targets (advantages + old values from ``compute_gae_tokens``).
        mask: [B, T] 1 on valid completion tokens.
        clip_range: c >= 0.
        validate: check for NaN and an empty mask (a device sync per call on a GPU; training loops pass False).

    Returns:
        Scalar tensor.
    """
    if not (values.shape == old_values.shape == returns.shape == mask.shape) or values.ndim != 2:
        raise ValueError(f"values, old_values, returns, mask must share one [B, T] shape; got "
                         f"{[tuple(t.shape) for t in (values, old_values, returns, mask)]}")
    if clip_range < 0:
        raise ValueError(f"clip_range must be >= 0, got {clip_range}")
    valid = mask.bool()  # (B, T)
    if validate:
        if torch.isnan(values[valid]).any() or torch.isnan(returns[valid]).any():
            raise ValueError("values or returns contain NaN: check the value head and compute_gae_tokens")
        if not valid.any():
            raise ValueError("mask has no valid token: check completion_mask")
    zeros = torch.zeros_like(values)
    values = torch.where(valid, values, zeros)  # (B, T) select first: NaN in padding must not reach the gradient
    old, target = torch.where(valid, old_values.detach(), zeros), torch.where(valid, returns.detach(), zeros)
    values_clipped = old + torch.clamp(values - old, -clip_range, clip_range)  # (B, T)
    per_token = torch.max((values - target) ** 2, (values_clipped - target) ** 2)  # (B, T), 0 on padding
    return 0.5 * per_token.sum() / valid.sum()

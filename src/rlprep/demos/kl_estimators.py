"""KL estimators k1/k2/k3 (Schulman 2020) and where an RLHF KL penalty goes: into the reward or into the loss.

Notation (Schulman, "Approximating KL Divergence", 2020, http://joschu.net/blog/kl-approx.html): to estimate
KL(q || p) from samples x ~ q, with r = p(x) / q(x),

    k1 = -log r            unbiased, high variance, negative on some samples
    k2 = 0.5 (log r)^2     biased, low variance
    k3 = (r - 1) - log r   unbiased, low variance, always >= 0

In RLHF q is the policy pi (the sampler) and p the reference pi_ref, so log r = ref_logp - logp.
The estimators live in a registry (``ESTIMATORS``) so every demo loops over the same three definitions.
"""

from __future__ import annotations

from typing import Callable

import torch

ESTIMATORS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "k1": lambda log_r: -log_r,
    "k2": lambda log_r: 0.5 * log_r ** 2,
    "k3": lambda log_r: torch.expm1(log_r) - log_r,
}
"""Each maps log r = log p(x) - log q(x) (any shape) to the per-sample estimate of KL(q || p)."""


def categorical_kl(logits_q: torch.Tensor, logits_p: torch.Tensor) -> float:
    """Exact KL(q || p) = sum_x q(x) (log q(x) - log p(x)) between two categoricals given by logits [K]."""
    logq, logp = torch.log_softmax(logits_q.double(), -1), torch.log_softmax(logits_p.double(), -1)
    return float((logq.exp() * (logq - logp)).sum())


def estimator_stats(logits_q: torch.Tensor, logits_p: torch.Tensor) -> dict[str, dict[str, float]]:
    """Exact mean, bias, per-sample std and probability of a negative value of k1/k2/k3 under x ~ q.

    Exact: the expectation is a sum over the K outcomes, so bias 0 means exactly unbiased, not "small".

    Args:
        logits_q: [K] logits of the sampling distribution q (the policy).
        logits_p: [K] logits of p (the reference).

    Returns:
        {"true_kl": {"value": KL(q||p)}, "k1": {"mean", "bias", "std", "p_negative"}, "k2": ..., "k3": ...}.
    """
    if logits_q.shape != logits_p.shape or logits_q.ndim != 1:
        raise ValueError(f"logits_q and logits_p must both be [K]; got {tuple(logits_q.shape)}, {tuple(logits_p.shape)}")
    logq, logp = torch.log_softmax(logits_q.double(), -1), torch.log_softmax(logits_p.double(), -1)
    q = logq.exp()
    log_r = logp - logq  # (K,)
    true_kl = categorical_kl(logits_q, logits_p)
    out: dict[str, dict[str, float]] = {"true_kl": {"value": true_kl}}
    for name, k in ESTIMATORS.items():
        values = k(log_r)  # (K,)
        mean = float((q * values).sum())
        out[name] = {"mean": mean, "bias": mean - true_kl,
                     "std": float(torch.sqrt((q * (values - mean) ** 2).sum())),
                     "p_negative": float(q[values < 0].sum())}
    return out


def gaussian_estimator_samples(shift: float, n_samples: int = 200_000, seed: int = 0) -> dict[str, torch.Tensor]:
    """Schulman's example: q = N(0, 1), p = N(shift, 1), true KL(q || p) = shift^2 / 2; per-sample k1/k2/k3.

    log r = log p(x) - log q(x) = shift * x - shift^2 / 2 for x ~ q. Returns {"k1"|"k2"|"k3": [n_samples]}.
    """
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples}")
    x = torch.randn(n_samples, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    log_r = shift * x - shift ** 2 / 2
    return {name: k(log_r) for name, k in ESTIMATORS.items()}


def expected_gradients(logits: torch.Tensor, ref_logits: torch.Tensor) -> dict[str, torch.Tensor]:
    """Exact expected gradients w.r.t. the policy logits of each estimator used as a *loss*, samples held fixed.

    What autograd computes when ``beta * k(logp, ref_logp)`` is added to a loss for tokens x ~ pi: the sample is
    a constant, only log pi(x) carries the gradient, so the expected gradient is sum_x pi(x) grad k(x). Compared
    with the true gradients of the reverse KL(pi || ref) (what k3's *value* estimates) and the forward
    KL(ref || pi).

    Args:
        logits: [K] policy logits theta.
        ref_logits: [K] reference logits.

    Returns:
        {"k1", "k2", "k3", "reverse_kl", "forward_kl"}: each a [K] gradient w.r.t. ``logits``.
    """
    if logits.shape != ref_logits.shape or logits.ndim != 1:
        raise ValueError("logits and ref_logits must both be [K]")
    ref_logp = torch.log_softmax(ref_logits.double(), -1).detach()
    out: dict[str, torch.Tensor] = {}
    for name, k in ESTIMATORS.items():
        theta = logits.double().clone().requires_grad_(True)
        logp = torch.log_softmax(theta, -1)
        weights = logp.exp().detach()  # pi(x) as sampling weights: no gradient through the sampler
        (weights * k(ref_logp - logp)).sum().backward()
        out[name] = theta.grad.detach()
    for name, direction in (("reverse_kl", "reverse"), ("forward_kl", "forward")):
        theta = logits.double().clone().requires_grad_(True)
        logp = torch.log_softmax(theta, -1)
        kl = (logp.exp() * (logp - ref_logp)).sum() if direction == "reverse" else (ref_logp.exp() * (ref_logp - logp)).sum()
        kl.backward()
        out[name] = theta.grad.detach()
    return out


def kl_in_reward_vs_in_loss(score: torch.Tensor, logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor,
                            beta: float, group_size: int) -> dict[str, torch.Tensor]:
    """Per-token advantages and KL gradients for the two placements of an RLHF KL penalty, on one batch.

    * **In the reward** (InstructGPT, arXiv 2203.02155, Eq. 2): ``kl_penalized_rewards`` puts -beta (logp -
      ref_logp) (k1) on every valid token and the score on the last; with gamma = lam = 1 and a zero critic,
      ``compute_gae_tokens`` gives A_t = the return-to-go: the score minus beta times the KL of tokens t..end.
      The policy-gradient weight of token t therefore contains the KL of *later* tokens.
    * **In the loss** (GRPO, arXiv 2402.03300, Eq. 3-4): advantages come from the scores alone
      (``group_advantages``), identical on every token of a completion, and beta * k3 is a separate loss term
      whose gradient w.r.t. logp_t is beta * (1 - pi_ref/pi) at token t only.

    Args:
        score: [B] sequence scores; B = N * group_size rows, groups consecutive.
        logp, ref_logp: [B, T] policy / reference log-probs of the sampled tokens.
        mask: [B, T] 1 on valid completion tokens.
        beta: KL coefficient.
        group_size: G for the in-loss group advantages.

    Returns:
        {"adv_in_reward": [B, T], "adv_in_loss": [B, T] (A_i broadcast on valid tokens),
         "kl_grad_in_loss": [B, T] d(beta * k3)/d logp per token, "k1": [B, T], "k3": [B, T]}, 0 where mask is 0.
    """
    from rlprep.algos.grpo import group_advantages, kl_k3
    from rlprep.algos.ppo import compute_gae_tokens, kl_penalized_rewards

    m = mask.to(logp.dtype)
    rewards = kl_penalized_rewards(score, logp, ref_logp, mask, beta)  # (B, T)
    adv_in_reward, _ = compute_gae_tokens(rewards, torch.zeros_like(rewards), mask, gamma=1.0, lam=1.0)
    adv_seq = group_advantages(score, group_size, scale="group")  # (B,)
    lp = logp.detach().clone().requires_grad_(True)
    (beta * kl_k3(lp, ref_logp) * m).sum().backward()
    return {"adv_in_reward": adv_in_reward, "adv_in_loss": adv_seq.unsqueeze(1) * m,
            "kl_grad_in_loss": lp.grad.detach() * m, "k1": (logp - ref_logp) * m, "k3": kl_k3(logp, ref_logp) * m}

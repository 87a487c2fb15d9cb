"""Importance-sampling toys with a known truth: ordinary vs self-normalised vs truncated estimates, weight
variance against KL, and a simulated rollout/trainer probability mismatch.

Gaussian toy: behaviour mu = N(0, 1), target pi = N(delta, 1), f(x) = x, so E_pi[f] = delta exactly and
KL(pi || mu) = delta^2 / 2. The weight w = pi / mu = exp(delta x - delta^2 / 2) has E_mu[w] = 1 and
E_mu[w^2] = exp(delta^2) = exp(2 KL(pi || mu)), so Var_mu(w) = exp(2 KL) - 1: it grows exponentially in the KL
(for Gaussians E_mu[w^2] = exp(D_2(pi || mu)), the Renyi-2 divergence, which equals 2 KL here).
Estimates go through ``rlprep.algos.importance_sampling.is_estimate`` (the lab06 reference).
"""

from __future__ import annotations

import math

import numpy as np
import torch


def gaussian_weight_moments(delta: float) -> dict[str, float]:
    """Closed forms for mu = N(0,1), pi = N(delta,1): KL(pi||mu), E_mu[w^2], Var_mu(w)."""
    return {"kl": delta ** 2 / 2, "second_moment": math.exp(delta ** 2), "weight_var": math.expm1(delta ** 2)}


def gaussian_samples(delta: float, n: int, trials: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """``trials`` batches of ``n`` draws x ~ mu = N(0,1) with log pi(x), log mu(x) and f(x) = x. Each [trials, n]."""
    if n < 1 or trials < 1:
        raise ValueError(f"n and trials must be >= 1; got {n}, {trials}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(trials, n, generator=gen, dtype=torch.float64)  # (trials, n)
    logp_mu = -0.5 * x ** 2
    logp_pi = -0.5 * (x - delta) ** 2  # the shared -log sqrt(2 pi) cancels in the ratio
    return {"x": x, "f": x, "logp_target": logp_pi, "logp_behavior": logp_mu}


def estimator_errors(delta: float, n: int, trials: int, clip: float | None = None, seed: int = 0) -> dict[str, dict[str, float]]:
    """Bias, std and RMSE over ``trials`` of ordinary, self-normalised and (if ``clip``) truncated IS estimates of
    E_pi[x] = delta, each from ``n`` samples of mu. Returns {"ordinary"|"self_normalized"|"truncated": {...}}."""
    from rlprep.algos.importance_sampling import is_estimate

    s = gaussian_samples(delta, n, trials, seed)
    variants = {"ordinary": dict(), "self_normalized": dict(self_normalized=True)}
    if clip is not None:
        variants["truncated"] = dict(clip=clip)
    out = {}
    for name, kwargs in variants.items():
        est = np.array([is_estimate(s["f"][i], s["logp_target"][i], s["logp_behavior"][i], **kwargs)
                        for i in range(trials)])
        bias = float(est.mean() - delta)
        out[name] = {"mean": float(est.mean()), "bias": bias, "std": float(est.std()),
                     "rmse": float(np.sqrt(((est - delta) ** 2).mean()))}
    return out


def effective_sample_size(weights: torch.Tensor) -> float:
    """Kish's ESS = (sum w)^2 / sum w^2 for [N] non-negative weights: N when all equal, 1 when one dominates."""
    weights = torch.as_tensor(weights, dtype=torch.float64)
    if weights.ndim != 1 or weights.numel() == 0 or (weights < 0).any():
        raise ValueError("weights must be a non-empty [N] tensor of non-negative numbers")
    return float(weights.sum() ** 2 / (weights ** 2).sum())


def mismatch_logprobs(n_seqs: int, length: int, vocab: int = 64, noise: float = 0.05, temperature: float = 0.7,
                      seed: int = 0) -> dict[str, torch.Tensor]:
    """Simulated rollout/trainer mismatch: the same logits computed twice with different numerics.

    Trainer logits z ~ N(0,1) / temperature per position (peaked next-token distributions); the rollout engine
    sees z + noise * N(0,1) (a stand-in for a different kernel / precision, not a measured engine). Tokens are
    sampled from the rollout distribution, as in a vLLM-rollout + FSDP-trainer setup.

    Returns:
        {"logp_train": [N, T], "logp_rollout": [N, T]} log-probs of the sampled tokens under each engine.
    """
    if n_seqs < 1 or length < 1 or vocab < 2 or noise < 0 or temperature <= 0:
        raise ValueError("need n_seqs, length >= 1, vocab >= 2, noise >= 0, temperature > 0")
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(n_seqs, length, vocab, generator=gen, dtype=torch.float64) / temperature  # (N, T, V)
    z_roll = z + noise * torch.randn(z.shape, generator=gen, dtype=torch.float64)
    lp_train, lp_roll = torch.log_softmax(z, -1), torch.log_softmax(z_roll, -1)
    tokens = torch.multinomial(lp_roll.exp().view(-1, vocab), 1, generator=gen).view(n_seqs, length, 1)  # (N, T, 1)
    return {"logp_train": lp_train.gather(-1, tokens).squeeze(-1), "logp_rollout": lp_roll.gather(-1, tokens).squeeze(-1)}

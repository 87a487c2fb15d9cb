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
from typing import Callable

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


# lab06's toys: the learner's importance_weights / is_estimate passed in, with a known truth ----------------------
def variance_vs_kl(importance_weights: Callable, n_samples: int = 20_000, vocab: int = 16, length: int = 8,
                   seed: int = 0, show: bool = True) -> dict[str, list[float]]:
    """Sample Var_μ[w] of ``importance_weights`` against KL(π‖μ), for Gaussians and for token sequences.

    Gaussians: μ = N(0, 1), π = N(δ, 1), δ ∈ [0, 2.5]: KL = δ²/2 and Var[w] = e^{2 KL} − 1 exactly (drawn dashed).
    Sequences: ``length`` tokens over ``vocab``; π's logits are μ's plus s·noise, the sequence weight is the
    product of the per-token ratios and the sequence KL the sum of the per-token KLs.
    Returns ``{"gauss_kl", "gauss_var", "seq_kl", "seq_var"}`` and draws them (log-y) when ``show``.
    """
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n_samples, generator=gen, dtype=torch.float64)  # (N,) samples from μ = N(0, 1)
    deltas = torch.linspace(0.0, 2.5, 11, dtype=torch.float64).tolist()
    gauss_kl = [d * d / 2 for d in deltas]
    gauss_var = [float(importance_weights(-0.5 * (x - d) ** 2, -0.5 * x ** 2).var()) for d in deltas]
    base = torch.randn(length, vocab, generator=gen, dtype=torch.float64)  # (T, V) μ's logits per position
    noise = torch.randn(length, vocab, generator=gen, dtype=torch.float64)  # (T, V)
    pos = torch.arange(length)
    seq_kl, seq_var = [], []
    for s in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        log_mu, log_pi = base.log_softmax(-1), (base + s * noise).log_softmax(-1)  # (T, V) each
        tokens = torch.multinomial(log_mu.exp(), n_samples, replacement=True, generator=gen).T  # (N, T)
        lp_pi, lp_mu = log_pi[pos, tokens].sum(-1), log_mu[pos, tokens].sum(-1)  # (N,) sequence log-probs
        seq_kl.append(float((log_pi.exp() * (log_pi - log_mu)).sum()))  # KL(π‖μ) summed over T
        seq_var.append(float(importance_weights(lp_pi, lp_mu).var()))
    out = {"gauss_kl": gauss_kl, "gauss_var": gauss_var, "seq_kl": seq_kl, "seq_var": seq_var}
    if show:
        import matplotlib.pyplot as plt

        grid = np.linspace(0, max(gauss_kl + seq_kl), 50)
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(gauss_kl, gauss_var, "o", label="Gaussians: sample Var[w]")
        ax.plot(grid, np.expm1(2 * grid), "k--", label="Gaussians: exact e^(2 KL) − 1")
        ax.plot(seq_kl, seq_var, "s-", label=f"{length}-token sequences: sample Var[w]")
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_xlabel("KL(π ‖ μ)  (nats)")
        ax.set_ylabel("Var_μ[w]  (w = π/μ, unitless)")
        ax.set_title(f"Importance-weight variance against KL ({n_samples} samples)")
        ax.legend()
        plt.show()
        print("A toy with an exact answer: the same in every profile. Exact: KL 0.5 -> Var[w] = e^1 - 1 = 1.7; "
              "KL 2 -> e^4 - 1 = 54.")
    return out


def truncation_tradeoff(is_estimate: Callable, delta: float = 1.5, batch: int = 64, n_batches: int = 500,
                        clips=(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, None), seed: int = 1,
                        show: bool = True) -> dict[str, list]:
    """Bias², variance and MSE of ``is_estimate`` of E_π[x] = δ across ``n_batches`` batches, per truncation C.

    μ = N(0, 1), π = N(δ, 1), f(x) = x. ``clip=None`` is ordinary IS (unbiased). Returns ``{"clip": [...],
    "bias2": [...], "var": [...], "snis_bias2": float, "snis_var": float}``; prints the table and draws it.
    """
    xs = gaussian_samples(delta, batch, n_batches, seed)["x"]  # (M, N) samples from μ

    def spread(**kwargs) -> tuple[float, float]:
        ests = np.array([is_estimate(x, -0.5 * (x - delta) ** 2, -0.5 * x ** 2, **kwargs) for x in xs])  # (M,)
        return float((ests.mean() - delta) ** 2), float(ests.var())

    rows = [spread(clip=c) for c in clips]
    snis = spread(self_normalized=True)
    out = {"clip": list(clips), "bias2": [r[0] for r in rows], "var": [r[1] for r in rows],
           "snis_bias2": snis[0], "snis_var": snis[1]}
    if show:
        import matplotlib.pyplot as plt

        labels = ["inf" if c is None else f"{c:g}" for c in clips]
        print(f"{'clip C':>8} {'bias^2':>9} {'variance':>9} {'MSE':>9}")
        for label, (b2, v) in zip(labels + ["SNIS"], rows + [snis]):
            print(f"{label:>8} {b2:9.4f} {v:9.4f} {b2 + v:9.4f}")
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(labels, out["bias2"], "o-", label="bias²")
        ax.plot(labels, out["var"], "s-", label="variance")
        ax.plot(labels, [b + v for b, v in rows], "k--", label="MSE")
        ax.axhline(sum(snis), color="gray", lw=1, label="self-normalized IS, MSE")
        ax.set_yscale("log")
        ax.set_xlabel("truncation level C  (w -> min(w, C); inf = ordinary IS)")
        ax.set_ylabel("squared error of the estimate of E_π[x]  (x units²)")
        ax.set_title(f"Truncated IS, δ = {delta}, {batch} samples per batch, {n_batches} batches")
        ax.legend()
        plt.show()
        print("A toy with an exact answer: the same in every profile.")
    return out

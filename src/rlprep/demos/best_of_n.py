"""Best-of-N against a proxy reward model, simulated (G16): why gold reward rises, then falls, as N grows.

Each sample has a true quality ``g ~ N(0, 1)`` and a nuisance feature ``z ~ N(0, 1)`` (think: length, flattery).
The proxy RM scores ``r = g + a·z + σ·ε``: it tracks quality but also over-rewards the feature, plus noise.
The gold reward is ``g − b·max(z, 0)²``: a little of the feature is harmless, a lot of it is bad.
Best-of-N keeps the sample with the highest ``r``. Small N mostly selects on ``g`` (gold rises); large N selects
the extreme ``z`` tail the RM over-rewards (gold falls): extremal Goodhart (Manheim & Garrabrant, arXiv 1803.04585).

Gao, Schulman, Hilton (arXiv 2210.10760) fit best-of-n gold reward as ``R(d) = d(α − β d)`` with
``d = sqrt(KL)`` and ``KL = log N − (N − 1)/N`` (an upper bound on KL(best-of-N ‖ base), Beirami et al.,
arXiv 2401.01879). :func:`fit_gao` fits α, β by least squares.
"""

from __future__ import annotations

import math

import numpy as np


def kl_best_of_n(n: int) -> float:
    """log N − (N − 1)/N: the KL of best-of-N from the base policy (an upper bound in general)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return math.log(n) - (n - 1) / n


def simulate(ns=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), *, a: float = 1.0, b: float = 0.5, sigma: float = 0.5,
             trials: int = 4000, seed: int = 0) -> dict[str, list[float]]:
    """Mean proxy and gold reward of the best-of-N pick, for each N (nested subsets of one draw per trial).

    Returns ``{"n", "kl", "d", "proxy", "gold", "gold_se"}``; ``gold_se`` is the standard error over trials.
    """
    rng = np.random.default_rng(seed)
    n_max = max(ns)
    g = rng.standard_normal((trials, n_max))
    z = rng.standard_normal((trials, n_max))
    proxy = g + a * z + sigma * rng.standard_normal((trials, n_max))  # (trials, n_max) RM scores
    gold = g - b * np.maximum(z, 0.0) ** 2  # (trials, n_max) true reward
    rows = np.arange(trials)
    out = {"n": [], "kl": [], "d": [], "proxy": [], "gold": [], "gold_se": []}
    for n in sorted(ns):
        pick = proxy[:, :n].argmax(axis=1)  # (trials,) best-of-n by the RM
        picked_gold = gold[rows, pick]
        out["n"].append(n)
        out["kl"].append(kl_best_of_n(n))
        out["d"].append(math.sqrt(kl_best_of_n(n)))
        out["proxy"].append(float(proxy[rows, pick].mean()))
        out["gold"].append(float(picked_gold.mean()))
        out["gold_se"].append(float(picked_gold.std(ddof=1) / math.sqrt(trials)))
    return out


def fit_gao(d: list[float], gain: list[float]) -> tuple[float, float]:
    """Least-squares α, β of ``gain = d(α − β d)`` (gain = gold reward minus the base policy's)."""
    d_arr = np.asarray(d, dtype=float)
    design = np.stack([d_arr, -d_arr ** 2], axis=1)  # (K, 2)
    (alpha, beta), *_ = np.linalg.lstsq(design, np.asarray(gain, dtype=float), rcond=None)
    return float(alpha), float(beta)

"""Toys for the limits of RLHF reward signals (notebook 01, G01/G18/G19).

* ``fit_linear_bradley_terry``: a linear reward model r(x) = w·x trained with the reference
  ``rlprep.algos.reward_model.bradley_terry_loss`` on pairwise labels drawn from a true reward, with a controllable
  rate of label flips (annotator disagreement). InstructGPT's training labellers agreed with each other about 73% of
  the time (Ouyang et al. 2022, arXiv 2203.02155).
* ``best_of_n_gold``: best-of-n selection with a proxy reward = gold + error. With light-tailed error the selected
  gold keeps rising (regressional Goodhart: it rises less than the proxy); with heavy-tailed error the proxy's
  maximum is increasingly an error outlier and the selected gold falls (extremal Goodhart). Gao, Schulman, Hilton
  2022 (arXiv 2210.10760) measure the real best-of-n curve.
* ``pass_at_k``: the unbiased pass@k estimator 1 - C(n-c, k)/C(n, k) (Chen et al. 2021, arXiv 2107.03374) used to
  compare a base and a "sharpened" policy (Yue et al. 2025, arXiv 2504.13837).
* ``informative_group_fraction``: P(0 < #correct < G) = 1 - p^G - (1-p)^G, the chance a GRPO group has non-zero
  advantages at all.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def fit_linear_bradley_terry(n_pairs: int, dim: int = 8, flip_rate: float = 0.0, steps: int = 150, lr: float = 0.1,
                             n_test: int = 2000, seed: int = 0) -> dict[str, float]:
    """Train r(x) = w·x on ``n_pairs`` labelled pairs; report held-out pairwise accuracy against the TRUE reward.

    Items x ~ N(0, I_dim); true reward w*·x with ||w*|| = 2; the label says which of two items is better by the true
    reward, flipped with probability ``flip_rate``. Training: full-batch Adam on bradley_terry_loss(r_chosen, r_rejected).

    Returns:
        {"test_accuracy": agreement with the true ranking on fresh pairs, "label_agreement": 1 - flip rate realised,
         "cosine": cos(w, w*)}.
    """
    from rlprep.algos.reward_model import bradley_terry_loss

    if n_pairs < 1 or dim < 1 or not 0 <= flip_rate < 0.5 or steps < 1:
        raise ValueError("need n_pairs >= 1, dim >= 1, 0 <= flip_rate < 0.5 and steps >= 1")
    gen = torch.Generator().manual_seed(seed)
    w_true = torch.randn(dim, generator=gen, dtype=torch.float64)
    w_true = 2 * w_true / w_true.norm()
    a, b = torch.randn(n_pairs, dim, generator=gen, dtype=torch.float64), torch.randn(n_pairs, dim, generator=gen, dtype=torch.float64)
    a_better = (a @ w_true) > (b @ w_true)  # (n_pairs,)
    flip = torch.rand(n_pairs, generator=gen, dtype=torch.float64) < flip_rate
    label_a = a_better ^ flip
    chosen = torch.where(label_a[:, None], a, b)  # (n_pairs, dim)
    rejected = torch.where(label_a[:, None], b, a)
    w = torch.zeros(dim, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        loss = bradley_terry_loss(chosen @ w, rejected @ w)
        opt.zero_grad()
        loss.backward()
        opt.step()
    ta, tb = torch.randn(n_test, dim, generator=gen, dtype=torch.float64), torch.randn(n_test, dim, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        acc = float((((ta - tb) @ w > 0) == ((ta - tb) @ w_true > 0)).double().mean())
        cos = float(w @ w_true / (w.norm() * w_true.norm()).clamp(min=1e-12))
    return {"test_accuracy": acc, "label_agreement": 1 - float(flip.double().mean()), "cosine": cos}


def best_of_n_gold(ns, error: str = "gaussian", error_scale: float = 1.0, trials: int = 2000, seed: int = 0) -> dict[str, np.ndarray]:
    """Mean gold and proxy reward of the proxy-best of n candidates, for each n in ``ns``.

    Gold g ~ N(0, 1); proxy = g + error_scale * e with e ~ N(0, 1) ("gaussian") or Student-t with 2 degrees of freedom
    ("heavy", infinite variance). Returns {"n": [len(ns)], "gold": [..], "proxy": [..]}.
    """
    if error not in ("gaussian", "heavy"):
        raise ValueError(f"error must be 'gaussian' or 'heavy', got {error!r}")
    ns = np.asarray(list(ns), dtype=int)
    if (ns < 1).any() or trials < 1:
        raise ValueError("every n and trials must be >= 1")
    rng = np.random.default_rng(seed)
    n_max = int(ns.max())
    gold = rng.normal(size=(trials, n_max))
    e = rng.normal(size=(trials, n_max)) if error == "gaussian" else rng.standard_t(2, size=(trials, n_max))
    proxy = gold + error_scale * e
    out_gold, out_proxy = [], []
    for n in ns:
        pick = proxy[:, :n].argmax(axis=1)  # (trials,)
        out_gold.append(gold[np.arange(trials), pick].mean())
        out_proxy.append(proxy[np.arange(trials), pick].mean())
    return {"n": ns, "gold": np.array(out_gold), "proxy": np.array(out_proxy)}


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct: 1 - C(n - c, k) / C(n, k) (Chen et al. 2021, arXiv 2107.03374)."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def informative_group_fraction(p, group_size: int):
    """P(a group of G samples with success probability p has both a success and a failure) = 1 - p^G - (1-p)^G."""
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2, got {group_size}")
    p = np.asarray(p, dtype=np.float64)
    return 1.0 - p ** group_size - (1.0 - p) ** group_size

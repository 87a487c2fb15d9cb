"""Importance sampling for lab06_importance_sampling: weights and ordinary / self-normalized / truncated estimates."""

from __future__ import annotations

import torch


def importance_weights(
    logp_target: torch.Tensor, logp_behavior: torch.Tensor, clip: float | None = None
) -> torch.Tensor:
    """w = exp(logp_target - logp_behavior), truncated to min(w, clip) when ``clip`` is given.

    Truncated IS as in V-trace (Espeholt et al. 2018, arXiv 1802.01561), Eq. 1 (rho_t = min(rho_bar, pi/mu)),
    and the TIS correction of LLM RL. Computed in log space so large log-ratio gaps do not overflow early.

    Args:
        logp_target: [N] (any shape) log pi(x_i) of each sample under the target policy.
        logp_behavior: same shape, log mu(x_i) under the behavior policy that drew x_i.
        clip: truncation level c > 0, or None for plain IS.

    Returns:
        Same shape as the inputs: the (truncated) weights.
    """
    logp_target, logp_behavior = torch.as_tensor(logp_target), torch.as_tensor(logp_behavior)
    if logp_target.shape != logp_behavior.shape:
        raise ValueError(f"logp_target {tuple(logp_target.shape)} and logp_behavior {tuple(logp_behavior.shape)} "
                         "must have the same shape (one log-prob per sample)")
    if torch.isnan(logp_target).any() or torch.isnan(logp_behavior).any():
        raise ValueError("log-probs contain NaN: check how they were computed")
    if clip is not None and not clip > 0:
        raise ValueError(f"clip must be > 0 or None, got {clip}")
    weights = torch.exp(logp_target - logp_behavior)
    return weights if clip is None else torch.clamp(weights, max=clip)


def is_estimate(
    f_values: torch.Tensor, logp_target: torch.Tensor, logp_behavior: torch.Tensor,
    self_normalized: bool = False, clip: float | None = None,
) -> float:
    """Estimate E_target[f] from samples x_i ~ behavior: ordinary mean(w f) or self-normalized sum(w f) / sum(w).

    Ordinary IS is unbiased (without truncation) but its variance grows exponentially with the divergence
    (E_mu[w^2] = exp of the Renyi-2 divergence); self-normalized IS is biased but consistent and stays within
    [min f, max f] (Owen, "Monte Carlo theory, methods and examples", 2013, Ch. 9, importance sampling).
    Truncation (``clip``) trades bias for variance as in V-trace (arXiv 1802.01561).

    Args:
        f_values: [N] f(x_i) for each sample.
        logp_target, logp_behavior: [N] log-probs of each sample under target and behavior policies.
        self_normalized: use sum(w f) / sum(w) instead of mean(w f).
        clip: truncation level for the weights, or None.

    Returns:
        Python float.
    """
    f_values = torch.as_tensor(f_values, dtype=torch.float64)
    logp_target = torch.as_tensor(logp_target, dtype=torch.float64)
    logp_behavior = torch.as_tensor(logp_behavior, dtype=torch.float64)
    if not (f_values.shape == logp_target.shape == logp_behavior.shape) or f_values.ndim != 1 or f_values.numel() == 0:
        raise ValueError(f"f_values, logp_target, logp_behavior must be non-empty [N] with one N; got "
                         f"{[tuple(t.shape) for t in (f_values, logp_target, logp_behavior)]}")
    if torch.isnan(f_values).any() or torch.isnan(logp_target).any() or torch.isnan(logp_behavior).any():
        raise ValueError("inputs contain NaN")
    if clip is not None and not clip > 0:
        raise ValueError(f"clip must be > 0 or None, got {clip}")
    weights = torch.exp(logp_target - logp_behavior)  # (N,)
    if clip is not None:
        weights = torch.clamp(weights, max=clip)
    estimators = {
        False: lambda: (weights * f_values).mean(),  # ordinary IS
        True: lambda: (weights * f_values).sum() / weights.sum(),  # self-normalized IS
    }
    return float(estimators[bool(self_normalized)]())

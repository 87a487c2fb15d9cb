"""Lab 9's demo: the learner's Dr. GRPO beside the reference GRPO, as per-token gradient weights on one group.

Every policy-gradient loss of the atlas is, per token, a weight times grad log pi; autograd gives that weight
directly, w[i, t] = -d loss / d logp_new[i, t] (positive: the token is pushed up). On one on-policy group of
completions of different lengths, GRPO's 1/|o_i| makes the weight shrink with the length (arXiv 2402.03300,
Sec. 4.1), while Dr. GRPO's constant divisor gives every token of a completion with the same advantage the same
weight (Liu et al. 2025, arXiv 2503.20783). Notebook 13 draws the same plot for every variant of ``PG_LOSSES``.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlprep.algos.pg_losses import PG_ADVANTAGES, PG_LOSSES


def one_group(lengths=(3, 6, 9, 12), rewards=(1.0, 0.0, 1.0, 0.0), seed: int = 0) -> dict:
    """One group of G completions, on-policy: {"logp": [G, T], "mask": [G, T], "rewards": [G], "lengths": [G]}.

    T = max(lengths); log-probs are seeded in [-2, -1) on valid tokens and 0 on padding.
    """
    if len(lengths) != len(rewards) or len(lengths) < 2 or min(lengths) < 1:
        raise ValueError(f"need one length >= 1 per reward and G >= 2; got {lengths} and {rewards}")
    G, T = len(lengths), max(lengths)
    length = torch.tensor(lengths)  # (G,)
    mask = (torch.arange(T)[None, :] < length[:, None]).double()  # (G, T)
    gen = torch.Generator().manual_seed(seed)
    logp = (-1.0 - torch.rand(G, T, generator=gen, dtype=torch.float64)) * mask  # (G, T)
    return {"logp": logp, "mask": mask, "rewards": torch.tensor(rewards, dtype=torch.float64), "lengths": length}


def token_weights(loss_fn: Callable, advantages: torch.Tensor, batch: dict,
                  logp_new: torch.Tensor | None = None) -> torch.Tensor:
    """w = -d loss_fn(logp_new, batch["logp"], advantages, mask) / d logp_new: [G, T], 0 on padding.

    ``batch["logp"]`` is the sampler's log-probs (logp_old); ``logp_new`` [G, T] the current policy's (default: the
    same values, on-policy, ratio 1), so an off-policy ``logp_new`` shows what each variant's clip does to a token.
    """
    logp = (batch["logp"] if logp_new is None else logp_new).clone().requires_grad_(True)  # (G, T)
    loss_fn(logp, batch["logp"], advantages, batch["mask"]).backward()
    return -logp.grad * batch["mask"]


def compare_weights(dr_grpo_loss: Callable, batch: dict | None = None, plot: bool = True) -> dict:
    """Per-token gradient weights of GRPO (reference) and of ``dr_grpo_loss`` (yours), each with its own baseline.

    Prints each completion's per-token weight under both and whether yours is the same for every token of a
    completion and, among completions with the same |advantage|, the same whatever their length.

    Args:
        dr_grpo_loss: the learner's function, ``(logp_new, logp_old, advantages, mask) -> scalar``.
        batch: a :func:`one_group` dict (default: lengths 3, 6, 9, 12 and rewards 1, 0, 1, 0). plot: draw it.

    Returns:
        {"grpo": [G, T] weights, "dr_grpo": [G, T] weights, "length_free": bool}.
    """
    batch = one_group() if batch is None else batch
    G = len(batch["lengths"])
    weights = {"grpo": token_weights(PG_LOSSES["grpo"], PG_ADVANTAGES["grpo"](batch["rewards"], G), batch),
               "dr_grpo": token_weights(dr_grpo_loss, PG_ADVANTAGES["dr_grpo"](batch["rewards"], G), batch)}
    valid = batch["mask"].bool()
    advantages = PG_ADVANTAGES["dr_grpo"](batch["rewards"], G)  # (G,)
    per_unit = weights["dr_grpo"] / torch.where(advantages == 0, torch.ones_like(advantages), advantages)[:, None]
    length_free = bool(torch.allclose(per_unit[valid], per_unit[valid][0].expand(int(valid.sum()))))
    for i in range(G):
        n = int(batch["lengths"][i])
        print(f"completion {i + 1}: |o| = {n:>2}, reward {batch['rewards'][i].item():g}   per-token weight  "
              f"grpo {weights['grpo'][i, 0].item():+.4f}   your dr_grpo {weights['dr_grpo'][i, 0].item():+.4f}")
    print("your Dr. GRPO weighs every token alike, whatever its completion's length: "
          + ("ok" if length_free else "NO (look at the divisor: a constant B * max_length, not 1/|o_i|)"))
    if plot:
        _plot(weights, batch)
    return {**weights, "length_free": length_free}


def _plot(weights: dict, batch: dict) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.2), sharey=True)
    for ax, (name, title) in zip(axes, (("grpo", "GRPO (reference)"), ("dr_grpo", "your Dr. GRPO"))):
        for i, n in enumerate(batch["lengths"].tolist()):
            ax.plot(range(1, n + 1), weights[name][i, :n].numpy(), marker="o",
                    label=f"|o|={n}, r={batch['rewards'][i].item():g}")
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_title(f"{title}: per-token gradient weight")
        ax.set_xlabel("token position t")
        ax.set_ylabel("w = -dL/dlog π (dimensionless)")
    axes[1].legend(fontsize=8)
    plt.tight_layout()
    plt.show()

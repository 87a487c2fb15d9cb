"""Hidden cases of lab05 (GRPO): three groups of five continuous rewards for ``group_advantages``, random
log-probs for ``kl_k3``, and a ragged off-policy [4, 6] batch for ``grpo_loss`` (clip, KL, both aggregations, the
GSPO sequence ratio, per-token advantages, and its gradient).

The lab's hidden tests write e.g. ``group_advantages({{ rewards }}, 5)`` and compare with ``{{ ga_group }}``.
"""

from __future__ import annotations

import torch

from rlprep.algos.grpo import group_advantages, grpo_loss, kl_k3


def _grad_new(**kwargs) -> torch.Tensor:
    """d grpo_loss / d logp_new."""
    leaf = kwargs.pop("logp_new").detach().clone().requires_grad_(True)
    grpo_loss(logp_new=leaf, **kwargs).backward()
    return leaf.grad


def fixtures() -> dict:
    gen = torch.Generator().manual_seed(20261201)

    def rnd(*shape, scale=1.0, shift=0.0):
        return torch.round((shift + scale * torch.randn(*shape, generator=gen, dtype=torch.float64)) * 1000) / 1000

    rewards = rnd(15)  # (N*G,): N = 3 groups of G = 5, continuous rewards
    B, T = 4, 6
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]],
                        dtype=torch.float64)  # (B, T) ragged, every row has >= 1 valid token
    old = rnd(B, T, scale=0.8, shift=-1.5)  # (B, T)
    new = torch.round((old + 0.3 * torch.randn(B, T, generator=gen, dtype=torch.float64)) * 1000) / 1000
    ref = torch.round((old + 0.3 * torch.randn(B, T, generator=gen, dtype=torch.float64)) * 1000) / 1000
    adv = rnd(B)  # (B,)
    logp_k3, ref_k3 = rnd(3, 4, shift=-1.0), rnd(3, 4, shift=-1.0)
    adv_tokens = rnd(B, T)  # (B, T) one advantage per token
    rewards_eq = torch.cat([torch.full((4,), 0.7, dtype=torch.float64), rewards[:4]])  # an all-equal group first
    rewards_eq32 = torch.cat([torch.full((6,), 0.3), rewards[:6].float()])  # float32, six equal rewards first
    k3_mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.float64)  # (3, 4) right padding
    k3_logp_padded = torch.where(k3_mask > 0, logp_k3, torch.tensor(float("-inf"), dtype=torch.float64))

    def loss(**kw) -> float:
        return float(grpo_loss(new, old, adv, mask, **kw))

    return {
        "rewards": rewards,
        "ga_group": group_advantages(rewards, 5), "ga_batch": group_advantages(rewards, 5, scale="batch"),
        "ga_none": group_advantages(rewards, 5, scale="none"),
        "ga_eps": group_advantages(rewards, 5, scale="group", eps=0.5),
        "k3_logp": logp_k3, "k3_ref": ref_k3, "k3": kl_k3(logp_k3, ref_k3),
        "new": new, "old": old, "ref": ref, "adv": adv, "mask": mask,
        "clip_token": loss(eps_low=0.2, eps_high=0.28, aggregation="token"),
        "clip_sequence": loss(eps_low=0.2, eps_high=0.28, aggregation="sequence"),
        "kl_token": loss(beta=0.04, ref_logp=ref, aggregation="token"),
        "kl_sequence": loss(beta=0.04, ref_logp=ref, aggregation="sequence"),
        "default": loss(),
        "rewards_eq": rewards_eq, "ga_eq": group_advantages(rewards_eq, 4),
        # float32: the mean of six 0.3s is not 0.3, so centred rewards are rounding noise that a tiny eps would blow up
        "rewards_eq32": rewards_eq32, "ga_eq32": group_advantages(rewards_eq32, 6, eps=1e-8),
        "k3_3d": kl_k3(logp_k3.reshape(2, 3, 2), ref_k3.reshape(2, 3, 2)),
        "k3_mask": k3_mask, "k3_logp_padded": k3_logp_padded, "k3_masked": kl_k3(k3_logp_padded, ref_k3, k3_mask),
        "on_token": float(grpo_loss(new, new, adv, mask, aggregation="token")),
        "on_sequence": float(grpo_loss(new, new, adv, mask, aggregation="sequence")),
        "gspo_token": loss(importance_level="sequence", aggregation="token"),
        "gspo_sequence": loss(importance_level="sequence", aggregation="sequence", eps_low=3e-4, eps_high=4e-4),
        "gspo_kl": loss(importance_level="sequence", aggregation="sequence", beta=0.04, ref_logp=ref),
        "adv_tokens": adv_tokens,
        "per_token_adv": float(grpo_loss(new, old, adv_tokens, mask, eps_low=0.2, eps_high=0.28)),
        "grad_new": _grad_new(logp_new=new, logp_old=old, advantages=adv, mask=mask),
        "grad_new_on_policy": _grad_new(logp_new=new, logp_old=new, advantages=adv, mask=mask),
    }

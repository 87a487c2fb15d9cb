"""Hidden cases of lab03 (PPO-RLHF): seeded ragged [4, 7] batches (right padding holds junk) and the answers of
the references in ``rlprep.algos.ppo`` on them, gradients included.

The lab's hidden tests write e.g. ``masked_mean({{ x }}, {{ mask }})`` and compare with ``{{ mm }}``. ``pad`` holds the
same batches with inf, NaN and -inf in the padding (and time-major copies, transposed back in the cell into
non-contiguous views): a learner's answers on them must equal the same learner's answers on the clean batches, and
those the reference's (``mm``, ``mm_grad``, ``pl``, ``pg``, ...), so a constant answer cannot pass as "unchanged".
``nan_valid`` puts a NaN at one valid token, for the ``validate`` checks.
"""

from __future__ import annotations

import torch

from rlprep.algos import ppo


def right_padded(lengths, T) -> torch.Tensor:
    return (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).double()  # (B, T)


def loss_and_grad(fn, wrt, **kw):
    """``fn(**kw)`` and its gradient wrt the arguments named in ``wrt``."""
    kw = {k: (v.clone().requires_grad_(True) if k in wrt else v) for k, v in kw.items()}
    out = fn(**kw)
    grads = torch.autograd.grad(out, [kw[k] for k in wrt])
    return float(out.detach()), dict(zip(wrt, grads))


def fixtures() -> dict:
    gen = torch.Generator().manual_seed(20261130)

    def randn(*shape, scale=1.0):
        return torch.round(torch.randn(*shape, generator=gen, dtype=torch.float64) * scale, decimals=3)

    B, T = 4, 7
    mask = right_padded([7, 3, 5, 1], T)  # (B, T): one full row, one single-token row
    x = randn(B, T) + 50.0 * (1 - mask)  # padding far from the valid values
    logp, ref_logp = randn(B, T, scale=0.5) - 1.0, randn(B, T, scale=0.5) - 1.0
    score = randn(B, scale=2.0)  # (B,)
    rewards, values = randn(B, T), randn(B, T)
    rewards2, values2 = randn(B, T), randn(B, T)
    mask2 = right_padded([2, 7, 4, 6], T)
    logp_old = randn(B, T, scale=0.5) - 1.0
    logp_new = logp_old + randn(B, T, scale=0.3)  # ratios both inside and outside [1 - eps, 1 + eps]
    adv = randn(B, T)
    v_old = randn(B, T)
    v_new = v_old + randn(B, T, scale=0.4)
    returns = randn(B, T)

    pl, pg = loss_and_grad(ppo.ppo_clip_loss, ("logp_new",), logp_new=logp_new, logp_old=logp_old, advantages=adv,
                           mask=mask, clip_eps=0.2)
    vl, vg = loss_and_grad(ppo.value_loss, ("values",), values=v_new, old_values=v_old, returns=returns, mask=mask,
                           clip_range=0.2)
    a1, r1 = ppo.compute_gae_tokens(rewards, values, mask, gamma=0.9, lam=0.8)
    a2, r2 = ppo.compute_gae_tokens(rewards2, values2, mask2)
    junk = torch.tensor([float("inf"), float("nan"), float("-inf")], dtype=torch.float64)
    padding = junk[torch.arange(B * T).reshape(B, T) % 3]  # (B, T) inf, NaN, -inf in turn
    x_pad = torch.where(mask > 0, x, padding)  # (B, T) the same valid values as x
    pad = {"x": x_pad, "x_time_major": x_pad.T.contiguous(), "mask_time_major": mask.T.contiguous(),
           "logp_new": torch.where(mask > 0, logp_new, torch.roll(padding, 1, dims=1)),
           "logp_old": torch.where(mask > 0, logp_old, padding),
           "values": torch.where(mask > 0, values, padding),  # compute_gae_tokens never reads padding values
           "v_new": torch.where(mask > 0, v_new, padding), "v_old": torch.where(mask > 0, v_old, padding),
           "returns": torch.where(mask > 0, returns, torch.roll(padding, 1, dims=1))}
    nan_valid = {"logp_new": logp_new.clone(), "v_new": v_new.clone()}
    nan_valid["logp_new"][1, 0] = nan_valid["v_new"][1, 0] = float("nan")  # row 1's first token is valid
    return {
        "pad": pad, "nan_valid": nan_valid,
        "mask": mask, "mask2": mask2, "x": x, "mm": float(ppo.masked_mean(x, mask)), "mm_grad": mask / mask.sum(),
        "mm2": float(ppo.masked_mean(x, mask2)),
        "score": score, "logp": logp, "ref_logp": ref_logp,
        "kl": ppo.kl_penalized_rewards(score, logp, ref_logp, mask, 0.1),
        "kl0": ppo.kl_penalized_rewards(score, logp, ref_logp, mask2, 0.0),
        "rewards": rewards, "values": values, "adv1": a1, "ret1": r1 * mask,
        "adv_lam0": ppo.compute_gae_tokens(rewards, values, mask, gamma=0.9, lam=0.0)[0],
        "rewards2": rewards2, "values2": values2, "adv2": a2, "ret2": r2 * mask2,
        "logp_old": logp_old, "logp_new": logp_new, "adv": adv, "pl": pl, "pg": pg["logp_new"],
        "pl1": float(ppo.ppo_clip_loss(logp_new, logp_old, adv, mask2, clip_eps=0.1)),
        "pl2": float(ppo.ppo_clip_loss(logp_new, logp_old, adv, mask2)),  # the default clip_eps
        "v_old": v_old, "v_new": v_new, "returns": returns, "vl": vl, "vg": vg["values"],
        "vl1": float(ppo.value_loss(v_new, v_old, returns, mask2, clip_range=0.1)),
        "vl2": float(ppo.value_loss(v_new, v_old, returns, mask2)),  # the default clip_range
    }

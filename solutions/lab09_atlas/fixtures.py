"""Hidden cases of lab09 (the algorithm atlas): continuous rewards in groups of 4 and of 5 for
``leave_one_out_advantages``; a ragged, off-policy [4, 6] batch with one token whose ratio shot up (e^2 = 7.4) and
one whose ratio fell (e^-1) for ``dr_grpo_loss`` and ``cispo_loss``; four preference pairs of summed log-probs with
their completion lengths for ``ipo_loss`` and ``simpo_loss``, and four float32 pairs whose SimPO margins reach
+-400 (where log(sigmoid(z)) is log 0 in float32).

The lab's hidden tests write e.g. ``dr_grpo_loss({{ pg.new }}, {{ pg.old }}, {{ pg.adv }}, {{ pg.mask }})`` and
compare with ``{{ dr.default }}``; gradients are taken with ``value_and_grad`` and compared with ``{{ dr.grad_new }}``.
"""

from __future__ import annotations

import torch

from rlprep.algos.pg_losses import cispo_loss, dr_grpo_loss, leave_one_out_advantages
from rlprep.algos.preference_losses import ipo_loss, simpo_loss


def _grad(fn, wrt: torch.Tensor, **kwargs) -> torch.Tensor:
    """d fn(...) / d wrt, with ``wrt`` passed as the keyword argument named in kwargs['_name']."""
    name = kwargs.pop("_name")
    leaf = wrt.detach().clone().requires_grad_(True)
    fn(**{name: leaf}, **kwargs).backward()
    return leaf.grad


def fixtures() -> dict:
    gen = torch.Generator().manual_seed(20261209)

    def rnd(*shape, scale=1.0, shift=0.0):
        return torch.round((shift + scale * torch.randn(*shape, generator=gen, dtype=torch.float64)) * 1000) / 1000

    rewards4, rewards5 = rnd(12), rnd(10)  # (3*4,), (2*5,): consecutive groups, continuous rewards
    B, T = 4, 6
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]],
                        dtype=torch.float64)  # (B, T) ragged, every row has >= 1 valid token
    old = rnd(B, T, scale=0.8, shift=-1.5)  # (B, T) sampler log-probs
    new = torch.round((old + 0.3 * torch.randn(B, T, generator=gen, dtype=torch.float64)) * 1000) / 1000
    new[0, 1], new[1, 2] = old[0, 1] + 2.0, old[1, 2] - 1.0  # a rare token pushed far up, one pushed down
    torch.randn(B, T, generator=gen, dtype=torch.float64)  # once a reference's log-probs: later draws keep their values
    adv = torch.tensor([1.2, -0.8, 0.5, -1.5], dtype=torch.float64)  # (B,) row 0 (the rare token) positive
    pg = dict(logp_old=old, advantages=adv, mask=mask)

    pc, pr = rnd(4, scale=4.0, shift=-20.0), rnd(4, scale=4.0, shift=-22.0)  # (B,) summed log-probs
    rc, rr = torch.round((pc + rnd(4)) * 1000) / 1000, torch.round((pr + rnd(4)) * 1000) / 1000
    lc, lr = torch.tensor([5, 12, 8, 20]), torch.tensor([9, 4, 15, 7])  # (B,) completion lengths
    ipo_args = dict(policy_rejected_logps=pr, ref_chosen_logps=rc, ref_rejected_logps=rr, chosen_lengths=lc,
                    rejected_lengths=lr)
    simpo_args = dict(policy_rejected_logps=pr, chosen_lengths=lc, rejected_lengths=lr)
    # float32 pairs, average log-probs [-200, -2, -100, -0.5] vs [-2, -210, -1, -120]: z = -396.5, 415.5, -198.5, 238.5
    big = {"pc": torch.tensor([-400.0, -2.0, -300.0, -1.0]), "pr": torch.tensor([-2.0, -420.0, -1.0, -360.0]),
           "lc": torch.tensor([2, 1, 3, 2]), "lr": torch.tensor([1, 2, 1, 3])}
    big_args = dict(policy_rejected_logps=big["pr"].double(), chosen_lengths=big["lc"], rejected_lengths=big["lr"])
    return {
        "rloo": {"rewards4": rewards4, "rewards5": rewards5, "adv4": leave_one_out_advantages(rewards4, 4),
                 "adv5": leave_one_out_advantages(rewards5, 5)},
        "pg": {"new": new, "old": old, "adv": adv, "mask": mask},
        "dr": {"default": float(dr_grpo_loss(new, old, adv, mask)),
               "max_length_10": float(dr_grpo_loss(new, old, adv, mask, max_length=10)),
               "eps_03": float(dr_grpo_loss(new, old, adv, mask, eps_low=0.3, eps_high=0.3)),
               "clip_higher": float(dr_grpo_loss(new, old, adv, mask, eps_low=0.2, eps_high=0.28)),
               "grad_new": _grad(dr_grpo_loss, new, _name="logp_new", **pg)},
        "cispo": {"default": float(cispo_loss(new, old, adv, mask)),
                  "tight": float(cispo_loss(new, old, adv, mask, eps_high=0.28, eps_low=0.2)),
                  "grad_new": _grad(cispo_loss, new, _name="logp_new", **pg),
                  "grad_new_tight": _grad(cispo_loss, new, _name="logp_new", eps_high=0.28, eps_low=0.2, **pg),
                  # eps_low=None with eps_high < 1: the ratio e^-1 of row 1 stays below 1 - eps_high, unbounded
                  "high_only": float(cispo_loss(new, old, adv, mask, eps_high=0.28)),
                  "grad_new_high_only": _grad(cispo_loss, new, _name="logp_new", eps_high=0.28, **pg)},
        "big": big,
        "pairs": {"pc": pc, "pr": pr, "rc": rc, "rr": rr, "lc": lc, "lr": lr},
        "ipo": {"beta_05": float(ipo_loss(pc, **ipo_args, beta=0.5)), "default": float(ipo_loss(pc, **ipo_args)),
                "grad_pc": _grad(ipo_loss, pc, _name="policy_chosen_logps", beta=0.5, **ipo_args)},
        "simpo": {"default": float(simpo_loss(pc, **simpo_args)),
                  "b25_g1": float(simpo_loss(pc, **simpo_args, beta=2.5, gamma=1.0)),
                  "grad_pc": _grad(simpo_loss, pc, _name="policy_chosen_logps", beta=2.5, gamma=1.0, **simpo_args),
                  "big": float(simpo_loss(big["pc"].double(), **big_args)),
                  "grad_big": _grad(simpo_loss, big["pc"].double(), _name="policy_chosen_logps", **big_args)},
    }

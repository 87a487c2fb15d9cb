"""Hidden cases of lab02 (Bradley-Terry): seeded reward pairs and the reference ``bradley_terry_loss`` on them.

Each case is ``{chosen, rejected, loss}`` (``batch`` adds the gradients ``grad_chosen``, ``grad_rejected``); the
lab's hidden tests write ``bradley_terry_loss({{ batch.chosen }}, {{ batch.rejected }})`` and compare with
``{{ batch.loss }}``.
"""

from __future__ import annotations

import torch

from rlprep.algos.reward_model import bradley_terry_loss


def case(chosen: torch.Tensor, rejected: torch.Tensor) -> dict:
    """The reference loss on one batch of pairs, and its gradient wrt both rewards."""
    c, r = chosen.clone().requires_grad_(True), rejected.clone().requires_grad_(True)
    loss = bradley_terry_loss(c, r)
    loss.backward()
    return {"chosen": chosen, "rejected": rejected, "loss": float(loss.detach()),
            "grad_chosen": c.grad, "grad_rejected": r.grad}


def fixtures() -> dict:
    g = torch.Generator().manual_seed(20261130)
    c = torch.round(torch.randn(6, generator=g, dtype=torch.float64) * 2, decimals=3)  # (6,)
    r = torch.round(torch.randn(6, generator=g, dtype=torch.float64) * 2, decimals=3)  # (6,)
    # one large margin among small ones: the mean of the losses differs from the loss of the mean margin
    mixed_c = torch.tensor([4.0, -1.5, 0.25, 2.0], dtype=torch.float64)
    mixed_r = torch.tensor([-3.0, 1.0, 0.0, 2.5], dtype=torch.float64)
    big_c = torch.tensor([-300.0, 100.0, 40.0])  # float32: sigmoid underflows to 0 at -300
    big_r = torch.tensor([0.0, -100.0, 45.0])
    return {"batch": case(c, r), "mixed": case(mixed_c, mixed_r), "big": case(big_c, big_r)}

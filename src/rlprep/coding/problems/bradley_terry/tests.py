"""Hidden properties of bradley_terry_loss, compared with TRL's RewardTrainer.compute_loss."""

import math

import torch

from rlprep.coding import trl_reference
from rlprep.coding.testkit import Properties, close, raises, randn, vg

P = Properties()


def _pair(size, salt, scale=None):
    s = scale or size["scale"]
    return randn(size, size["B"], salt=salt, scale=s), randn(size, size["B"], salt=salt + 1, scale=s)


def examples(size):
    return [dict(chosen_rewards=torch.tensor([1.0, 0.0]), rejected_rewards=torch.tensor([0.0, 0.0])),
            dict(chosen_rewards=torch.tensor([2.0, -1.0, 0.5]), rejected_rewards=torch.tensor([1.0, 1.0, 0.5]))]


@P.prop("matches TRL's RewardTrainer loss", library="trl.RewardTrainer")
def _(f, ref, size):
    c, r = _pair(size, 1)
    close(f(chosen_rewards=c, rejected_rewards=r), trl_reference.reward_model_loss(c, r), rtol=1e-9, atol=1e-12)


@P.prop("is ln 2 for equal rewards and depends only on the difference")
def _(f, ref, size):
    c, _ = _pair(size, 2)
    close(f(chosen_rewards=c, rejected_rewards=c.clone()), math.log(2.0), rtol=1e-12, atol=1e-12)
    c, r = _pair(size, 3)
    close(f(chosen_rewards=c + 7.0, rejected_rewards=r + 7.0), ref(c, r), rtol=1e-9, atol=1e-12)


@P.prop("has the right gradient: -(1 - sigmoid(margin)) / B for chosen, the opposite for rejected")
def _(f, ref, size):
    c, r = _pair(size, 4)
    value, grads = vg(f, ["chosen_rewards", "rejected_rewards"], chosen_rewards=c, rejected_rewards=r)
    g = -(1 - torch.sigmoid(c - r)) / size["B"]
    close(value, ref(c, r), rtol=1e-9, atol=1e-12)
    close(grads, {"chosen_rewards": g, "rejected_rewards": -g}, rtol=1e-9, atol=1e-12)


@P.prop("stays finite and exact for margins of hundreds (float32)")
def _(f, ref, size):
    c = torch.tensor([300.0, -400.0, 5.0, -50.0, 1000.0])
    r = torch.zeros(5)
    close(f(chosen_rewards=c, rejected_rewards=r), trl_reference.reward_model_loss(c.double(), r.double()), rtol=1e-5,
          atol=1e-4)


@P.prop("raises ValueError for [B, 1] or mismatched inputs and an empty batch; scores a valid one")
def _(f, ref, size):
    c, r = _pair(size, 5)
    raises(ValueError, f, chosen_rewards=c[:, None], rejected_rewards=r[:, None])
    raises(ValueError, f, chosen_rewards=c, rejected_rewards=r[:-1])
    raises(ValueError, f, chosen_rewards=c[:0], rejected_rewards=r[:0])
    close(f(chosen_rewards=c, rejected_rewards=r), ref(c, r), rtol=1e-9, atol=1e-12)

"""Hidden properties of group_advantages, compared with TRL's GRPOTrainer advantage computation."""

import torch

from rlprep.coding import trl_reference
from rlprep.coding.testkit import Properties, close, expect, raises, rand, randint

P = Properties()


def _rewards(size, salt, binary=False):
    n = size["N"] * size["G"]
    return randint(size, 0, 2, n, salt=salt).double() if binary else rand(size, n, salt=salt) * 2


def examples(size):
    return [dict(rewards=torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0]), group_size=3),
            dict(rewards=torch.tensor([0.5, 1.0, 0.0, 0.5]), group_size=2, scale="none")]


@P.prop("matches TRL's GRPO advantages for scale group, batch and none", library="trl.GRPOTrainer")
def _(f, ref, size):
    r = _rewards(size, 1)
    for scale in ("group", "batch", "none"):
        close(f(rewards=r, group_size=size["G"], scale=scale), trl_reference.group_advantages(r, size["G"], scale),
              rtol=1e-6, atol=1e-6)


@P.prop("a tied group gets advantage 0, not NaN")
def _(f, ref, size):
    r = _rewards(size, 2, binary=True)
    r[: size["G"]] = 1.0
    out = f(rewards=r, group_size=size["G"])
    close(out, ref(r, size["G"]), rtol=1e-9, atol=1e-12)
    expect(bool((torch.as_tensor(out)[: size["G"]] == 0).all()), "the tied group must be exactly 0")


@P.prop("uses Bessel's correction and adds eps to the std")
def _(f, ref, size):
    r = _rewards(size, 3)
    for eps in (1e-4, 0.5):
        close(f(rewards=r, group_size=size["G"], eps=eps), ref(r, size["G"], eps=eps), rtol=1e-9, atol=1e-12)


@P.prop("centres each group on its own mean (groups are consecutive)")
def _(f, ref, size):
    r = _rewards(size, 4) + torch.arange(size["N"]).repeat_interleave(size["G"]) * 10.0  # groups far apart
    close(f(rewards=r, group_size=size["G"], scale="none"), ref(r, size["G"], scale="none"), rtol=1e-9, atol=1e-12)
    close(f(rewards=r, group_size=size["G"], scale="batch"), ref(r, size["G"], scale="batch"), rtol=1e-9, atol=1e-12)


@P.prop("raises ValueError for a bad group size, NaN rewards or an unknown scale; scores a valid batch")
def _(f, ref, size):
    r = _rewards(size, 5)
    raises(ValueError, f, rewards=r, group_size=1)
    raises(ValueError, f, rewards=r[:-1], group_size=size["G"])
    raises(ValueError, f, rewards=torch.full_like(r, float("nan")), group_size=size["G"])
    raises(ValueError, f, rewards=r, group_size=size["G"], scale="median")
    close(f(rewards=r, group_size=size["G"]), ref(r, size["G"]), rtol=1e-9, atol=1e-12)

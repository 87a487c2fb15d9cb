"""Hidden properties of dpo_loss, compared with TRL's DPOTrainer (sigmoid loss)."""

import math

import torch

from rlprep.coding import trl_reference
from rlprep.coding.testkit import Properties, close, expect, raises, randn, vg

P = Properties()
NAMES = ("policy_chosen_logps", "policy_rejected_logps", "ref_chosen_logps", "ref_rejected_logps")


def _logps(size, salt, scale=5.0, B=None):
    B = B or size["B"]
    return {n: -randn(size, B, salt=salt + i).abs() * scale for i, n in enumerate(NAMES)}


def examples(size):
    same = torch.tensor([-10.0, -4.0])
    return [dict(policy_chosen_logps=same, policy_rejected_logps=same, ref_chosen_logps=same,
                 ref_rejected_logps=same, beta=0.1),
            dict(policy_chosen_logps=torch.tensor([-5.0, -9.0, -2.0]), policy_rejected_logps=torch.tensor([-7.0, -6.0, -8.0]),
                 ref_chosen_logps=torch.tensor([-6.0, -8.0, -3.0]), ref_rejected_logps=torch.tensor([-6.5, -7.0, -7.5]),
                 beta=size["beta"])]


@P.prop("matches TRL's DPOTrainer sigmoid loss", library="trl.DPOTrainer")
def _(f, ref, size):
    x = _logps(size, 1)
    close(f(**x, beta=size["beta"]), trl_reference.dpo_sigmoid_loss(*x.values(), beta=size["beta"]), rtol=1e-9,
          atol=1e-12)


@P.prop("is ln 2 when the policy equals the reference")
def _(f, ref, size):
    x = _logps(size, 2)
    x["ref_chosen_logps"], x["ref_rejected_logps"] = x["policy_chosen_logps"], x["policy_rejected_logps"]
    close(f(**x, beta=size["beta"]), math.log(2.0), rtol=1e-12, atol=1e-12)


@P.prop("sends no gradient to the reference log-probs and the right one to the policy")
def _(f, ref, size):
    x = _logps(size, 3)
    value, grads = vg(f, NAMES, **x, beta=size["beta"])
    _, want = vg(ref, NAMES, **x, beta=size["beta"])
    close(value, ref(**x, beta=size["beta"]), rtol=1e-9, atol=1e-12)
    close(grads, want, rtol=1e-9, atol=1e-12)
    expect(float(torch.as_tensor(grads["policy_chosen_logps"]).max()) < 0, "the loss must raise log pi(y_w)")


@P.prop("stays finite and exact for margins in the thousands (float32)")
def _(f, ref, size):
    z = torch.tensor([-2000.0, -150.0, 0.5, 40.0, 1500.0], dtype=torch.float64)  # beta * margin per pair
    x = _logps(size, 4, B=len(z))
    x["policy_chosen_logps"] = x["ref_chosen_logps"] + x["policy_rejected_logps"] - x["ref_rejected_logps"] \
        + z / size["beta"]
    out = f(**{k: v.float() for k, v in x.items()}, beta=size["beta"])
    close(out, trl_reference.dpo_sigmoid_loss(*x.values(), beta=size["beta"]), rtol=1e-5, atol=1e-3)


@P.prop("raises ValueError for beta <= 0 or mismatched shapes, and scores a valid batch")
def _(f, ref, size):
    x = _logps(size, 5)
    raises(ValueError, f, **x, beta=0.0)
    bad = dict(x, ref_rejected_logps=x["ref_rejected_logps"][:-1])
    raises(ValueError, f, **bad, beta=size["beta"])
    close(f(**x, beta=size["beta"]), ref(**x, beta=size["beta"]), rtol=1e-9, atol=1e-12)

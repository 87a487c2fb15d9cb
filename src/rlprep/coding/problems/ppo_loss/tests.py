"""Hidden properties of ppo_loss: each term against its formula written apart, gradients, padding."""

import torch

from rlprep.coding.testkit import Properties, close, expect, raises, randn, vg

P = Properties()
NAMES = ("logp_new", "logp_old", "advantages", "values", "old_values", "returns", "entropy")


def _batch(size, salt, spread=0.4, pad=True):
    B, T = size["B"], size["T"]
    x = {n: randn(size, B, T, salt=salt + i) for i, n in enumerate(NAMES)}
    x["logp_old"] = -x["logp_old"].abs() - 0.1
    x["logp_new"] = x["logp_old"] + spread * x["logp_new"]
    x["entropy"] = x["entropy"].abs()
    mask = torch.ones(B, T)
    if pad:
        for b in range(B):
            mask[b, T - b:] = 0  # right padding of different lengths
    return x, mask


def _hyper(size):
    return dict(clip_eps=size["eps"], vf_clip=size["vf"], vf_coef=size["vf_coef"], ent_coef=size["ent_coef"])


def _by_hand(x, mask, clip_eps, vf_clip, vf_coef, ent_coef):
    m = mask.bool()
    ratio = torch.exp(x["logp_new"][m] - x["logp_old"][m])
    a = x["advantages"][m]
    policy = -torch.min(ratio * a, ratio.clamp(1 - clip_eps, 1 + clip_eps) * a).mean()
    v, vo, r = x["values"][m], x["old_values"][m], x["returns"][m]
    vc = vo + (v - vo).clamp(-vf_clip, vf_clip)
    value = 0.5 * torch.max((v - r) ** 2, (vc - r) ** 2).mean()
    return policy + vf_coef * value - ent_coef * x["entropy"][m].mean()


def examples(size):
    one = torch.tensor([[0.0, -1.0]])
    return [dict(logp_new=one, logp_old=one, advantages=torch.tensor([[1.0, -1.0]]), values=torch.tensor([[0.5, 0.0]]),
                 old_values=torch.tensor([[0.5, 0.0]]), returns=torch.tensor([[1.0, 0.0]]),
                 entropy=torch.tensor([[1.0, 2.0]]), mask=torch.tensor([[1, 1]])),
            dict(logp_new=torch.tensor([[-0.5, -1.0]]), logp_old=one, advantages=torch.tensor([[1.0, 2.0]]),
                 values=torch.tensor([[1.0, 0.0]]), old_values=torch.tensor([[0.5, 0.0]]),
                 returns=torch.tensor([[1.0, 0.0]]), entropy=torch.tensor([[1.0, 0.0]]), mask=torch.tensor([[1, 0]]),
                 clip_eps=size["eps"])]


@P.prop("equals the three terms written apart, on a padded batch")
def _(f, ref, size):
    x, mask = _batch(size, 1)
    close(f(**x, mask=mask, **_hyper(size)), _by_hand(x, mask, **_hyper(size)), rtol=1e-9, atol=1e-12)


@P.prop("clips the ratio on a far off-policy batch")
def _(f, ref, size):
    x, mask = _batch(size, 10, spread=2.0, pad=False)
    hyper = dict(_hyper(size), vf_coef=0.0, ent_coef=0.0)
    close(f(**x, mask=mask, **hyper), _by_hand(x, mask, **hyper), rtol=1e-9, atol=1e-12)


@P.prop("clips the value prediction around the old value")
def _(f, ref, size):
    x, mask = _batch(size, 20)
    x["values"] = x["old_values"] + 3 * x["values"]  # far from the old values: the clip binds
    hyper = dict(_hyper(size), vf_coef=1.0, ent_coef=0.0)
    x["logp_new"] = x["logp_old"].clone()
    x["advantages"] = torch.zeros_like(x["advantages"])
    close(f(**x, mask=mask, **hyper), _by_hand(x, mask, **hyper), rtol=1e-9, atol=1e-12)


@P.prop("the gradient reaches logp_new, values and entropy, and nothing else")
def _(f, ref, size):
    x, mask = _batch(size, 30, spread=1.0)
    value, grads = vg(f, NAMES, **x, mask=mask, **_hyper(size))
    _, want = vg(ref, NAMES, **x, mask=mask, **_hyper(size))
    close(value, _by_hand(x, mask, **_hyper(size)), rtol=1e-9, atol=1e-12)
    close(grads, want, rtol=1e-7, atol=1e-10)


@P.prop("padding holding -inf or NaN changes neither the loss nor the gradient")
def _(f, ref, size):
    x, mask = _batch(size, 40)
    clean = _by_hand(x, mask, **_hyper(size))
    for n in ("logp_new", "logp_old"):
        x[n] = torch.where(mask.bool(), x[n], torch.full_like(x[n], float("-inf")))
    x["values"] = torch.where(mask.bool(), x["values"], torch.full_like(x["values"], float("nan")))
    value, grads = vg(f, ["logp_new", "values"], **x, mask=mask, **_hyper(size))
    close(value, clean, rtol=1e-9, atol=1e-12)
    expect(all(bool(torch.isfinite(torch.as_tensor(g)).all()) for g in grads.values()), "the gradient must be finite")


@P.prop("raises ValueError for an empty mask or mismatched shapes, and scores a valid batch")
def _(f, ref, size):
    x, mask = _batch(size, 50)
    raises(ValueError, f, **x, mask=torch.zeros_like(mask), **_hyper(size))
    raises(ValueError, f, **dict(x, returns=x["returns"][:, :-1]), mask=mask, **_hyper(size))
    close(f(**x, mask=mask, **_hyper(size)), _by_hand(x, mask, **_hyper(size)), rtol=1e-9, atol=1e-12)

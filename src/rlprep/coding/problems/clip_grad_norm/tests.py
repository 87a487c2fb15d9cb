"""Hidden properties of clip_grad_norm, compared with torch.nn.utils.clip_grad_norm_."""

import torch

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def _grads(size, salt, scale=3.0, shapes=None):
    return [randn(size, *s, salt=salt + i, scale=scale) for i, s in enumerate(shapes or size["shapes"])]


def _torch(grads, max_norm, norm_type=2.0):
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
    return [p.grad for p in params], float(total)


def _run(f, grads, max_norm, norm_type=2.0):
    out = f(grads=grads, max_norm=max_norm, norm_type=norm_type)
    expect(isinstance(out, (tuple, list)) and len(out) == 2, "expected (clipped grads, total norm)")
    return list(out[0]), float(out[1])


def examples(size):
    return [dict(grads=[torch.tensor([3.0, 4.0]), torch.tensor([[0.0]])], max_norm=1.0),
            dict(grads=[torch.tensor([0.3, 0.4])], max_norm=size["max_norm"])]


@P.prop("matches clip_grad_norm_ when the clip binds", library="torch.nn.utils.clip_grad_norm_")
def _(f, ref, size):
    grads = _grads(size, 1)
    close(_run(f, grads, size["max_norm"]), _torch(grads, size["max_norm"]), rtol=1e-9, atol=1e-12)


@P.prop("leaves gradients below max_norm unchanged and still reports their norm")
def _(f, ref, size):
    grads = _grads(size, 2, scale=1e-3)
    close(_run(f, grads, size["max_norm"]), _torch(grads, size["max_norm"]), rtol=1e-12, atol=1e-15)


@P.prop("scales every tensor by one global factor (direction kept)")
def _(f, ref, size):
    grads = _grads(size, 3, shapes=[[4], [4]])
    grads[1] = grads[1] * 100.0  # one large tensor, one small: per-tensor clipping would change the direction
    close(_run(f, grads, size["max_norm"]), _torch(grads, size["max_norm"]), rtol=1e-9, atol=1e-12)


@P.prop("supports norm_type = inf and 1", library="torch.nn.utils.clip_grad_norm_")
def _(f, ref, size):
    grads = _grads(size, 4)
    for norm_type in (float("inf"), 1.0):
        close(_run(f, grads, size["max_norm"], norm_type), _torch(grads, size["max_norm"], norm_type), rtol=1e-9,
              atol=1e-12)


@P.prop("keeps the 1e-6 in the factor (an exact-norm case)")
def _(f, ref, size):
    g = torch.tensor([3.0, 4.0], dtype=torch.float64)  # norm 5 exactly
    close(_run(f, [g], 5.0), _torch([g], 5.0), rtol=1e-15, atol=1e-15)
    close(_run(f, [g], 2.5), _torch([g], 2.5), rtol=1e-12, atol=1e-15)

"""Hidden properties of softmax (compared with torch.nn.functional.softmax and the reference)."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def _dtype(size):
    return getattr(torch, size.get("dtype", "float32"))


def examples(size):
    return [dict(x=torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, float("-inf")]]), dim=-1),
            dict(x=randn(size, *size["shape"], scale=2.0).round(decimals=1).float(), dim=size["dim"])]


@P.prop("matches torch.nn.functional.softmax on random logits along dim", library="torch.nn.functional.softmax")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=1, scale=3.0)
    close(f(x=x, dim=size["dim"]), F.softmax(x, dim=size["dim"]), rtol=1e-9, atol=1e-12)


@P.prop("stays finite and exact for huge logits (no overflow)")
def _(f, ref, size):
    x = (randn(size, *size["shape"], salt=2) * size["big"]).to(_dtype(size))
    out = f(x=x, dim=size["dim"])
    close(out, F.softmax(x.double(), dim=size["dim"]), rtol=1e-3, atol=1e-3)


@P.prop("normalises along the given dim, not another one")
def _(f, ref, size):
    x = randn(size, 3, 4, 5, salt=3, scale=2.0)
    for dim in (0, 1, -1):
        close(f(x=x, dim=dim), F.softmax(x, dim=dim), rtol=1e-9, atol=1e-12)


@P.prop("gives exactly 0 to -inf logits (masked positions)")
def _(f, ref, size):
    x = randn(size, 4, 6, salt=4)
    x[:, ::2] = float("-inf")
    out = f(x=x, dim=-1)
    close(out, ref(x, -1), rtol=1e-9, atol=1e-12)
    expect(bool((torch.as_tensor(out)[:, ::2] == 0).all()), "masked positions must be exactly 0")


@P.prop("returns the input's dtype (float32 in, float32 out) with the right values")
def _(f, ref, size):
    x = randn(size, 2, 7, salt=5, dtype=torch.float32)
    out = f(x=x, dim=-1)
    expect(isinstance(out, torch.Tensor) and out.dtype == torch.float32, "expected a float32 tensor")
    close(out, F.softmax(x, dim=-1))

"""Hidden properties of layer_norm, compared with torch.nn.functional.layer_norm."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _affine(size, d, salt):
    return 1.0 + 0.3 * randn(size, d, salt=salt), 0.5 * randn(size, d, salt=salt + 1)


def examples(size):
    return [dict(x=torch.tensor([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])),
            dict(x=randn(size, *size["shape"]).round(decimals=1), weight=torch.full((size["shape"][-1],), 2.0),
                 bias=torch.ones(size["shape"][-1]))]


@P.prop("matches F.layer_norm with weight and bias", library="torch.nn.functional.layer_norm")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=1, scale=2.0)
    w, b = _affine(size, x.shape[-1], 2)
    close(f(x=x, weight=w, bias=b), F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), rtol=1e-9, atol=1e-12)


@P.prop("uses the biased variance (divides by D)")
def _(f, ref, size):
    x = randn(size, 4, 2, salt=3)
    close(f(x=x), F.layer_norm(x, (2,)), rtol=1e-9, atol=1e-12)


@P.prop("adds eps inside the square root (near-constant and constant rows)")
def _(f, ref, size):
    x = 1e-3 * randn(size, 3, size["shape"][-1], salt=4)
    x[0] = 2.5
    w, b = _affine(size, x.shape[-1], 5)
    for eps in (1e-5, 1e-2):
        close(f(x=x, weight=w, bias=b, eps=eps), F.layer_norm(x, (x.shape[-1],), w, b, eps), rtol=1e-9, atol=1e-12)


@P.prop("weight and bias default to no scale and no shift")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=6, scale=3.0)
    close(f(x=x), F.layer_norm(x, (x.shape[-1],)), rtol=1e-9, atol=1e-12)


@P.prop("stays accurate in float32 with a large common offset")
def _(f, ref, size):
    x = (randn(size, *size["shape"], salt=7) + size["offset"]).float()
    w, b = _affine(size, x.shape[-1], 8)
    close(f(x=x, weight=w.float(), bias=b.float()), F.layer_norm(x.double(), (x.shape[-1],), w, b), rtol=1e-2,
          atol=2e-2)


@P.prop("normalises each token of a [B, T, D] batch over D only")
def _(f, ref, size):
    x = randn(size, 2, 3, size["shape"][-1], salt=9, scale=2.0)
    w, b = _affine(size, x.shape[-1], 10)
    close(f(x=x, weight=w, bias=b), F.layer_norm(x, (x.shape[-1],), w, b), rtol=1e-9, atol=1e-12)

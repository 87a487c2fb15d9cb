"""Hidden properties of log_softmax, compared with torch.nn.functional.log_softmax."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def examples(size):
    return [dict(x=torch.tensor([[0.0, -1000.0], [1.0, 1.0]])),
            dict(x=randn(size, *size["shape"], scale=2.0).round(decimals=1), dim=size["dim"])]


@P.prop("matches F.log_softmax on random logits along dim", library="torch.nn.functional.log_softmax")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=1, scale=3.0)
    close(f(x=x, dim=size["dim"]), F.log_softmax(x, dim=size["dim"]), rtol=1e-12, atol=1e-12)


@P.prop("stays exact where softmax underflows (logits thousands apart, float32)")
def _(f, ref, size):
    x = (randn(size, *size["shape"], salt=2) * size["big"]).float()
    close(f(x=x, dim=size["dim"]), F.log_softmax(x.double(), dim=size["dim"]), rtol=1e-6, atol=1e-2)


@P.prop("keeps -inf logits at -inf and the rest exact")
def _(f, ref, size):
    x = randn(size, 4, 5, salt=3)
    x[:, 1] = float("-inf")
    close(f(x=x, dim=-1), F.log_softmax(x, dim=-1), rtol=1e-12, atol=1e-12)


@P.prop("normalises along the given dim: exp sums to 1 there")
def _(f, ref, size):
    x = randn(size, 3, 4, 5, salt=4, scale=2.0)
    for dim in (0, 1, -1):
        out = torch.as_tensor(f(x=x, dim=dim), dtype=torch.float64)
        close(out, F.log_softmax(x, dim=dim), rtol=1e-12, atol=1e-12)
        expect(bool(torch.allclose(out.exp().sum(dim), torch.ones((), dtype=torch.float64), atol=1e-12)), "exp must sum to 1 along dim")

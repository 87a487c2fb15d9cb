"""Hidden properties of logsumexp, compared with torch.logsumexp."""

import torch

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def examples(size):
    return [dict(x=torch.tensor([[0.0, 1.0, 2.0], [1000.0, 1000.0, float("-inf")]])),
            dict(x=randn(size, *size["shape"], scale=3.0).round(decimals=1), dim=size["dim"], keepdim=True)]


@P.prop("matches torch.logsumexp on random inputs along dim", library="torch.logsumexp")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=1, scale=3.0)
    for keepdim in (False, True):
        close(f(x=x, dim=size["dim"], keepdim=keepdim), torch.logsumexp(x, dim=size["dim"], keepdim=keepdim),
              rtol=1e-12, atol=1e-12)


@P.prop("stays exact for huge positive and negative inputs (float32)")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=2) + size["big"]
    for sign in (1.0, -1.0):
        xs = (sign * x).float()
        close(f(x=xs, dim=-1), torch.logsumexp(xs.double(), dim=-1), rtol=1e-6, atol=1e-3)
    x[0] -= 3 * size["big"]  # rows on very different scales: each needs its own shift
    close(f(x=x, dim=-1), torch.logsumexp(x, dim=-1), rtol=1e-12, atol=1e-9)


@P.prop("a fully masked slice gives -inf, the others stay exact")
def _(f, ref, size):
    x = randn(size, 4, 5, salt=3)
    x[1] = float("-inf")
    x[2, :3] = float("-inf")
    out = f(x=x, dim=-1)
    close(out, torch.logsumexp(x, dim=-1), rtol=1e-12, atol=1e-12)
    expect(float(torch.as_tensor(out)[1]) == float("-inf"), "the fully masked row must be -inf")


@P.prop("reduces the given dim, with and without keepdim")
def _(f, ref, size):
    x = randn(size, 3, 4, 5, salt=4)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            close(f(x=x, dim=dim, keepdim=keepdim), torch.logsumexp(x, dim=dim, keepdim=keepdim), rtol=1e-12,
                  atol=1e-12)


@P.prop("returns float32 for float32 input, with the right values and shape")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=5, scale=2.0, dtype=torch.float32)
    out = f(x=x, dim=size["dim"], keepdim=True)
    expect(isinstance(out, torch.Tensor) and out.dtype == torch.float32, "expected a float32 tensor")
    close(out, torch.logsumexp(x, dim=size["dim"], keepdim=True))

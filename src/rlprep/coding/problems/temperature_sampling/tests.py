"""Hidden properties of sample_with_temperature: inverse CDF on TemperatureLogitsWarper's distribution."""

import torch
from transformers import TemperatureLogitsWarper

from rlprep.coding.testkit import Properties, close, raises, rand, randn

P = Properties()


def _inverse_cdf(probs, u):
    cdf = probs.cumsum(-1)
    return torch.stack([torch.searchsorted(cdf[b], u[b:b + 1], right=True)[0] for b in range(len(u))]).clamp(
        max=probs.shape[-1] - 1)


def examples(size):
    logits = torch.log(torch.tensor([[0.1, 0.6, 0.3], [0.1, 0.6, 0.3]]))
    return [dict(logits=logits, temperature=1.0, u=torch.tensor([0.05, 0.95])),
            dict(logits=logits, temperature=0.0, u=torch.tensor([0.5, 0.99]))]


@P.prop("samples by inverse CDF from TemperatureLogitsWarper's distribution",
        library="transformers.TemperatureLogitsWarper")
def _(f, ref, size):
    logits, u = randn(size, size["B"], size["V"], salt=1, scale=2.0), rand(size, size["B"], salt=2)
    probs = torch.softmax(TemperatureLogitsWarper(float(size["T"]))(None, logits), dim=-1)
    close(f(logits=logits, temperature=size["T"], u=u), _inverse_cdf(probs, u))


@P.prop("a grid of uniforms reproduces the distribution exactly")
def _(f, ref, size):
    logits = randn(size, 1, size["V"], salt=3, scale=1.5)
    n = 400
    u = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    tokens = torch.as_tensor(f(logits=logits.expand(n, -1).clone(), temperature=size["T"], u=u))
    counts = torch.bincount(tokens, minlength=size["V"]).double()
    close(counts / n, torch.softmax(logits[0] / size["T"], -1), rtol=0, atol=1.0 / n + 1e-12)


@P.prop("temperature 0 is greedy (argmax)")
def _(f, ref, size):
    logits, u = randn(size, size["B"], size["V"], salt=4), rand(size, size["B"], salt=5)
    close(f(logits=logits, temperature=0.0, u=u), logits.argmax(-1))


@P.prop("never returns a banned (-inf) token, even for u close to 1")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=6)
    logits[:, -2:] = float("-inf")
    logits[:, 0] = float("-inf")
    u = torch.full((size["B"],), 1 - 1e-12, dtype=torch.float64)
    close(f(logits=logits, temperature=size["T"], u=u), ref(logits, size["T"], u))
    flat = torch.zeros(1, 11, dtype=torch.float64)  # ten tokens of 0.1: their cdf rounds to 0.9999999999999999
    flat[0, -1] = float("-inf")
    close(f(logits=flat, temperature=1.0, u=torch.tensor([0.9999999999999999], dtype=torch.float64)),
          torch.tensor([9]))
    u = rand(size, size["B"], salt=7)
    close(f(logits=logits, temperature=size["T"], u=u), ref(logits, size["T"], u))


@P.prop("raises ValueError for a negative temperature, and samples for a valid one")
def _(f, ref, size):
    logits, u = randn(size, 2, size["V"], salt=8), rand(size, 2, salt=9)
    raises(ValueError, f, logits=logits, temperature=-0.5, u=u)
    close(f(logits=logits, temperature=size["T"], u=u), ref(logits, size["T"], u))

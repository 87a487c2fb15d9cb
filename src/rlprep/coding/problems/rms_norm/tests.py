"""Hidden properties of rms_norm, compared with torch.nn.functional.rms_norm and transformers' LlamaRMSNorm."""

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import LlamaRMSNorm

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def examples(size):
    return [dict(x=torch.tensor([[3.0, 4.0], [0.0, 0.0]])),
            dict(x=randn(size, 2, 4).round(decimals=1), weight=torch.tensor([1.0, 2.0, 0.5, 1.0]), eps=size["eps"])]


@P.prop("matches F.rms_norm with a weight", library="torch.nn.functional.rms_norm")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=1, scale=2.0)
    w = 1 + 0.2 * randn(size, x.shape[-1], salt=2)
    close(f(x=x, weight=w, eps=size["eps"]), F.rms_norm(x, (x.shape[-1],), w, size["eps"]), rtol=1e-9, atol=1e-12)


@P.prop("matches transformers' LlamaRMSNorm (float32)", library="transformers LlamaRMSNorm")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=3, scale=2.0, dtype=torch.float32)
    norm = LlamaRMSNorm(x.shape[-1], eps=size["eps"])
    with torch.no_grad():
        norm.weight.copy_(1 + 0.3 * randn(size, x.shape[-1], salt=4))
        want = norm(x)
    close(f(x=x, weight=norm.weight.detach().clone(), eps=size["eps"]), want, rtol=1e-5, atol=1e-6)


@P.prop("does not subtract the mean")
def _(f, ref, size):
    x = randn(size, *size["shape"], salt=5) + 3.0
    close(f(x=x, eps=size["eps"]), F.rms_norm(x, (x.shape[-1],), eps=size["eps"]), rtol=1e-9, atol=1e-12)


@P.prop("adds eps inside the square root; a zero row stays 0")
def _(f, ref, size):
    x = 1e-3 * randn(size, 3, size["shape"][-1], salt=6)
    x[0] = 0.0
    for eps in (size["eps"], 1e-2):
        out = f(x=x, eps=eps)
        close(out, F.rms_norm(x, (x.shape[-1],), eps=eps), rtol=1e-9, atol=1e-12)
    expect(bool((torch.as_tensor(out)[0] == 0).all()), "a zero row must stay 0")


@P.prop("normalises each token of a [B, T, D] batch over D only")
def _(f, ref, size):
    x = randn(size, 2, 3, size["shape"][-1], salt=7, scale=3.0)
    w = 1 + 0.2 * randn(size, x.shape[-1], salt=8)
    close(f(x=x, weight=w, eps=size["eps"]), F.rms_norm(x, (x.shape[-1],), w, size["eps"]), rtol=1e-9, atol=1e-12)

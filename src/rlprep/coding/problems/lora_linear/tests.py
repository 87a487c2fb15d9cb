"""Hidden properties of lora_linear, compared with F.linear on the merged weight."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _layer(size, salt, r=None):
    r = r or size["r"]
    i, o = size["d_in"], size["d_out"]
    return dict(weight=randn(size, o, i, salt=salt), bias=randn(size, o, salt=salt + 1),
                lora_A=randn(size, r, i, salt=salt + 2), lora_B=randn(size, o, r, salt=salt + 3))


def _merged(x, p, alpha):
    r = p["lora_A"].shape[0]
    return F.linear(x, p["weight"] + (alpha / r) * p["lora_B"] @ p["lora_A"], p["bias"])


def examples(size):
    eye = torch.eye(2)
    return [dict(x=torch.tensor([[1.0, 2.0]]), weight=eye, bias=None, lora_A=torch.tensor([[1.0, 1.0]]),
                 lora_B=torch.zeros(2, 1), alpha=4.0),
            dict(x=torch.tensor([[1.0, 2.0]]), weight=eye, bias=torch.tensor([0.5, 0.0]),
                 lora_A=torch.tensor([[1.0, 1.0]]), lora_B=torch.tensor([[1.0], [0.0]]), alpha=size["alpha"])]


@P.prop("matches F.linear on the merged weight W + (alpha / r) B A", library="torch.nn.functional.linear")
def _(f, ref, size):
    x, p = randn(size, size["n"], size["d_in"], salt=1), _layer(size, 2)
    close(f(x=x, **p, alpha=size["alpha"]), _merged(x, p, size["alpha"]), rtol=1e-9, atol=1e-10)


@P.prop("with B = 0 the layer is exactly the frozen layer")
def _(f, ref, size):
    x, p = randn(size, size["n"], size["d_in"], salt=6), _layer(size, 7)
    p["lora_B"] = torch.zeros_like(p["lora_B"])
    close(f(x=x, **p, alpha=size["alpha"]), F.linear(x, p["weight"], p["bias"]), rtol=1e-12, atol=1e-12)


@P.prop("scales the update by alpha / r with r read from lora_A")
def _(f, ref, size):
    x = randn(size, size["n"], size["d_in"], salt=11)
    for r in (1, size["r"] + 2):
        p = _layer(size, 12, r=r)
        close(f(x=x, **p, alpha=size["alpha"]), _merged(x, p, size["alpha"]), rtol=1e-9, atol=1e-10)


@P.prop("takes any leading dimensions and a missing bias")
def _(f, ref, size):
    x, p = randn(size, 2, size["n"], size["d_in"], salt=16), _layer(size, 17)
    p["bias"] = None
    close(f(x=x, **p, alpha=size["alpha"]), _merged(x, p, size["alpha"]), rtol=1e-9, atol=1e-10)

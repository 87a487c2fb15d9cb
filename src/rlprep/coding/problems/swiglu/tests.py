"""Hidden properties of swiglu_mlp, compared with transformers' LlamaMLP."""

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaMLP

from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _w(size, salt, D=None, Fh=None):
    D, Fh = D or size["D"], Fh or size["F"]
    return dict(w_gate=randn(size, Fh, D, salt=salt), w_up=randn(size, Fh, D, salt=salt + 1),
                w_down=randn(size, D, Fh, salt=salt + 2))


def _llama(x, w):
    D, Fh = w["w_down"].shape
    mlp = LlamaMLP(LlamaConfig(hidden_size=D, intermediate_size=Fh, hidden_act="silu", mlp_bias=False,
                               num_attention_heads=1, num_key_value_heads=1)).double()
    with torch.no_grad():
        mlp.gate_proj.weight.copy_(w["w_gate"])
        mlp.up_proj.weight.copy_(w["w_up"])
        mlp.down_proj.weight.copy_(w["w_down"])
        return mlp(x)


def examples(size):
    w = dict(w_gate=torch.tensor([[1.0, 0.0], [0.0, 1.0]]), w_up=torch.tensor([[1.0, 1.0], [2.0, 0.0]]),
             w_down=torch.eye(2))
    return [dict(x=torch.tensor([[1.0, -1.0]]), **w), dict(x=torch.tensor([[0.5, 2.0], [0.0, 0.0]]), **w)]


@P.prop("matches transformers' LlamaMLP", library="transformers LlamaMLP")
def _(f, ref, size):
    x, w = randn(size, size["n"], size["D"], salt=1), _w(size, 2)
    close(f(x=x, **w), _llama(x, w), rtol=1e-9, atol=1e-12)


@P.prop("applies SiLU to the gate projection only (the two are not interchangeable)")
def _(f, ref, size):
    x, w = randn(size, size["n"], size["D"], salt=5, scale=2.0), _w(size, 6)
    close(f(x=x, **w), _llama(x, w), rtol=1e-9, atol=1e-12)
    swapped = dict(w, w_gate=w["w_up"], w_up=w["w_gate"])
    close(f(x=x, **swapped), _llama(x, swapped), rtol=1e-9, atol=1e-12)


@P.prop("takes any leading dimensions")
def _(f, ref, size):
    x, w = randn(size, 2, size["n"], size["D"], salt=9), _w(size, 10)
    close(f(x=x, **w), _llama(x, w), rtol=1e-9, atol=1e-12)


@P.prop("handles a hidden width smaller or larger than the model width")
def _(f, ref, size):
    x = randn(size, size["n"], size["D"], salt=13)
    for Fh in (2, 3 * size["D"]):
        w = _w(size, 14, Fh=Fh)
        close(f(x=x, **w), _llama(x, w), rtol=1e-9, atol=1e-12)

"""Hidden properties of gqa_attention, compared with scaled_dot_product_attention(enable_gqa=True) and repeat_kv."""

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import repeat_kv

from rlprep.coding.testkit import Properties, close, raises, randn

P = Properties()


def _qkv(size, salt, Hq=None, Hkv=None):
    B, T, d = size["B"], size["T"], size["d"]
    Hq, Hkv = Hq or size["Hq"], Hkv or size["Hkv"]
    return randn(size, B, Hq, T, d, salt=salt), randn(size, B, Hkv, T, d, salt=salt + 1), \
        randn(size, B, Hkv, T, d, salt=salt + 2)


def examples(size):
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]])  # [1, 2, 2, 2]
    kv = torch.tensor([[[[1.0, 1.0], [2.0, 0.0]]]])  # [1, 1, 2, 2]
    return [dict(q=q, k=kv, v=kv), dict(q=q, k=kv, v=kv, is_causal=False)]


@P.prop("matches scaled_dot_product_attention with enable_gqa",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    q, k, v = _qkv(size, 1)
    close(f(q=q, k=k, v=v), F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), rtol=1e-9,
          atol=1e-12)


@P.prop("query head h uses KV head h // group, as transformers' repeat_kv", library="transformers repeat_kv")
def _(f, ref, size):
    q, k, v = _qkv(size, 4)
    n = size["Hq"] // size["Hkv"]
    want = F.scaled_dot_product_attention(q, repeat_kv(k, n), repeat_kv(v, n), is_causal=False)
    close(f(q=q, k=k, v=v, is_causal=False), want, rtol=1e-9, atol=1e-12)


@P.prop("with as many KV heads as query heads it is multi-head attention")
def _(f, ref, size):
    q, k, v = _qkv(size, 7, Hkv=size["Hq"])
    close(f(q=q, k=k, v=v), F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-9, atol=1e-12)


@P.prop("one KV head serves every query head (multi-query attention)")
def _(f, ref, size):
    q, k, v = _qkv(size, 10, Hkv=1)
    want = F.scaled_dot_product_attention(q, k.expand_as(q), v.expand_as(q), is_causal=True)
    close(f(q=q, k=k, v=v), want, rtol=1e-9, atol=1e-12)


@P.prop("raises ValueError when Hkv does not divide Hq, and attends for a valid split")
def _(f, ref, size):
    q, k, v = _qkv(size, 13, Hq=3, Hkv=2)
    raises(ValueError, f, q=q, k=k, v=v)
    q, k, v = _qkv(size, 16)
    close(f(q=q, k=k, v=v), ref(q, k, v), rtol=1e-9, atol=1e-12)

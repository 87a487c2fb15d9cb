"""Hidden properties of decode_step: the last row of full causal attention (scaled_dot_product_attention)."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, expect, randn

P = Properties()


def _seq(size, salt, L=None):
    B, H, d = size["B"], size["H"], size["d"]
    L = size["L"] if L is None else L
    return [randn(size, B, H, L + 1, d, salt=salt + i) for i in range(3)]  # q, k, v for L + 1 tokens


def _step(f, q, k, v, L, mask=None):
    return f(q=q[:, :, L:L + 1], k_new=k[:, :, L:L + 1], v_new=v[:, :, L:L + 1], k_cache=k[:, :, :L],
             v_cache=v[:, :, :L], past_mask=mask)


def examples(size):
    kc = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])  # [1, 1, 2, 2]
    new = torch.tensor([[[[1.0, 1.0]]]])
    return [dict(q=new, k_new=new, v_new=new, k_cache=kc, v_cache=kc),
            dict(q=new, k_new=new, v_new=new, k_cache=kc, v_cache=kc, past_mask=torch.tensor([[0, 1]]))]


@P.prop("the output is the last row of full causal attention",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    q, k, v = _seq(size, 1)
    L = size["L"]
    out = _step(f, q, k, v, L)
    expect(isinstance(out, (tuple, list)) and len(out) == 3, "expected (out, k_cache, v_cache)")
    close(out[0], F.scaled_dot_product_attention(q, k, v, is_causal=True)[:, :, -1:], rtol=1e-9, atol=1e-12)


@P.prop("the caches get the new key and value appended at the end, the rest unchanged")
def _(f, ref, size):
    q, k, v = _seq(size, 4)
    out = _step(f, q, k, v, size["L"])
    close([out[1], out[2]], [k, v], rtol=0, atol=0)


@P.prop("several steps in a row reproduce causal attention over the whole sequence",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    q, k, v = _seq(size, 7, L=size["L"] + 3)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    k_cache, v_cache = k[:, :, :size["L"]], v[:, :, :size["L"]]
    outs = []
    for t in range(size["L"], size["L"] + 4):
        o, k_cache, v_cache = f(q=q[:, :, t:t + 1], k_new=k[:, :, t:t + 1], v_new=v[:, :, t:t + 1],
                                k_cache=torch.as_tensor(k_cache), v_cache=torch.as_tensor(v_cache))
        outs.append(torch.as_tensor(o))
    close(torch.cat(outs, dim=2), full[:, :, size["L"]:], rtol=1e-9, atol=1e-12)


@P.prop("past positions marked as padding get no weight")
def _(f, ref, size):
    L = max(size["L"], 3)
    q, k, v = _seq(size, 10, L=L)
    mask = torch.ones(size["B"], L, dtype=torch.long)
    mask[0, :2] = 0
    keep = torch.cat([mask.bool(), torch.ones(size["B"], 1, dtype=torch.bool)], 1)[:, None, None, :]
    want = F.scaled_dot_product_attention(q[:, :, -1:], k, v, attn_mask=keep)
    close(_step(f, q, k, v, L, mask)[0], want, rtol=1e-9, atol=1e-12)


@P.prop("with an empty cache the token attends only to itself")
def _(f, ref, size):
    q, k, v = _seq(size, 13, L=0)
    out = _step(f, q, k, v, 0)
    close(out, (v, k, v), rtol=1e-12, atol=1e-12)

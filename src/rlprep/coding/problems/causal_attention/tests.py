"""Hidden properties of causal_attention, compared with torch.nn.functional.scaled_dot_product_attention."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, raises, randn

P = Properties()


def _weights(size, salt):
    D = size["D"]
    return {n: randn(size, D, D, salt=salt + i, scale=D ** -0.5) for i, n in enumerate(("w_q", "w_k", "w_v", "w_o"))}


def _sdpa(x, w, n_heads, mask):
    B, T, D = x.shape
    hd = D // n_heads
    q, k, v = ((x @ w[n].T).view(B, T, n_heads, hd).transpose(1, 2) for n in ("w_q", "w_k", "w_v"))
    real = mask.bool()
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool)) & real[:, None, None, :]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    out = torch.nan_to_num(out.transpose(1, 2).reshape(B, T, D)) * real[..., None]
    return out @ w["w_o"].T


def _mask(size, left=True):
    B, T = size["B"], size["T"]
    m = torch.ones(B, T, dtype=torch.long)
    for b in range(B):
        n = (b * 2) % T
        if n:
            if left:
                m[b, :n] = 0
            else:
                m[b, T - n:] = 0
    return m


def examples(size):
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    eye = torch.eye(2)
    return [dict(x=x, w_q=eye, w_k=eye, w_v=eye, w_o=eye, n_heads=1, attention_mask=torch.tensor([[1, 1, 1]])),
            dict(x=x, w_q=eye, w_k=eye, w_v=eye, w_o=eye, n_heads=2, attention_mask=torch.tensor([[0, 1, 1]]))]


@P.prop("matches scaled_dot_product_attention without padding",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    x, w = randn(size, size["B"], size["T"], size["D"], salt=1), _weights(size, 2)
    mask = torch.ones(size["B"], size["T"], dtype=torch.long)
    close(f(x=x, **w, n_heads=size["H"], attention_mask=mask), _sdpa(x, w, size["H"], mask), rtol=1e-9, atol=1e-12)


@P.prop("left padding: padded keys get no weight and padded queries output 0",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    x, w = randn(size, size["B"], size["T"], size["D"], salt=3), _weights(size, 4)
    mask = _mask(size, left=True)
    close(f(x=x, **w, n_heads=size["H"], attention_mask=mask), _sdpa(x, w, size["H"], mask), rtol=1e-9, atol=1e-12)


@P.prop("right padding: real tokens are unaffected by the padding after them")
def _(f, ref, size):
    x, w = randn(size, size["B"], size["T"], size["D"], salt=5), _weights(size, 6)
    mask = _mask(size, left=False)
    out = f(x=x, **w, n_heads=size["H"], attention_mask=mask)
    close(out, _sdpa(x, w, size["H"], mask), rtol=1e-9, atol=1e-12)
    x2 = x.clone()
    x2[mask == 0] = 100.0  # what sits in the padding must not matter
    close(f(x=x2, **w, n_heads=size["H"], attention_mask=mask), out, rtol=1e-9, atol=1e-12)


@P.prop("splits heads over contiguous feature blocks and scales by sqrt(head_dim)")
def _(f, ref, size):
    x, w = randn(size, 1, size["T"], 2 * size["D"], salt=7, scale=2.0), _weights(dict(size, D=2 * size["D"]), 8)
    mask = torch.ones(1, size["T"], dtype=torch.long)
    for h in (1, 2, 4):
        close(f(x=x, **w, n_heads=h, attention_mask=mask), _sdpa(x, w, h, mask), rtol=1e-9, atol=1e-12)


@P.prop("raises ValueError when n_heads does not divide D, and attends for a valid one")
def _(f, ref, size):
    x, w = randn(size, 1, 3, size["D"], salt=9), _weights(size, 10)
    mask = torch.ones(1, 3, dtype=torch.long)
    raises(ValueError, f, x=x, **w, n_heads=size["D"] - 1 if size["D"] > 2 else 3, attention_mask=mask)
    close(f(x=x, **w, n_heads=size["H"], attention_mask=mask), _sdpa(x, w, size["H"], mask), rtol=1e-9, atol=1e-12)

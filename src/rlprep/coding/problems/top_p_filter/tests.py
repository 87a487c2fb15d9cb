"""Hidden properties of top_p_filter, compared with transformers' TopPLogitsWarper."""

import torch
from transformers import TopPLogitsWarper

from rlprep.coding.testkit import Properties, close, expect, raises, randn

P = Properties()


def _hf(logits, top_p, keep=1):
    return TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=keep)(None, logits.clone())


def examples(size):
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]]))
    return [dict(logits=logits, top_p=0.7), dict(logits=randn(size, 2, 6, scale=2.0).round(decimals=1),
                                                  top_p=size["p"], min_tokens_to_keep=size["keep"])]


@P.prop("matches TopPLogitsWarper on random logits", library="transformers.TopPLogitsWarper")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=1, scale=2.0)
    close(f(logits=logits, top_p=size["p"], min_tokens_to_keep=size["keep"]), _hf(logits, size["p"], size["keep"]))


@P.prop("keeps exactly the nucleus of a known distribution")
def _(f, ref, size):
    logits = torch.log(torch.tensor([[0.05, 0.4, 0.1, 0.3, 0.15]], dtype=torch.float64))
    for p in (0.55, 0.75, 0.9, 0.97):  # 2, 3, 4 and 5 tokens survive
        close(f(logits=logits, top_p=p), _hf(logits, p))


@P.prop("always keeps min_tokens_to_keep tokens, even for a tiny top_p")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=2, scale=3.0)
    for keep in (1, 2, size["keep"] + 1):
        out = f(logits=logits, top_p=0.01, min_tokens_to_keep=keep)
        close(out, _hf(logits, 0.01, keep))


@P.prop("top_p = 1 keeps every token and top_p = 0 only the most likely")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=3)
    close(f(logits=logits, top_p=1.0), logits)
    out = torch.as_tensor(f(logits=logits, top_p=0.0))
    expect(bool((torch.isfinite(out).sum(-1) == 1).all()), "top_p = 0 must keep one token per row")
    close(out, _hf(logits, 0.0))


@P.prop("filters each row of a batch on its own distribution")
def _(f, ref, size):
    logits = torch.stack([randn(size, size["V"], salt=4, scale=0.3), randn(size, size["V"], salt=5, scale=4.0)])
    close(f(logits=logits, top_p=size["p"]), _hf(logits, size["p"]))


@P.prop("raises ValueError for top_p outside [0, 1] or min_tokens_to_keep < 1, and filters a valid call")
def _(f, ref, size):
    logits = randn(size, 2, size["V"], salt=6, scale=2.0)
    raises(ValueError, f, logits=logits, top_p=1.5)
    raises(ValueError, f, logits=logits, top_p=0.5, min_tokens_to_keep=0)
    close(f(logits=logits, top_p=0.5), _hf(logits, 0.5))

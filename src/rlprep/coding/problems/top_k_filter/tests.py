"""Hidden properties of top_k_filter, compared with transformers' TopKLogitsWarper."""

import torch
from transformers import TopKLogitsWarper

from rlprep.coding.testkit import Properties, close, raises, randn

P = Properties()


def _hf(logits, k):
    return TopKLogitsWarper(top_k=k)(None, logits.clone())


def examples(size):
    return [dict(logits=torch.tensor([[1.0, 3.0, 2.0, 0.5]]), top_k=2),
            dict(logits=torch.tensor([[1.0, 2.0, 2.0, 0.5], [4.0, 1.0, 1.0, 1.0]]), top_k=size["k"])]


@P.prop("matches TopKLogitsWarper on random logits", library="transformers.TopKLogitsWarper")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=1, scale=2.0)
    close(f(logits=logits, top_k=size["k"]), _hf(logits, size["k"]))


@P.prop("keeps every logit tied with the k-th largest")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=2).round(decimals=0)  # many exact ties
    logits[0, :3] = 5.0
    for k in (1, size["k"], 2):
        close(f(logits=logits, top_k=k), _hf(logits, k))


@P.prop("top_k at or above the vocabulary size keeps every token")
def _(f, ref, size):
    logits = randn(size, size["B"], size["V"], salt=3)
    close(f(logits=logits, top_k=size["V"]), logits)
    close(f(logits=logits, top_k=size["V"] + 5), logits)
    close(f(logits=logits, top_k=size["V"] - 1), _hf(logits, size["V"] - 1))


@P.prop("filters each row on its own values, not the batch's")
def _(f, ref, size):
    logits = torch.stack([randn(size, size["V"], salt=4), randn(size, size["V"], salt=5) + 10.0])
    close(f(logits=logits, top_k=size["k"]), _hf(logits, size["k"]))


@P.prop("raises ValueError for top_k < 1, and filters a valid call")
def _(f, ref, size):
    logits = randn(size, 2, size["V"], salt=6)
    raises(ValueError, f, logits=logits, top_k=0)
    close(f(logits=logits, top_k=size["k"]), _hf(logits, size["k"]))

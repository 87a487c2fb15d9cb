"""Hidden properties of repetition_penalty, compared with transformers' RepetitionPenaltyLogitsProcessor."""

import torch
from transformers import RepetitionPenaltyLogitsProcessor

from rlprep.coding.testkit import Properties, close, raises, randint, randn

P = Properties()


def _hf(logits, ids, penalty):
    return RepetitionPenaltyLogitsProcessor(penalty=penalty)(ids, logits.clone())


def _case(size, salt, T=None):
    return (randn(size, size["B"], size["V"], salt=salt, scale=2.0),
            randint(size, 0, size["V"], size["B"], T or size["T"], salt=salt + 1))


def examples(size):
    return [dict(logits=torch.tensor([[2.0, -1.0, 0.5, 3.0]]), input_ids=torch.tensor([[0, 1, 1]]), penalty=2.0),
            dict(logits=torch.tensor([[2.0, -1.0, 0.5, 3.0]]), input_ids=torch.tensor([[3, 2]]),
                 penalty=size["penalty"])]


@P.prop("matches RepetitionPenaltyLogitsProcessor", library="transformers.RepetitionPenaltyLogitsProcessor")
def _(f, ref, size):
    logits, ids = _case(size, 1)
    close(f(logits=logits, input_ids=ids, penalty=size["penalty"]), _hf(logits, ids, size["penalty"]), rtol=1e-12,
          atol=1e-12)


@P.prop("multiplies negative logits and divides positive ones")
def _(f, ref, size):
    logits = torch.tensor([[-2.0, 3.0, -0.5, 1.0, 0.0, 4.0]], dtype=torch.float64)
    ids = torch.tensor([[0, 1, 2, 4]])
    for penalty in (size["penalty"], 1.7):
        close(f(logits=logits, input_ids=ids, penalty=penalty), _hf(logits, ids, penalty), rtol=1e-12, atol=1e-12)


@P.prop("penalises a repeated token once, not once per occurrence")
def _(f, ref, size):
    logits, _ = _case(size, 3)
    ids = torch.zeros(size["B"], size["T"] + 4, dtype=torch.long)
    ids[:, ::2] = 1
    close(f(logits=logits, input_ids=ids, penalty=size["penalty"]), _hf(logits, ids, size["penalty"]), rtol=1e-12,
          atol=1e-12)


@P.prop("each row is penalised with its own history only")
def _(f, ref, size):
    logits, _ = _case(size, 5)
    ids = torch.stack([torch.full((size["T"],), b % size["V"]) for b in range(size["B"])])
    close(f(logits=logits, input_ids=ids, penalty=size["penalty"]), _hf(logits, ids, size["penalty"]), rtol=1e-12,
          atol=1e-12)


@P.prop("raises ValueError for penalty <= 0, and penalises a valid call")
def _(f, ref, size):
    logits, ids = _case(size, 7)
    raises(ValueError, f, logits=logits, input_ids=ids, penalty=0.0)
    close(f(logits=logits, input_ids=ids, penalty=size["penalty"]), _hf(logits, ids, size["penalty"]), rtol=1e-12,
          atol=1e-12)

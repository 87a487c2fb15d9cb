"""Hidden properties of apply_rope, compared with transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb."""

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from rlprep.coding.testkit import Properties, close, raises, randint, randn

P = Properties()
TOL = dict(rtol=1e-5, atol=1e-5)  # transformers computes the angles in float32


def _hf(x, position_ids, base):
    H, d = x.shape[1], x.shape[-1]
    config = LlamaConfig(hidden_size=H * d, num_attention_heads=H, num_key_value_heads=H, rope_theta=base)
    cos, sin = LlamaRotaryEmbedding(config)(x.float(), position_ids)
    q, _ = apply_rotary_pos_emb(x, x, cos.to(x.dtype), sin.to(x.dtype))
    return q


def _x(size, salt, T=None):
    return randn(size, size["B"], size["H"], T or size["T"], size["d"], salt=salt)


def _pos(size, T=None, start=0):
    T = T or size["T"]
    return (torch.arange(T)[None, :] + start).repeat(size["B"], 1)


def examples(size):
    x = torch.tensor([[[[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]]]])  # [1, 1, 2, 4]
    return [dict(x=x, position_ids=torch.tensor([[0, 1]])), dict(x=x, position_ids=torch.tensor([[3, 7]]),
                                                                   base=size["base"])]


@P.prop("matches transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb",
        library="transformers apply_rotary_pos_emb")
def _(f, ref, size):
    x, pos = _x(size, 1), _pos(size)
    close(f(x=x, position_ids=pos, base=size["base"]), _hf(x, pos, size["base"]), **TOL)


@P.prop("takes positions per row (left padding), not the column index")
def _(f, ref, size):
    x = _x(size, 2)
    pos = torch.stack([torch.arange(size["T"]) + 3 * b for b in range(size["B"])])
    close(f(x=x, position_ids=pos, base=size["base"]), _hf(x, pos, size["base"]), **TOL)


@P.prop("the score q_m . k_n depends only on m - n")
def _(f, ref, size):
    q, k = randn(size, 1, 1, 1, size["d"], salt=3), randn(size, 1, 1, 1, size["d"], salt=4)
    scores = []
    for m, n in ((5, 2), (105, 102), (1003, 1000)):
        qm = torch.as_tensor(f(x=q, position_ids=torch.tensor([[m]]), base=size["base"]), dtype=torch.float64)
        kn = torch.as_tensor(f(x=k, position_ids=torch.tensor([[n]]), base=size["base"]), dtype=torch.float64)
        scores.append(float((qm * kn).sum()))
    close(scores[1:], [scores[0]] * 2, rtol=1e-3, atol=1e-3)
    close(scores[0], float((_hf(q, torch.tensor([[5]]), size["base"]) * _hf(k, torch.tensor([[2]]), size["base"])).sum()),
          **TOL)


@P.prop("large positions (decoding far into the context) match transformers")
def _(f, ref, size):
    x = _x(size, 5, T=size["T"])
    pos = randint(size, 1000, 4000, size["B"], size["T"], salt=6)
    close(f(x=x.float(), position_ids=pos, base=size["base"]), _hf(x.float(), pos, size["base"]), rtol=1e-3, atol=3e-3)


@P.prop("position 0 is the identity, norms are preserved, and an odd head size raises ValueError")
def _(f, ref, size):
    x = _x(size, 7)
    close(f(x=x, position_ids=torch.zeros(size["B"], size["T"], dtype=torch.long), base=size["base"]), x, **TOL)
    out = torch.as_tensor(f(x=x, position_ids=_pos(size, start=11), base=size["base"]), dtype=torch.float64)
    close(out.norm(dim=-1), x.norm(dim=-1), **TOL)
    raises(ValueError, f, x=randn(size, 1, 1, 2, 5, salt=8), position_ids=torch.tensor([[0, 1]]))

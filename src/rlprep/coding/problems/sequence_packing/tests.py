"""Hidden properties of pack_sequences: transformers' DataCollatorWithFlattening, and attention with the mask
equal to attending within each sequence (scaled_dot_product_attention)."""

import torch
import torch.nn.functional as F
from transformers import DataCollatorWithFlattening

from rlprep.coding.testkit import Properties, close, expect, raises, randint, randn

P = Properties()
KEYS = {"input_ids", "labels", "position_ids", "cu_seq_lens", "attention_mask"}


def _seqs(size, salt):
    lens = randint(size, 1, size["max_len"] + 1, size["S"], salt=salt).tolist()
    ids = randint(size, 3, 50, sum(lens), salt=salt + 1).tolist()
    out, i = [], 0
    for n in lens:
        out.append(ids[i:i + n])
        i += n
    return out


def _packed(f, seqs):
    out = f(sequences=seqs)
    expect(isinstance(out, dict) and set(out) == KEYS, f"expected a dict with keys {sorted(KEYS)}")
    return out


def examples(size):
    return [dict(sequences=[[5, 6, 7], [8, 9]]), dict(sequences=_seqs(size, 0)[:3])]


@P.prop("input_ids, labels and position_ids match DataCollatorWithFlattening",
        library="transformers.DataCollatorWithFlattening")
def _(f, ref, size):
    seqs = _seqs(size, 1)
    hf = DataCollatorWithFlattening(return_position_ids=True, return_tensors="pt")([{"input_ids": s} for s in seqs])
    out = _packed(f, seqs)
    close([out["input_ids"], out["labels"], out["position_ids"]], [hf["input_ids"], hf["labels"], hf["position_ids"]])


@P.prop("cu_seq_lens are the cumulative boundaries of the sequences", library="transformers.DataCollatorWithFlattening")
def _(f, ref, size):
    seqs = _seqs(size, 2)
    hf = DataCollatorWithFlattening(return_flash_attn_kwargs=True, return_tensors="pt")([{"input_ids": s} for s in seqs])
    close(_packed(f, seqs)["cu_seq_lens"], hf["cu_seq_lens_q"].long())


@P.prop("the mask is causal inside each sequence and closed across sequences")
def _(f, ref, size):
    seqs = _seqs(size, 3)
    close(_packed(f, seqs)["attention_mask"], ref(seqs)["attention_mask"])


@P.prop("attention over the packed row with the mask equals attention within each sequence",
        library="torch.nn.functional.scaled_dot_product_attention")
def _(f, ref, size):
    seqs = _seqs(size, 4)
    out = _packed(f, seqs)
    mask = torch.as_tensor(out["attention_mask"]).bool()
    n = sum(len(s) for s in seqs)
    q, k, v = (randn(size, 1, 2, n, 4, salt=10 + i) for i in range(3))
    packed = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    start, parts = 0, []
    for s in seqs:
        sl = slice(start, start + len(s))
        parts.append(F.scaled_dot_product_attention(q[:, :, sl], k[:, :, sl], v[:, :, sl], is_causal=True))
        start += len(s)
    close(packed, torch.cat(parts, dim=2), rtol=1e-9, atol=1e-12)


@P.prop("one sequence packs to plain causal attention with positions 0..N-1")
def _(f, ref, size):
    seq = _seqs(size, 5)[0] + [7, 8]
    close(_packed(f, [seq]), ref([seq]))


@P.prop("one-token sequences attend only to themselves; no sequence or an empty one raises ValueError")
def _(f, ref, size):
    seqs = [[4], _seqs(size, 6)[0], [9], [11]]
    close(_packed(f, seqs), ref(seqs))
    raises(ValueError, f, sequences=[])
    raises(ValueError, f, sequences=[[1, 2], []])

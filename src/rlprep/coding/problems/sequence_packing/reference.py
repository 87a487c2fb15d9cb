"""Sequence packing as transformers' DataCollatorWithFlattening, plus the block-diagonal causal mask.

O(N) for ids, labels and positions; O(N^2) for the dense mask (varlen kernels take cu_seq_lens instead).
"""

import torch


def pack_sequences(sequences):
    """Pack token lists into one row. Returns a dict of input_ids, labels, position_ids [1, N], cu_seq_lens
    [S + 1] and attention_mask [1, 1, N, N] (bool, True = may attend)."""
    if not sequences or any(len(s) == 0 for s in sequences):
        raise ValueError("need at least one sequence, and no empty sequence")
    lengths = torch.tensor([len(s) for s in sequences])  # (S,)
    input_ids = torch.tensor([t for s in sequences for t in s], dtype=torch.long)  # (N,)
    n = input_ids.shape[0]
    cu_seq_lens = torch.zeros(len(sequences) + 1, dtype=torch.long)
    cu_seq_lens[1:] = lengths.cumsum(0)  # (S + 1,) 0, l1, l1 + l2, ..., N
    seq_id = torch.repeat_interleave(torch.arange(len(sequences)), lengths)  # (N,) which sequence owns token i
    position_ids = torch.arange(n) - cu_seq_lens[seq_id]  # (N,) restart at 0 in every sequence
    labels = input_ids.clone()
    labels[cu_seq_lens[:-1]] = -100  # a first token is never predicted from the sequence before it
    idx = torch.arange(n)
    mask = (seq_id[:, None] == seq_id[None, :]) & (idx[None, :] <= idx[:, None])  # (N, N) same sequence, causal
    return {"input_ids": input_ids[None], "labels": labels[None], "position_ids": position_ids[None],
            "cu_seq_lens": cu_seq_lens, "attention_mask": mask[None, None]}

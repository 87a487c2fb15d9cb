"""Catalogued bugs of pack_sequences."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("positions_never_restart", "numbers the positions across the whole row: RoPE sees wrong offsets",
         {"torch.arange(n) - cu_seq_lens[seq_id]": "torch.arange(n)"}),
    Edit("mask_not_causal", "block-diagonal but not causal: a token sees its own future",
         {" & (idx[None, :] <= idx[:, None])": ""}),
    Edit("mask_not_block_diagonal", "plain causal: sequences see the ones packed before them",
         {"(seq_id[:, None] == seq_id[None, :]) & ": ""}),
    Edit("labels_masked_at_the_end", "puts -100 on each sequence's last token instead of its first",
         {"labels[cu_seq_lens[:-1]] = -100": "labels[cu_seq_lens[1:] - 1] = -100"}),
    Edit("boundaries_without_zero", "returns the cumulative lengths without the leading 0",
         {'"cu_seq_lens": cu_seq_lens,': '"cu_seq_lens": cu_seq_lens[1:],'}),
    Edit("mask_transposed", "j >= i: each token attends to the later tokens of its sequence",
         {"idx[None, :] <= idx[:, None]": "idx[None, :] >= idx[:, None]"}),
]

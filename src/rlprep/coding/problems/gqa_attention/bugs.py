"""Catalogued bugs of gqa_attention."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("tiles_instead_of_interleaving", "repeats the KV heads as a block (h % Hkv), not in groups (h // group)",
         {"k = k.repeat_interleave(n_rep, dim=1)": "k = k.repeat(1, n_rep, 1, 1)",
          "v = v.repeat_interleave(n_rep, dim=1)": "v = v.repeat(1, n_rep, 1, 1)"}),
    Edit("causal_mask_inverted", "masks the past instead of the future",
         {"torch.ones(T, T, dtype=torch.bool).triu(1)": "torch.ones(T, T, dtype=torch.bool).tril(-1)"}),
    Edit("ignores_is_causal", "always applies the causal mask",
         {"    if is_causal:\n        T = q.shape[2]": "    if True:\n        T = q.shape[2]"}),
    Edit("no_scaling", "forgets the 1 / sqrt(d) scale",
         {" / math.sqrt(q.shape[-1])": ""}),
    Edit("first_kv_head_only", "gives every query head the first KV head",
         {"k = k.repeat_interleave(n_rep, dim=1)": "k = k[:, :1].expand(-1, q.shape[1], -1, -1)",
          "v = v.repeat_interleave(n_rep, dim=1)": "v = v[:, :1].expand(-1, q.shape[1], -1, -1)"}),
    Edit("no_divisibility_check", "silently floors Hq / Hkv",
         {"    if rest != 0:\n": "    if False:\n"}),
]

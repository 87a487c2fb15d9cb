"""Catalogued bugs of causal_attention."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("scales_by_sqrt_d", "divides the scores by sqrt(D) instead of sqrt(head_dim)",
         {"/ math.sqrt(hd)": "/ math.sqrt(D)"}),
    Edit("not_causal", "masks padding but lets every query see the future",
         {"torch.tril(torch.ones(T, T, dtype=torch.bool)) & ": ""}),
    Edit("masks_queries_not_keys", "applies the padding mask to the query axis: padded keys still get weight",
         {"real[:, None, None, :]": "real[:, None, :, None]"}),
    Edit("wrong_head_split", "views [B, T, D] as [B, H, T, hd] without a transpose: heads mix positions",
         {"t.view(B, T, n_heads, hd).transpose(1, 2)": "t.reshape(B, n_heads, T, hd)"}),
    Edit("mask_with_zero", "fills masked scores with 0 instead of -inf: masked keys keep weight",
         {'scores.masked_fill(~keep, float("-inf"))': "scores.masked_fill(~keep, 0.0)"}),
    Edit("no_output_projection", "forgets w_o",
         {"return out @ w_o.T": "return out"}),
]

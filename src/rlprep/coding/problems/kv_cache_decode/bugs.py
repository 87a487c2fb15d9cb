"""Catalogued bugs of decode_step."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("prepends", "puts the new entry at the front of the cache",
         {"torch.cat([k_cache, k_new], dim=2)": "torch.cat([k_new, k_cache], dim=2)",
          "torch.cat([v_cache, v_new], dim=2)": "torch.cat([v_new, v_cache], dim=2)"}),
    Edit("attends_to_old_cache", "attends over the cache before appending: the token never sees itself",
         {"    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, 1, L+1)\n":
          "    scores = q @ k_cache[:, :, :-1].transpose(-2, -1) / math.sqrt(q.shape[-1])\n",
          "torch.softmax(scores, dim=-1) @ v_cache": "torch.softmax(scores, dim=-1) @ v_cache[:, :, :-1]",
          "torch.ones(B, 1, dtype=torch.bool)], dim=1)": "torch.ones(B, 0, dtype=torch.bool)], dim=1)"}),
    Edit("scales_by_length", "divides by sqrt(L + 1) instead of sqrt(d)",
         {"/ math.sqrt(q.shape[-1])": "/ math.sqrt(k_cache.shape[2])"}),
    Edit("ignores_past_mask", "never applies past_mask",
         {"    if past_mask is not None:\n": "    if False:\n"}),
    Edit("softmax_over_query_axis", "normalises over the single query instead of the keys",
         {"torch.softmax(scores, dim=-1)": "torch.softmax(scores, dim=-2)"}),
    Edit("masks_the_new_token", "marks the new token as padding too",
         {"torch.ones(B, 1, dtype=torch.bool)], dim=1)": "torch.zeros(B, 1, dtype=torch.bool)], dim=1)"}),
]

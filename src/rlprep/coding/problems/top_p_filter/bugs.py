"""Catalogued bugs of top_p_filter."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("threshold_is_top_p", "removes the tail up to top_p instead of 1 - top_p",
         {"cumulative <= 1.0 - top_p": "cumulative <= top_p"}),
    Edit("no_min_tokens", "forgets min_tokens_to_keep: a tiny top_p can remove every token",
         {"    sorted_remove[..., -min_tokens_to_keep:] = False  # the most likely tokens always stay\n": ""}),
    Edit("mask_not_unsorted", "applies the mask computed in sorted order to the unsorted logits",
         {"sorted_remove.scatter(-1, sorted_idx, sorted_remove)": "sorted_remove"}),
    Edit("descending_sort", "sorts descending but keeps the ascending rule: removes the head of the distribution",
         {"descending=False": "descending=True"}),
    Edit("filter_to_zero", "sets removed logits to 0 instead of -inf: they keep probability mass",
         {'float("-inf")': "0.0"}),
    Edit("softmax_over_batch", "normalises over the batch dimension instead of the vocabulary",
         {"sorted_logits.softmax(dim=-1)": "sorted_logits.softmax(dim=0)"}),
    Edit("no_validation", "accepts top_p outside [0, 1] silently",
         {'        raise ValueError(f"top_p must lie in [0, 1], got {top_p}")': "        pass"}),
]

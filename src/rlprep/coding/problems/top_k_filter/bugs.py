"""Catalogued bugs of top_k_filter."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("exactly_k_indices", "scatters exactly the k indices topk returns: a tie at the boundary loses a token",
         {"    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # (B, 1) the k-th largest logit of each row\n"
          "    return logits.masked_fill(logits < kth, float(\"-inf\"))  # ties with the k-th survive":
          "    idx = torch.topk(logits, k, dim=-1).indices\n"
          "    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)\n"
          "    return logits.masked_fill(~keep, float(\"-inf\"))"}),
    Edit("keeps_k_plus_one", "takes the (k+1)-th value as the threshold",
         {"k = min(top_k, logits.shape[-1])": "k = min(top_k + 1, logits.shape[-1])"}),
    Edit("keeps_smallest", "keeps the k smallest logits",
         {"torch.topk(logits, k, dim=-1).values[..., -1:]": "torch.topk(logits, k, dim=-1, largest=False).values[..., -1:]",
          "logits.masked_fill(logits < kth": "logits.masked_fill(logits > kth"}),
    Edit("no_clamp_to_vocab", "passes top_k > V to torch.topk, which raises",
         {"k = min(top_k, logits.shape[-1])": "k = top_k"}),
    Edit("global_threshold", "takes the k-th largest of the whole batch",
         {"torch.topk(logits, k, dim=-1).values[..., -1:]": "torch.topk(logits.flatten(), k).values[-1]"}),
    Edit("fills_zero", "sets removed logits to 0 instead of -inf",
         {'masked_fill(logits < kth, float("-inf"))': "masked_fill(logits < kth, 0.0)"}),
]

"""Honest variants of top_p_filter."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("descending_mass_before", "descending sort: keep a token while the mass strictly above it is < top_p",
         source='''
        import torch


        def top_p_filter(logits, top_p, min_tokens_to_keep=1):
            if top_p < 0 or top_p > 1 or min_tokens_to_keep < 1:
                raise ValueError("top_p must be in [0, 1] and min_tokens_to_keep >= 1")
            probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
            mass_above = probs.cumsum(dim=-1) - probs
            keep_sorted = mass_above < top_p - 1e-12 if top_p < 1 else torch.ones_like(probs, dtype=torch.bool)
            keep_sorted[..., :min_tokens_to_keep] = True
            keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
            return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
        '''),
    Edit("python_loop", "one row at a time, plain Python over the sorted probabilities", source='''
        import math

        import torch


        def top_p_filter(logits, top_p, min_tokens_to_keep=1):
            if not (0 <= top_p <= 1) or min_tokens_to_keep < 1:
                raise ValueError("bad top_p or min_tokens_to_keep")
            out = logits.clone()
            for b in range(logits.shape[0]):
                row = logits[b].tolist()
                m = max(row)
                z = sum(math.exp(v - m) for v in row)
                order = sorted(range(len(row)), key=lambda i: row[i])
                total = 0.0
                for rank, i in enumerate(order):
                    total += math.exp(row[i] - m) / z
                    if total <= 1 - top_p and rank < len(row) - min_tokens_to_keep:
                        out[b, i] = float("-inf")
            return out
        '''),
]

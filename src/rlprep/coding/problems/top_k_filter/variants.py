"""Honest variants of top_k_filter."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("sort_based", "a descending sort, the k-th value as threshold", source='''
        import torch


        def top_k_filter(logits, top_k):
            if top_k <= 0:
                raise ValueError("top_k must be positive")
            values, _ = torch.sort(logits, dim=-1, descending=True)
            threshold = values[:, min(top_k, logits.shape[1]) - 1].unsqueeze(1)
            return torch.where(logits >= threshold, logits, torch.full_like(logits, float("-inf")))
        '''),
    Edit("kthvalue", "torch.kthvalue from the bottom: the (V - k + 1)-th smallest", source='''
        import torch


        def top_k_filter(logits, top_k):
            if top_k < 1:
                raise ValueError("top_k < 1")
            V = logits.shape[-1]
            if top_k >= V:
                return logits.clone()
            kth = torch.kthvalue(logits, V - top_k + 1, dim=-1, keepdim=True).values
            out = logits.clone()
            out[logits < kth] = float("-inf")
            return out
        '''),
]

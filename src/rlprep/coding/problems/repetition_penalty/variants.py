"""Honest variants of repetition_penalty."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("mask_based", "a [B, V] mask of seen tokens, then one torch.where", source='''
        import torch


        def repetition_penalty(logits, input_ids, penalty):
            if penalty <= 0:
                raise ValueError("penalty must be positive")
            seen = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, input_ids, True)
            penalised = torch.where(logits > 0, logits / penalty, logits * penalty)
            return torch.where(seen, penalised, logits)
        '''),
    Edit("python_sets", "a set of ids per row", source='''
        def repetition_penalty(logits, input_ids, penalty):
            if not penalty > 0:
                raise ValueError("bad penalty")
            out = logits.clone()
            for b, row in enumerate(input_ids.tolist()):
                for t in set(row):
                    v = float(logits[b, t])
                    out[b, t] = v / penalty if v > 0 else v * penalty
            return out
        '''),
]

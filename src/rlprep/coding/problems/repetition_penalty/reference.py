"""The CTRL repetition penalty (Keskar et al. 2019, arXiv 1909.05858, Sec. 4.1), as RepetitionPenaltyLogitsProcessor.

O(B (T + V)): gather, penalise by sign, scatter back; repeated ids write the same value, so each is penalised once.
"""

import torch


def repetition_penalty(logits, input_ids, penalty):
    """Penalise every token already in each row's input_ids. logits: [B, V]; input_ids: [B, T] int64.
    Returns [B, V]."""
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    seen = torch.gather(logits, 1, input_ids)  # (B, T) the logits of tokens already in the row
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)  # always toward "less likely" when penalty > 1
    return logits.scatter(1, input_ids, seen)  # (B, V)

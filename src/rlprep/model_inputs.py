"""What a GPT-2 forward pass over left-padded rows is given besides the tokens: position ids counted from the
attention mask, and the keyword its KV cache travels under. Used by the sampler (:mod:`rlprep.rollout`), the shared
prompt encoding (:mod:`rlprep.prefix_sharing`) and the trainers' forward passes, so none of them imports another for
these two helpers.
"""

from __future__ import annotations

import inspect

import torch


def kv_cache_name(model) -> str:
    """The keyword (and output field) that carries the KV cache: transformers 5.20+ calls it ``cache``; earlier
    5.x releases, such as the 5.17 on our GPU image, ``past_key_values``."""
    inner = getattr(model, "module", model)  # a DDP / accelerate wrapper's forward takes **kwargs only
    return "cache" if "cache" in inspect.signature(inner.forward).parameters else "past_key_values"


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[B, L] -> [B, L]: each row's real tokens numbered 0, 1, ... (pad columns get 0)."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)

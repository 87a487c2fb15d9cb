"""Rows that share a prompt encode it once.

GRPO samples G completions of every prompt, so a batch of B = N x G rows holds only N distinct prompts. A plain
forward pass encodes each prompt G times. Here the N distinct prompts go through the model once, their keys and
values (the KV cache) are copied to the G rows of each group, and only the completions are run row by row. In
the arithmetic task a prompt is 6 tokens and a completion about 4, so the positions a GRPO forward (and its
backward) computes fall from 64 x 10 to 8 x 6 + 64 x 4.

The result is the same computation, not an approximation: a completion token attends to the prompt's keys and
values, which do not depend on the completion, and the gradient that reaches the shared prompt is the sum over
the group's rows, which is what the G copies received before. Float sums may differ in the last bits (a matmul
over 8 rows is not bit-identical to one over 64). Prefix Grouper (Liu et al., 2025, arXiv 2506.05433) does the
same for GRPO inside one attention pass, shows that forward outputs and gradients are unchanged, and measures the
saving on long shared prompts; here two passes and the model's own KV cache do it without touching attention.

Not used when it cannot be exact: dropout active in training mode (G copies would draw G masks, one shared prompt
draws one), or no prompt repeats (two passes would only add overhead). ``RLPREP_PREFIX_SHARING=0`` turns it off
(to measure what it saves, or to rule it out while debugging).
"""

from __future__ import annotations

import os

import torch

from rlprep.model_inputs import kv_cache_name, position_ids_from_mask


def enabled() -> bool:
    """False when ``RLPREP_PREFIX_SHARING=0``."""
    return os.environ.get("RLPREP_PREFIX_SHARING", "1") != "0"


def repeated_prompts(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor):
    """The distinct prompt rows of a left-padded batch, or None when no row repeats.

    Args:
        prompt_ids: [B, P] left-padded prompt tokens.
        prompt_mask: [B, P], 1 on real tokens.

    Returns:
        ``(first, inverse)``: ``first`` [N] indexes one row of each distinct prompt, ``inverse`` [B] maps each row
        to its prompt (``prompt_ids[first][inverse] == prompt_ids``); None if N == B or sharing is turned off.
    """
    if not enabled():
        return None
    key = torch.where(prompt_mask.bool(), prompt_ids, -1)  # (B, P): padding can never match a token
    distinct, inverse = torch.unique(key, dim=0, return_inverse=True)  # (N, P), (B,)
    if len(distinct) == len(key):
        return None
    first = torch.full((len(distinct),), len(key), dtype=torch.long, device=key.device)
    first.scatter_reduce_(0, inverse, torch.arange(len(key), device=key.device), reduce="amin")  # (N,)
    return first, inverse


def dropout_active(model) -> bool:
    """True when a forward pass in the model's current mode draws dropout masks."""
    return model.training and any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())


def shared_prompts(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor):
    """When sharing applies, ``(first, inverse)`` of :func:`repeated_prompts`; None when no prompt repeats, sharing
    is turned off, or dropout is active (the one rule the sampler and the trainers' forward both follow)."""
    return None if dropout_active(model) else repeated_prompts(prompt_ids, prompt_mask)


def encode_prompts_once(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, first: torch.Tensor,
                        inverse: torch.Tensor):
    """Run the distinct prompts, then give every row its prompt's cache and last logits.

    Returns:
        ``(cache, last_logits)``: a KV cache over P positions for all B rows (differentiable: gradients flow back
        into the N prompt passes) and the logits at each row's last prompt position, [B, V].
    """
    name = kv_cache_name(model)
    mask = prompt_mask[first]  # (N, P)
    out = model(input_ids=prompt_ids[first], attention_mask=mask, position_ids=position_ids_from_mask(mask),
                use_cache=True, logits_to_keep=1)
    cache = getattr(out, name)
    cache.reorder_cache(inverse)  # (N, ...) -> (B, ...): row b gets its prompt's keys and values
    return cache, out.logits[:, -1][inverse]  # (B, V)


def completion_logits(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_completion: int):
    """Logits ``[B, C, V]`` predicting the last ``C = n_completion`` tokens of each row, the prompt part
    (``input_ids[:, :L-C]``, left-padded) encoded once per distinct prompt.

    Returns None when sharing does not apply (no repeated prompt, or dropout active): the caller runs one plain
    forward pass. Otherwise equal, up to float rounding, to the plain pass's logits at positions L-C-1 .. L-2.
    """
    L = input_ids.shape[1]
    P = L - n_completion
    found = shared_prompts(model, input_ids[:, :P], attention_mask[:, :P]) if P >= 1 else None
    if found is None:
        return None
    first, inverse = found
    cache, last = encode_prompts_once(model, input_ids[:, :P], attention_mask[:, :P], first, inverse)
    if n_completion == 1:
        return last[:, None, :].float()  # (B, 1, V)
    positions = position_ids_from_mask(attention_mask)[:, P:L - 1]  # (B, C-1)
    out = model(input_ids=input_ids[:, P:L - 1], attention_mask=attention_mask[:, :L - 1], position_ids=positions,
                use_cache=True, **{kv_cache_name(model): cache})
    return torch.cat([last[:, None, :], out.logits], dim=1).float()  # (B, C, V)

"""Sequence plumbing shared by the trainers: encoding prompt+completion batches, forward passes over
left-padded rows, per-token log-probs and entropy, devices and bf16 autocast.

Conventions (same as :mod:`rlprep.rollout`): rows are **left-padded**, so every forward pass passes
``position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)`` (GPT-2 scores left-padded rows wrongly
otherwise; see the toolchain notes). Completion tensors are ``[B, C]``: the last C positions of the row.
"""

from __future__ import annotations

import contextlib
import random
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from rlprep import prefix_sharing
from rlprep.model_inputs import position_ids_from_mask
from rlprep.rollout import pad_id


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def adamw(params, lr: float, weight_decay: float = 0.0, **kwargs) -> torch.optim.AdamW:
    """AdamW (Loshchilov & Hutter 2019, arXiv 1711.05101, Alg. 2) with torch's fused kernel: one kernel updates every
    parameter, where the default CPU path loops over the tensors in Python. The update rule is the same; it is what
    TRL's trainers use (transformers' ``optim="adamw_torch_fused"``, its default with torch >= 2.8)."""
    params = list(params)
    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=True, **kwargs)
    except (RuntimeError, ValueError):  # a device or dtype without the fused kernel
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, **kwargs)


def autocast(device: torch.device | str):
    """bf16 autocast on CUDA; a no-op context elsewhere (CPU bf16 is slower than fp32 at this size)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def forward_logits(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_last: int | None = None):
    """Logits ``[B, n_last, V]`` (float32) predicting tokens ``L-n_last+1 .. L`` of each row, i.e. the logits at
    positions ``L-n_last-1 .. L-2``, aligned with the last ``n_last`` tokens as labels.

    With ``n_last=None`` every next-token logit is returned: ``[B, L-1, V]``. Rows whose first ``L - n_last`` tokens
    repeat (a GRPO group's shared prompt) have them encoded once (:mod:`rlprep.prefix_sharing`; same values up to
    float rounding).
    """
    L = input_ids.shape[1]
    n_last = L - 1 if n_last is None else n_last
    if not 0 < n_last < L:
        raise ValueError(f"n_last must be in 1..{L - 1} for sequences of length {L}, got {n_last}")
    with autocast(input_ids.device):
        if n_last < L - 1:  # rows that repeat their first L - n_last tokens (GRPO's groups) encode them once
            shared = prefix_sharing.completion_logits(model, input_ids, attention_mask, n_last)
            if shared is not None:
                return shared  # (B, n_last, V)
        out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,  # no KV cache to build
                    position_ids=position_ids_from_mask(attention_mask), logits_to_keep=n_last + 1)
    logits = out.logits[:, :-1].float()  # (B, n_last, V): position t predicts token t+1
    return logits


def logprobs_and_entropy(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token ``log p(label)`` and entropy of the predictive distribution, both ``[B, T]``.

    logits: ``[B, T, V]`` aligned with labels ``[B, T]``; a masked vocabulary entry (logit -inf) has p = 0 and adds
    nothing to the entropy (:func:`softmax_entropy`).
    """
    logp_all = F.log_softmax(logits, dim=-1)  # (B, T, V)
    logp = logp_all.gather(-1, labels.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return logp, softmax_entropy(logp_all)


def softmax_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of softmax(logits) over the last dim: ``[..., V] -> [...]``.

    -sum p log p with 0 log 0 = 0: a -inf logit (a masked vocabulary entry) contributes 0 and a zero gradient, where
    ``p * log p`` would give 0 * -inf = NaN. Equals ``torch.distributions.Categorical(logits=logits).entropy()``.
    """
    logp = F.log_softmax(logits, dim=-1)  # (..., V)
    finite = torch.where(torch.isneginf(logp), torch.zeros_like(logp), logp)  # select before the product (and its grad)
    return -(logp.exp() * finite).sum(-1)


def completion_logprobs(model, input_ids, attention_mask, n_completion: int, with_entropy: bool = False):
    """Log-probs ``[B, C]`` of the last ``C = n_completion`` tokens of each row (and entropy ``[B, C]``)."""
    logits = forward_logits(model, input_ids, attention_mask, n_completion)  # (B, C, V)
    logp, entropy = logprobs_and_entropy(logits, input_ids[:, -n_completion:])
    return (logp, entropy) if with_entropy else logp


def encode_pairs(tokenizer, prompts: list[str], completions: list[str], device, add_eos: bool = True,
                 max_length: int | None = None):
    """Tokenize ``prompt + completion (+ eos)`` rows, left-padded to a common length.

    ``max_length`` (e.g. the model's ``n_positions``) cuts over-long completions on the right (the eos goes too):
    the model cannot score a token beyond its last position.

    Returns:
        input_ids: ``[B, L]``; attention_mask: ``[B, L]`` (0 on left padding);
        completion_mask: ``[B, L]``, 1 on completion tokens and the eos, 0 on prompt and padding.
    """
    rows, comp_lens = tokenize_pairs(tokenizer, prompts, completions, add_eos, max_length)
    return pad_left(rows, comp_lens, pad_id(tokenizer), device)


def tokenize_pairs(tokenizer, prompts: list[str], completions: list[str], add_eos: bool = True,
                   max_length: int | None = None) -> tuple[list[list[int]], list[int]]:
    """The unpadded token rows ``prompt + completion (+ eos)`` and each row's completion length (eos included),
    cut to ``max_length`` as :func:`encode_pairs` says; two batched tokenizer calls, not two per row."""
    if len(prompts) != len(completions):
        raise ValueError(f"got {len(prompts)} prompts but {len(completions)} completions; pass one per prompt")
    eos = tokenizer.eos_token_id
    prompt_rows = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    completion_rows = tokenizer(list(completions), add_special_tokens=False)["input_ids"]
    rows, comp_lens = [], []
    for p, c in zip(prompt_rows, completion_rows):
        c = c + ([eos] if add_eos else [])
        if max_length is not None and len(p) + len(c) > max_length:
            if len(p) >= max_length:
                raise ValueError(f"a prompt of {len(p)} tokens leaves no room for a completion within "
                                 f"max_length={max_length}; shorten the prompt")
            c = c[:max_length - len(p)]
        rows.append(p + c)
        comp_lens.append(len(c))
    return rows, comp_lens


def pad_left(rows: list[list[int]], comp_lens: list[int], pad: int, device):
    """Left-pad token ``rows`` to their longest: ``(input_ids, attention_mask, completion_mask)``, each ``[B, L]``
    long; the completion mask covers each row's last ``comp_lens[b]`` tokens."""
    L = max(len(r) for r in rows)
    input_ids = torch.tensor([[pad] * (L - len(r)) + r for r in rows], dtype=torch.long)  # (B, L)
    attention_mask = torch.tensor([[0] * (L - len(r)) + [1] * len(r) for r in rows], dtype=torch.long)  # (B, L)
    completion_mask = torch.tensor([[0] * (L - n_c) + [1] * n_c for n_c in comp_lens], dtype=torch.long)  # (B, L)
    return input_ids.to(device), attention_mask.to(device), completion_mask.to(device)


def truncated_rows(completion_ids: torch.Tensor, completion_mask: torch.Tensor, eos_id: int) -> torch.Tensor:
    """``[B]`` bool: rows whose completion never produced eos (cut at ``max_new_tokens``)."""
    has_eos = ((completion_ids == eos_id) & completion_mask.bool()).any(dim=-1)
    return ~has_eos


def completion_mask_default(rollout, eos_id: int, mask_truncated: bool) -> torch.Tensor:
    """The loss mask ``[B, C]``: the rollout's completion mask, minus truncated rows when ``mask_truncated``."""
    mask = rollout.completion_mask.float()
    if mask_truncated:
        keep = ~truncated_rows(rollout.completion_ids, rollout.completion_mask, eos_id)  # (B,)
        mask = mask * keep.unsqueeze(-1).float()
    return mask


def resolve_device(device: str | None, profile) -> torch.device:
    """The config's device, else the profile's; a clear error when CUDA was asked for but is missing."""
    name = device or profile.device
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} was asked for but torch sees no CUDA; use device='cpu'")
    return torch.device(name)


def start_policy(config, policy, tokenizer, load: Callable) -> tuple:
    """What a trainer does first: ``(profile, device, policy, tokenizer)`` for ``config`` (its ``profile``,
    ``device`` and ``seed``; torch, numpy and random are seeded), the policy in train mode on the device.
    ``load(profile) -> (policy, tokenizer)`` builds the cached start when ``policy`` is None."""
    from rlprep.profiles import get_profile

    profile = get_profile(config.profile)
    device = resolve_device(config.device, profile)
    seed_everything(config.seed)
    if policy is None:
        policy, tokenizer = load(profile)
    if tokenizer is None:
        raise ValueError("pass the tokenizer together with the policy (load_policy returns both)")
    return profile, device, policy.to(device).train(), tokenizer


def held_out_prompts(task, n: int, seed: int) -> list[str]:
    """``n`` prompts of the task's test split (examples with a ``prompt``, or plain prompt strings)."""
    return [ex.prompt if hasattr(ex, "prompt") else ex for ex in task.sample(n, split="test", seed=seed)]


def unwrap_model(model):
    """The plain module inside a data-parallel wrapper (DDP, ``nn.DataParallel``) or a ``torch.compile``'d model.

    Code that samples with the policy (``rollout.generate`` reads ``model.config``) or saves it must use this:
    the wrapper hides the model's attributes, and sampling through it would start gradient bookkeeping
    that each process would do a different number of times.
    """
    from torch.nn.parallel import DistributedDataParallel

    while True:
        if isinstance(model, (DistributedDataParallel, torch.nn.DataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod"):  # torch.compile's OptimizedModule
            model = model._orig_mod
        else:
            return model


def frozen_copy(model):
    """A frozen deep copy of ``model`` in eval mode (the reference policy)."""
    import copy

    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref

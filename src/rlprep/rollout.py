"""Sampling completions and scoring them: the two operations every RL-for-LLM loop is built from.

* :func:`generate` samples a batch of completions with the KV cache and records, for each sampled token,
  its log-probability under the distribution it was drawn from (the "old" log-probs of PPO/GRPO).
* :func:`token_logprobs` re-scores given sequences with teacher forcing (the "new" log-probs, with grad).

Conventions: prompts are **left-padded** to a common length P, so completions start at the same column.
GPT-2 has learned absolute positions, and a plain forward pass numbers positions 0..L-1 including the pad
columns, which shifts every real token of a padded row. Both functions therefore pass
``position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)`` so each row's first real token is at 0.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rlprep import prefix_sharing
from rlprep.model_inputs import kv_cache_name, position_ids_from_mask


@dataclass
class Rollout:
    """A batch of B sampled completions (C = longest completion, ``max_new_tokens`` at most)."""

    input_ids: torch.Tensor
    """[B, P+C] long: left-padded prompts, then completions (pad after a row's eos)."""
    attention_mask: torch.Tensor
    """[B, P+C] long: 1 on real prompt tokens and on completion tokens up to and including eos."""
    prompt_len: int
    """P, the padded prompt length: completions are ``input_ids[:, P:]``."""
    completion_ids: torch.Tensor
    """[B, C] long: sampled tokens (pad after eos)."""
    completion_mask: torch.Tensor
    """[B, C] long: 1 from the first completion token up to and including eos, 0 after."""
    logprobs: torch.Tensor
    """[B, C] float32: log-prob of each sampled token under the sampling distribution, 0 where masked."""
    texts: list[str]
    """B decoded completions, without eos or pad."""
    prompts: list[str]
    """The B prompts as given."""




def pad_id(tokenizer) -> int:
    """The id that fills padding: the tokenizer's pad token, else its eos."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

def select_rows(rollout: Rollout, rows: torch.Tensor) -> Rollout:
    """A copy of ``rollout`` holding only ``rows`` ([n] long indices into B), in that order."""
    import copy

    picked = copy.copy(rollout)
    for name in ("input_ids", "attention_mask", "completion_ids", "completion_mask", "logprobs"):
        value = getattr(rollout, name, None)
        if isinstance(value, torch.Tensor):
            setattr(picked, name, value[rows.to(value.device)])  # (n, ...)
    for name in ("texts", "prompts"):
        value = getattr(rollout, name, None)
        if isinstance(value, list):
            setattr(picked, name, [value[i] for i in rows.tolist()])
    return picked


def _left_pad(tokenizer, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    rows = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]  # one batched call (fast tokenizer)
    for i, row in enumerate(rows):
        if not row:
            raise ValueError(f"prompt {i} is empty: every prompt needs at least one token")
    width = max(len(r) for r in rows)
    pad = pad_id(tokenizer)
    input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], dtype=torch.long)  # (B, P)
    attention_mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], dtype=torch.long)
    return input_ids, attention_mask


@torch.no_grad()
def generate(model, tokenizer, prompts: list[str], max_new_tokens: int, temperature: float = 1.0,
             seed: int | None = None) -> Rollout:
    """Sample one completion per prompt, batched, with the KV cache; stop each row at eos (a row that has emitted
    eos leaves the batch and the cache, so later steps compute only the rows still sampling). A prompt that appears
    several times is encoded once (:mod:`rlprep.prefix_sharing`).

    Args:
        model: a causal LM (``GPT2LMHeadModel``); its mode is left as is (use eval mode for sampling).
        tokenizer: its tokenizer; prompts are tokenized without special tokens and left-padded here,
            whatever the tokenizer's ``padding_side``.
        prompts: B non-empty strings.
        max_new_tokens: the most tokens sampled per row (C <= max_new_tokens).
        temperature: > 0 samples from softmax(logits / temperature); 0 decodes greedily, and the
            recorded log-probs are then those of the untempered model (softmax(logits)).
        seed: seeds the ``torch.Generator`` that draws the tokens (None: a fresh random seed).

    Returns:
        :class:`Rollout` with ``logprobs[b, t] = log softmax(logits / temperature)[sampled token]``.
    """

    if not prompts:
        raise ValueError("prompts is empty: pass at least one prompt")
    if isinstance(prompts, str):
        raise ValueError("prompts must be a list of strings, not one string: wrap it as [prompt]")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    if temperature < 0 or temperature != temperature:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    input_ids, prompt_mask = _left_pad(tokenizer, prompts)
    batch, prompt_len = input_ids.shape
    n_positions = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
    if n_positions is not None and prompt_len + max_new_tokens > n_positions:
        raise ValueError(
            f"longest prompt ({prompt_len} tokens) + max_new_tokens ({max_new_tokens}) exceeds the model's "
            f"n_positions={n_positions}: shorten the prompts or lower max_new_tokens")
    device = next(model.parameters()).device
    input_ids, prompt_mask = input_ids.to(device), prompt_mask.to(device)
    eos = tokenizer.eos_token_id
    pad = pad_id(tokenizer)
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)

    autocast_ctx = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
                    else contextlib.nullcontext())
    cache_name = kv_cache_name(model)
    tokens = torch.full((batch, max_new_tokens), pad, dtype=torch.long, device=device)  # (B, max_new)
    logps = torch.zeros((batch, max_new_tokens), dtype=torch.float32, device=device)  # (B, max_new)
    masks = torch.zeros((batch, max_new_tokens), dtype=torch.long, device=device)  # (B, max_new)
    # The model's batch holds only the rows that have not emitted eos ("compaction"): `rows` maps it back to B.
    # model.generate keeps computing finished rows as padding; dropping them from the batch and the KV cache
    # saves those forward passes (docs/benchmarks-notes.md, issue 21's section).
    rows = torch.arange(batch, device=device)  # (b,)
    attention_mask = prompt_mask  # (b, L): the live rows' mask, one column longer each step
    position_ids = position_ids_from_mask(prompt_mask)  # (b, P), then (b, 1): each row's next position
    next_position = prompt_mask.sum(-1, keepdim=True)  # (b, 1) position of the first completion token
    step_ids = input_ids  # what the next forward consumes: the whole prompt first, then one token
    # A prompt repeated in the batch (GRPO's G samples of it) is encoded once and its KV cache copied to its rows.
    shared = prefix_sharing.shared_prompts(model, input_ids, prompt_mask)
    past, n_steps = None, 0
    for t in range(max_new_tokens):
        with autocast_ctx:  # bf16 on CUDA (the trainers' forward passes use the same autocast), no-op on CPU
            if t == 0 and shared is not None:
                past, logits = prefix_sharing.encode_prompts_once(model, input_ids, prompt_mask, *shared)
            else:
                out = model(input_ids=step_ids, attention_mask=attention_mask, position_ids=position_ids,
                            use_cache=True, logits_to_keep=1, **{cache_name: past})
                past, logits = getattr(out, cache_name), out.logits[:, -1, :]  # the KV cache, (b, V)
        logits = logits.float()  # (b, V)
        if temperature == 0:
            logp_all = F.log_softmax(logits, dim=-1)
            token = logp_all.argmax(-1)  # (b,)
        else:
            logp_all = F.log_softmax(logits / temperature, dim=-1)
            token = torch.multinomial(logp_all.exp(), 1, generator=generator).squeeze(-1)  # (b,)
        tokens[rows, t] = token
        logps[rows, t] = logp_all.gather(-1, token[:, None]).squeeze(-1)
        masks[rows, t] = 1
        n_steps = t + 1
        alive = token != eos  # (b,)
        if not alive.all():  # drop the rows that just emitted eos from the batch and the cache
            keep = alive.nonzero().squeeze(-1)  # (b',)
            if len(keep) == 0:
                break
            past.reorder_cache(keep)
            rows, token, next_position = rows[keep], token[keep], next_position[keep]  # (b',), (b',), (b', 1)
            attention_mask = attention_mask[keep]  # (b', L)
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((len(rows), 1))], dim=1)  # (b, L+1)
        position_ids = next_position + t  # (b, 1)
        step_ids = token[:, None]  # (b, 1)

    completion_ids, completion_mask = tokens[:, :n_steps], masks[:, :n_steps]  # (B, C)
    kept = [[t for t, m in zip(row, mask) if m and t != eos]
            for row, mask in zip(completion_ids.tolist(), completion_mask.tolist())]
    texts = tokenizer.batch_decode(kept, skip_special_tokens=True)  # one batched call
    return Rollout(
        input_ids=torch.cat([input_ids, completion_ids], dim=1),
        attention_mask=torch.cat([prompt_mask, completion_mask], dim=1),
        prompt_len=prompt_len,
        completion_ids=completion_ids,
        completion_mask=completion_mask,
        logprobs=logps[:, :n_steps],
        texts=texts,
        prompts=list(prompts),
    )


def token_logprobs(model, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Teacher-forced log-probs: ``out[b, t] = log p(input_ids[b, t+1] | input_ids[b, :t+1])``.

    Args:
        input_ids: [B, L] long, rows left-padded (or not padded).
        attention_mask: [B, L], 1 on real tokens.

    Returns:
        [B, L-1] float32, differentiable w.r.t. the model (no ``no_grad`` here). Entries whose target
        token is padding are meaningless: mask them (e.g. with ``attention_mask[:, 1:]`` or a
        completion mask). Position ids come from the attention mask, so a left-padded row scores exactly
        as it would unpadded.
    """
    if input_ids.dim() != 2 or input_ids.shape != attention_mask.shape:
        raise ValueError(f"input_ids and attention_mask must both be [B, L], got {tuple(input_ids.shape)} "
                         f"and {tuple(attention_mask.shape)}")
    if input_ids.shape[1] < 2:
        raise ValueError("need sequences of at least 2 tokens to score a next token")
    out = model(input_ids=input_ids, attention_mask=attention_mask,
                position_ids=position_ids_from_mask(attention_mask), use_cache=False)
    logits = out.logits[:, :-1, :].float()  # (B, L-1, V)
    targets = input_ids[:, 1:]  # (B, L-1)
    picked = logits.gather(-1, targets[..., None]).squeeze(-1)  # (B, L-1)
    return picked - torch.logsumexp(logits, dim=-1)

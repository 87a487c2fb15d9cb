"""lab05_grpo's demo helpers: run the trainer's W11 reproductions with the learner's functions, and GSPO's ratios.

- :func:`learner_references` temporarily makes the learner's functions the references that
  ``rlprep.trainers`` falls back to (``rlprep.algos.grpo.<name>``), so helpers that take no injection arguments
  (``rlprep.trainers.grpo.reproduce_zero_loss``) run the learner's code too. Everything is restored on exit.
- :func:`ratio_spread` takes a few GRPO updates on one batch and returns the per-token importance ratios
  ρ_t = π_θ/π_old and GSPO's length-normalised sequence ratios s_i = (π_θ(o_i)/π_old(o_i))^(1/|o_i|)
  (Zheng et al. 2025, arXiv 2507.18071) of the same samples, to compare their spread (W20).
"""

from __future__ import annotations

import contextlib
from typing import Callable

import torch

GRADED = ("group_advantages", "kl_k3", "grpo_loss", "diagnose_zero_loss")


@contextlib.contextmanager
def learner_references(**functions: Callable):
    """Inside the block, ``rlprep.algos.grpo.<name>`` is the learner's function for each name given.

    Only the graded names are accepted (a typo would otherwise silently leave the reference in place).
    """
    import rlprep.algos.grpo as algos_grpo

    unknown = sorted(set(functions) - set(GRADED))
    if unknown:
        raise ValueError(f"learner_references: unknown function(s) {unknown}; expected some of {list(GRADED)}")
    saved = {name: getattr(algos_grpo, name) for name in functions}
    try:
        for name, fn in functions.items():
            if not callable(fn):
                raise ValueError(f"learner_references: {name} must be a function, got {type(fn).__name__}")
            setattr(algos_grpo, name, fn)
        yield
    finally:
        for name, fn in saved.items():
            setattr(algos_grpo, name, fn)


def ratio_spread(policy, tokenizer, task, config, *, group_advantages: Callable | None = None,
                 grpo_loss: Callable | None = None, kl_k3: Callable | None = None, n_updates: int = 4,
                 seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_updates`` GRPO gradient steps on one sampled batch, then the ratios against the sampling policy.

    Args:
        policy, tokenizer, task: the arithmetic policy (trained in place: pass a copy), its tokenizer and task.
        config: a ``GRPOConfig`` (prompts_per_step, group_size, max_new_tokens, temperature, lr, eps_low/high,
            scale_rewards, aggregation are used).
        group_advantages, grpo_loss: the functions to use (default: the references); ``kl_k3`` is unused
            (accepted so a lab can pass the same dict of functions everywhere).
        n_updates: gradient steps on the batch (>= 1; more steps = more off-policy = wider spread).

    Returns:
        ``(token_ratios [n_valid_tokens], sequence_ratios [n_rows_with_a_valid_token])``, both detached, on CPU.
    """
    from rlprep.algos import grpo as ref
    from rlprep.profiles import get_profile
    from rlprep.rollout import generate
    from rlprep.trainers.sequences import completion_logprobs, resolve_device

    if n_updates < 1:
        raise ValueError(f"n_updates must be >= 1, got {n_updates}")
    group_advantages = group_advantages or ref.group_advantages
    grpo_loss = grpo_loss or ref.grpo_loss
    device = resolve_device(config.device, get_profile(config.profile))
    policy = policy.to(device)
    prompts = [ex.prompt for ex in task.sample(config.prompts_per_step, split="train", seed=seed)]
    repeated = [p for p in prompts for _ in range(config.group_size)]  # (N*G,) consecutive groups
    policy.eval()
    with torch.no_grad():
        out = generate(policy, tokenizer, repeated, max_new_tokens=config.max_new_tokens,
                       temperature=config.temperature, seed=seed)
    policy.train()
    rewards = torch.tensor([float(task.reward(p, t)) for p, t in zip(repeated, out.texts)], device=device)  # (N*G,)
    advantages = group_advantages(rewards, config.group_size, scale=config.scale_rewards).detach().float()  # (B,)
    ids, attn = out.input_ids.to(device), out.attention_mask.to(device)
    mask = out.completion_mask.to(device).float()  # (B, C)
    C = out.completion_ids.shape[1]
    with torch.no_grad():
        old = completion_logprobs(policy, ids, attn, C)  # (B, C) the sampling policy
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=0.0)
    for _ in range(n_updates):
        new = completion_logprobs(policy, ids, attn, C)  # (B, C)
        loss = grpo_loss(new, old, advantages, mask, eps_low=config.eps_low, eps_high=config.eps_high,
                         aggregation=config.aggregation)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        new = completion_logprobs(policy, ids, attn, C)  # (B, C)
        token_ratios = torch.exp(new - old)[mask.bool()]  # (n_valid,)
        rows = mask.sum(-1) > 0  # (B,)
        seq_ratios = ref.gspo_sequence_ratio(new, old, mask)[rows]  # (n_rows,)
    return token_ratios.float().cpu(), seq_ratios.float().cpu()

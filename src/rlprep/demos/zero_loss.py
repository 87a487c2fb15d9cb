"""W11 "my GRPO loss is 0", reproduced on the real arithmetic policy: one :class:`GRPOTrainer` step set up so
the loss is zero for each cause, and the logged stats that ``rlprep.algos.grpo.diagnose_zero_loss`` reads.

Used by lab05_grpo's demo and notebook 06. GRPO: Shao et al. 2024, arXiv 2402.03300, Eq. 3.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Callable

import torch

from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer
from rlprep.trainers.sequences import truncated_rows

ZERO_LOSS_CAUSES = ("on_policy", "too_easy", "too_hard", "all_truncated", "mask_bug")

GROUP_KINDS = {
    "all_correct": lambda rate: rate == 1.0,   # too easy: no reward spread
    "all_wrong": lambda rate: rate == 0.0,     # too hard: no reward spread
    "mixed": lambda rate: 0.0 < rate < 1.0,    # a learning signal in every group
}


def completion_mask_planted_bug(rollout, eos_id: int, mask_truncated: bool) -> torch.Tensor:
    """A **planted bug**: the truncation filter is inverted, so it keeps only the rows that were cut off and
    drops every completion that finished with eos. On a policy that always finishes, no token is left in the
    loss. Returns the ``[B, C]`` loss mask, like ``rlprep.trainers.grpo.completion_mask_default``."""
    truncated = truncated_rows(rollout.completion_ids, rollout.completion_mask, eos_id)  # (B,)
    return rollout.completion_mask.float() * truncated.unsqueeze(-1).float()


def zero_loss_stats(row: dict, config: GRPOConfig) -> dict[str, float]:
    """The dict ``diagnose_zero_loss`` reads, from one logged row of a GRPO run."""
    return {"loss": row["loss/policy"], "grad_norm": row["stats/grad_norm"],
            "frac_zero_std_groups": row["stats/frac_zero_std_groups"],
            "frac_valid_tokens": row["stats/frac_valid_tokens"], "clip_frac": row["stats/clipfrac_one_sided"],
            "beta": config.beta, "num_iterations": config.num_iterations}


def reproduce_zero_loss(cause: str, policy=None, tokenizer=None, task=None, *, config: GRPOConfig | None = None,
                        pool_size: int = 96, group_advantages: Callable | None = None,
                        grpo_loss: Callable | None = None, kl_k3: Callable | None = None) -> dict[str, float]:
    """One GRPO step on the real policy set up so the loss is zero for ``cause``; returns :func:`zero_loss_stats`.

    - ``on_policy``: groups with reward spread (picked from ``pool_size`` sampled groups, so a warm start that
      is almost always right still has some), μ = 1, β = 0, sequence aggregation: the loss is 0 but the gradient
      is not ("expected"). (With token aggregation the loss is only near 0: rows of different length weigh differently.)
    - ``too_easy`` / ``too_hard``: a batch of groups whose G samples are all right (2-digit additions the policy
      has mastered) / all wrong (3-digit multiplications, level 6), picked from ``pool_size`` sampled groups:
      every group has zero reward spread, so every advantage is 0.
    - ``all_truncated``: ``max_new_tokens=1`` with ``mask_truncated=True``: no completion reaches eos, no token
      is left in the loss.
    - ``mask_bug``: :func:`completion_mask_planted_bug` (inverted truncation filter) on normal rollouts.

    The policy is not changed (its weights are restored after the step). ``group_advantages``, ``grpo_loss`` and
    ``kl_k3`` are the graded functions, as in ``train_grpo`` (default: the references); a lab passes its own.
    """
    if cause not in ZERO_LOSS_CAUSES:
        raise ValueError(f"cause must be one of {ZERO_LOSS_CAUSES}, got {cause!r}")
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.warm_start import load_warm_start, warm_start_kwargs

    base = config or GRPOConfig.for_profile()
    if policy is None:
        policy, tokenizer = load_warm_start(base.profile, **warm_start_kwargs(base))
    task = task or get_task("arithmetic")
    saved = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    was_training = policy.training
    overrides = dict(steps=1, num_iterations=1, beta=0.0, dynamic_sampling=False, log_kl=False, eval_size=1)
    mask_fn = None
    if cause == "on_policy":  # sequence aggregation: the loss is -(1/N) sum of centred advantages = 0 exactly
        overrides.update(aggregation="sequence")
    elif cause == "all_truncated":
        overrides.update(max_new_tokens=1, mask_truncated=True)
    elif cause == "mask_bug":
        mask_fn = completion_mask_planted_bug
    cfg = GRPOConfig(**{**asdict(base), **overrides})
    try:
        trainer = GRPOTrainer(cfg, policy, tokenizer, task, group_advantages=group_advantages, grpo_loss=grpo_loss,
                              kl_k3=kl_k3, completion_mask_fn=mask_fn)
        kind = {"on_policy": "mixed", "too_easy": "all_correct", "too_hard": "all_wrong"}.get(cause)
        if kind:  # a warm start that answers (almost) everything right would make on_policy look too_easy
            batch = _group_batch(policy, tokenizer, task, cfg, kind, pool_size, trainer.device)
            cfg.prompts_per_step = len(batch[1]) // cfg.group_size  # the step's batch is exactly these groups
            trainer.sample = lambda prompts: batch  # noqa: E731  (the step trains on the selected groups)
        row = trainer.step()
    finally:
        policy.load_state_dict(saved)
        policy.train(was_training)
    stats = zero_loss_stats(row, cfg)
    stats["reward_mean"] = row["reward/mean"]
    return stats


def _group_batch(policy, tokenizer, task, cfg: GRPOConfig, kind: str, pool_size: int, device):
    """A batch of ``prompts_per_step`` groups of ``kind`` (see ``GROUP_KINDS``), taken from a sampled pool:
    ``(rollout, rewards [n*G])``.

    All wrong: 3-digit multiplication (level 6), far beyond the 2-digit-addition warm start. All correct and
    mixed: the warm start's own level, keeping the prompts whose G samples are all right / neither all right
    nor all wrong.
    """
    from rlprep.rollout import select_rows
    from rlprep.tinyworld.tasks.arithmetic import sample_success_rates

    level = 6 if kind == "all_wrong" else 2
    pool = [ex.prompt for ex in task.sample(pool_size, split="train", seed=cfg.seed + 777, level=level)]
    G = cfg.group_size
    rates, out, rewards = sample_success_rates(policy, tokenizer, task, pool, G, cfg.max_new_tokens,
                                               cfg.temperature, seed=cfg.seed + 778, return_rollout=True)
    groups = [i for i, r in enumerate(rates) if GROUP_KINDS[kind](r)][:cfg.prompts_per_step]
    if not groups:
        raise ValueError(f"no {kind.replace('_', '-')} prompt group in a pool of {pool_size}; pass a larger pool_size")
    rows = torch.tensor([g * G + k for g in groups for k in range(G)])  # (n*G,)
    return select_rows(out, rows), torch.tensor(rewards, dtype=torch.float32, device=device)[rows.to(device)]

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
            trainer.sample = lambda prompts: batch  # the step trains on the selected groups
        row = trainer.step()
    finally:
        policy.load_state_dict(saved)
        policy.train(was_training)
    stats = zero_loss_stats(row, cfg)
    stats["reward_mean"] = row["reward/mean"]
    # TRL: completions/clipped_ratio; it tells the two causes that leave no token to score apart
    stats["frac_truncated"] = row["stats/frac_truncated"]
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


# --- W11: how the loss *becomes* 0 mid-training, and the zeros that are only in the log --------------------------

def zero_std_by_temperature(policy, tokenizer, task=None, temperatures=(1.0, 0.5, 0.2, 0.05), *, pool_size: int = 48,
                            group_size: int = 8, max_new_tokens: int = 8, level: int = 2,
                            seed: int = 0) -> list[dict[str, float]]:
    """Sample ``group_size`` completions per prompt at each temperature; a sharper policy stands in for entropy
    collapse. Returns one row per temperature: ``frac_zero_std_groups`` (the groups whose rewards are all equal,
    so every advantage is 0), ``frac_identical_groups`` (the groups whose G completions are one string) and
    ``accuracy``. The same prompts and seed at every temperature."""
    import numpy as np

    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.tasks.arithmetic import sample_success_rates

    task = task or get_task("arithmetic")
    prompts = [ex.prompt for ex in task.sample(pool_size, split="train", seed=seed + 991, level=level)]
    rows = []
    for temperature in temperatures:
        rates, out, _ = sample_success_rates(policy, tokenizer, task, prompts, group_size, max_new_tokens,
                                             temperature, seed=seed, return_rollout=True)
        texts = np.array(out.texts, dtype=object).reshape(len(prompts), group_size)  # (P, G)
        rows.append({"temperature": float(temperature),
                     "frac_zero_std_groups": float(np.isin(rates, (0.0, 1.0)).mean()),
                     "frac_identical_groups": float(np.mean([len(set(g)) == 1 for g in texts])),
                     "accuracy": float(rates.mean())})
    return rows


def split_group_losses(rewards: torch.Tensor, group_size: int, micro_batch: int, seed: int = 0) -> dict:
    """One on-policy GRPO step (ratio 1, β = 0, sequence aggregation) of a toy policy with one logit per
    completion, on a batch of groups (consecutive) cut into micro-batches of ``micro_batch`` completions, each
    holding part of one group (``group_size`` a multiple of ``micro_batch``).

    Returns ``micro_losses`` (each micro-batch's loss with the advantages of the whole groups: not 0),
    ``logged_loss`` (their mean, what a step logger prints: 0 up to rounding), ``grad_norm`` of that step, and
    ``grad_norm_split_stats``: the gradient when the group statistics are (wrongly) computed inside each
    micro-batch, where a part of a group can be all right or all wrong and lose its advantage.
    """
    from rlprep.algos.grpo import group_advantages, grpo_loss

    n = rewards.numel()
    if micro_batch < 2 or group_size % micro_batch or n % group_size:
        raise ValueError(f"need micro_batch >= 2 dividing group_size ({group_size}), which divides the batch ({n}); "
                         f"got micro_batch={micro_batch}")
    gen = torch.Generator().manual_seed(seed)
    theta = (0.1 * torch.randn(n, generator=gen, dtype=torch.float64)).requires_grad_(True)  # one logit per completion
    logp = torch.nn.functional.logsigmoid(theta).unsqueeze(1)  # (N*G, 1) log-prob of each sampled completion
    ones = torch.ones(micro_batch, 1, dtype=torch.float64)
    chunks = [slice(i, i + micro_batch) for i in range(0, n, micro_batch)]

    def step_loss(advantages):  # the logged loss: mean of the micro-batch losses
        micro = [grpo_loss(logp[c], logp[c].detach(), advantages[c], ones, aggregation="sequence") for c in chunks]
        return micro, torch.stack(micro).mean()

    micro, logged = step_loss(group_advantages(rewards.double(), group_size))  # whole-group statistics
    (grad,) = torch.autograd.grad(logged, theta, retain_graph=True)
    split_adv = torch.cat([group_advantages(rewards[c].double(), micro_batch) for c in chunks])  # partial groups
    _, split = step_loss(split_adv)
    (grad_split,) = torch.autograd.grad(split, theta)
    return {"micro_losses": [m.item() for m in micro], "logged_loss": logged.item(), "grad_norm": float(grad.norm()),
            "grad_norm_split_stats": float(grad_split.norm())}


def kl_gradient_when_tied(beta: float = 0.04, n_tokens: int = 64, drift: float = 0.5, seed: int = 0) -> dict:
    """Every group tied (all advantages 0) but the policy has drifted from the reference: the GRPO loss is
    β·mean(k3) alone, small, and its gradient is not 0: it pulls the policy back towards π_ref and nowhere else.

    Returns ``loss``, ``grad_norm`` and ``k3_before`` / ``k3_after`` (mean k3 before and after one SGD step of lr 1).
    """
    from rlprep.algos.grpo import grpo_loss, kl_k3

    gen = torch.Generator().manual_seed(seed)
    ref_logp = -torch.rand(n_tokens, 1, generator=gen, dtype=torch.float64) - 0.5  # (T, 1)
    theta = (ref_logp + drift * torch.randn(n_tokens, 1, generator=gen, dtype=torch.float64)).requires_grad_(True)
    zeros = torch.zeros(n_tokens, dtype=torch.float64)  # every advantage 0
    mask = torch.ones_like(ref_logp)
    loss = grpo_loss(theta, theta.detach(), zeros, mask, beta=beta, ref_logp=ref_logp)
    (grad,) = torch.autograd.grad(loss, theta)
    with torch.no_grad():
        before = float(kl_k3(theta, ref_logp).mean())
        after = float(kl_k3(theta - grad, ref_logp).mean())
    return {"loss": loss.item(), "grad_norm": float(grad.norm()), "k3_before": before, "k3_after": after}

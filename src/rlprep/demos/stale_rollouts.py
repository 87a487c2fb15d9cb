"""GRPO on rollouts that are k optimizer steps stale, with and without the importance-sampling correction.

lab06_importance_sampling's GPT-2 demo. In asynchronous RL (a rollout worker that lags the trainer), the
completions of step s were sampled by the policy of step s - k: the behavior policy μ = π_{θ_{s-k}}, while the
gradient is taken at π_θ. Two updates on the same stale batch:

- ``correction="none"``: treat the batch as on-policy. The per-token loss is ``-A · log π_θ(y_t)``, whose
  gradient estimates E_μ[A ∇log π_θ], not E_π[A ∇log π_θ]: biased by the mismatch.
- ``correction="tis"``: weight each token by the truncated importance ratio ``w_t = min(π_θ(y_t) / μ(y_t), C)``
  (detached), as in V-trace (Espeholt et al. 2018, arXiv 1802.01561, Eq. 1) and the TIS fix for
  rollout/trainer mismatch (Yao, Liu et al. 2025, "Your Efficient RL Framework Secretly Brings You Off-Policy
  RL Training"). With ``clip=None`` it is plain per-token IS.

Advantages are GRPO's group-normalised rewards (Shao et al. 2024, arXiv 2402.03300, Eq. 3), one per completion.
The weights come from ``importance_weights`` (lab06's graded function, injectable). Logged per step:
``reward/mean``, ``loss/policy``, ``stats/kl_behavior`` (mean over valid tokens of log μ − log π_θ, the k1
estimate of KL(μ‖π_θ) on samples from μ), ``stats/ess`` (effective sample size of the untruncated token
weights, (Σw)² / (n Σw²), 1 = on-policy), ``stats/weight_max``, ``stats/truncfrac`` (tokens whose weight was
truncated) and ``eval/accuracy`` (greedy, held-out) every ``eval_every`` steps.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from rlprep.profiles import Profile, get_profile

CORRECTIONS = ("none", "tis")


@dataclass
class StaleGRPOConfig:
    """One stale-rollout GRPO run. ``StaleGRPOConfig.for_profile("cpu", staleness=4)`` gives the lab's budget."""

    profile: str = "smoke"
    """Profile the arithmetic SFT policy is built for."""
    staleness: int = 0
    """k: the rollouts of step s are sampled by the policy after step s - k (0 = on-policy)."""
    correction: str = "none"
    """``"none"`` (treat stale samples as on-policy) or ``"tis"`` (truncated importance weights per token)."""
    clip: float | None = 2.0
    """Truncation level C of the TIS weights; None = untruncated IS. Ignored when ``correction="none"``."""
    steps: int = 10
    """Optimizer steps."""
    prompts_per_step: int = 8
    """Distinct prompts per step (N)."""
    group_size: int = 8
    """Completions per prompt (G >= 2); the advantage baseline is the group mean."""
    max_new_tokens: int = 6
    """Completion budget in tokens."""
    lr: float = 3e-4
    """AdamW learning rate (constant). Staleness matters more the further each step moves the policy."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold."""
    eval_every: int = 5
    """Greedy held-out accuracy every this many steps (and at the start and the end)."""
    eval_size: int = 100
    """Held-out prompts for ``eval/accuracy``."""
    seed: int = 0
    """Seeds prompts, sampling and torch; runs that differ only in ``correction`` see the same prompts."""

    def __post_init__(self) -> None:
        checks = [
            (self.staleness >= 0, f"staleness must be >= 0, got {self.staleness}"),
            (self.correction in CORRECTIONS, f"correction must be one of {CORRECTIONS}, got {self.correction!r}"),
            (self.clip is None or self.clip > 0, f"clip must be > 0 or None, got {self.clip}"),
            (self.steps >= 1, f"steps must be >= 1, got {self.steps}"),
            (self.prompts_per_step >= 1, f"prompts_per_step must be >= 1, got {self.prompts_per_step}"),
            (self.group_size >= 2, f"group_size must be >= 2 (a group of 1 has no baseline), got {self.group_size}"),
            (self.max_new_tokens >= 1, f"max_new_tokens must be >= 1, got {self.max_new_tokens}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.eval_every >= 1, f"eval_every must be >= 1, got {self.eval_every}"),
            (self.eval_size >= 1, f"eval_size must be >= 1, got {self.eval_size}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"StaleGRPOConfig: {message}")

    @classmethod
    def for_profile(cls, profile: str | Profile | None = None, **overrides) -> "StaleGRPOConfig":
        """smoke: seconds (CI); cpu: the lab's run on 2 cores; gpu: longer, bigger batches."""
        p = profile if isinstance(profile, Profile) else get_profile(profile)
        if p.name == "smoke":
            base = dict(steps=16, prompts_per_step=8, group_size=8, lr=3e-4, eval_every=8, eval_size=64)
        elif p.name == "cpu":
            base = dict(steps=40, prompts_per_step=16, group_size=8, lr=3e-4, eval_every=10, eval_size=200)
        else:
            base = dict(steps=int(40 * p.scale), prompts_per_step=64, group_size=16, lr=5e-4, eval_every=20,
                        eval_size=1000)
        base.update(overrides)
        return cls(profile=p.name, **base)


def token_loss(logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor):
    """Importance-weighted policy-gradient surrogate, averaged over valid tokens.

    ``-Σ_{b,t} w_bt · A_b · log π_θ(y_bt) · m_bt / Σ m``; its gradient is the (weighted) REINFORCE estimate.

    Args:
        logp: [B, C] log π_θ of the sampled tokens (with grad).
        advantages: [B] one advantage per completion.
        mask: [B, C] 1 on valid completion tokens.
        weights: [B, C] importance weights (no grad); ones for an uncorrected update.
    """
    if not (logp.shape == mask.shape == weights.shape) or advantages.shape != logp.shape[:1]:
        raise ValueError(f"need logp, mask, weights [B, C] and advantages [B]; got {tuple(logp.shape)}, "
                         f"{tuple(mask.shape)}, {tuple(weights.shape)}, {tuple(advantages.shape)}")
    per_token = -weights.detach() * advantages.unsqueeze(-1) * logp * mask  # (B, C)
    return per_token.sum() / mask.sum().clamp(min=1)


def run_stale_grpo(config: StaleGRPOConfig, policy=None, tokenizer=None, task=None, *,
                   importance_weights: Callable | None = None, group_advantages: Callable | None = None,
                   progress: bool = False) -> dict[str, list[float]]:
    """Train ``policy`` (default: a fresh arithmetic SFT policy of the profile) on k-step-stale rollouts.

    Returns a flat history ``{metric: [value per step]}`` plus ``"step"`` and ``"eval/step"``; the policy is
    trained in place. ``importance_weights(logp_target, logp_behavior, clip)`` and
    ``group_advantages(rewards, G)`` default to the references in ``rlprep.algos``.
    """
    from rlprep.algos.grpo import group_advantages as ref_group_advantages
    from rlprep.algos.importance_sampling import importance_weights as ref_importance_weights
    from rlprep.rollout import generate
    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.grpo import evaluate_accuracy
    from rlprep.trainers.sequences import completion_logprobs, resolve_device, seed_everything

    cfg = config
    profile = get_profile(cfg.profile)
    device = resolve_device(None, profile)
    importance_weights = importance_weights or ref_importance_weights
    group_advantages = group_advantages or ref_group_advantages
    seed_everything(cfg.seed)
    if policy is None:
        policy, tokenizer = load_policy("arithmetic", profile)
    task = task if task is not None else get_task("arithmetic")
    policy = policy.to(device).train()
    behavior = copy.deepcopy(policy).eval()
    for p in behavior.parameters():
        p.requires_grad_(False)
    # snapshots[0] is the policy after step s - k: the one that samples step s's rollouts
    snapshots = deque([copy.deepcopy(policy.state_dict())], maxlen=cfg.staleness + 1)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
    rng = np.random.default_rng(cfg.seed)
    eval_examples = task.sample(cfg.eval_size, split="test", seed=cfg.seed + 10_000)
    history: dict[str, list[float]] = {k: [] for k in ("step", "reward/mean", "loss/policy", "stats/kl_behavior",
                                                       "stats/ess", "stats/weight_max", "stats/truncfrac",
                                                       "eval/step", "eval/accuracy")}

    def evaluate(step):
        history["eval/step"].append(step)
        history["eval/accuracy"].append(evaluate_accuracy(policy, tokenizer, task, eval_examples, cfg.max_new_tokens))

    evaluate(0)
    steps = range(cfg.steps)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"GRPO k={cfg.staleness} {cfg.correction}")
    for step in steps:
        behavior.load_state_dict(snapshots[0])
        prompts = [ex.prompt for ex in task.sample(cfg.prompts_per_step, split="train",
                                                   seed=cfg.seed * 1_000_003 + step)]
        repeated = [p for p in prompts for _ in range(cfg.group_size)]  # (N*G,) consecutive groups
        with torch.no_grad():
            rollout = generate(behavior, tokenizer, repeated, max_new_tokens=cfg.max_new_tokens, temperature=1.0,
                               seed=int(rng.integers(2**31)))
        rewards = torch.tensor([float(task.reward(p, t)) for p, t in zip(repeated, rollout.texts)], device=device)
        advantages = group_advantages(rewards, cfg.group_size).detach().float()  # (B,)
        input_ids, attention_mask = rollout.input_ids.to(device), rollout.attention_mask.to(device)
        C = rollout.completion_ids.shape[1]
        mask = rollout.completion_mask.float().to(device)  # (B, C)
        with torch.no_grad():
            logp_behavior = completion_logprobs(behavior, input_ids, attention_mask, C)  # (B, C) log μ
        logp = completion_logprobs(policy, input_ids, attention_mask, C)  # (B, C) log π_θ, with grad
        valid = mask.bool()
        raw = torch.as_tensor(importance_weights(logp.detach()[valid], logp_behavior[valid]))  # (n,) untruncated
        if cfg.correction == "tis":
            weights = torch.ones_like(logp)
            weights[valid] = torch.as_tensor(importance_weights(logp.detach()[valid], logp_behavior[valid],
                                                                clip=cfg.clip), dtype=weights.dtype)
        else:
            weights = torch.ones_like(logp)
        loss = token_loss(logp, advantages, mask, weights)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
        optimizer.step()
        snapshots.append(copy.deepcopy(policy.state_dict()))
        raw = raw.double()
        history["step"].append(step + 1)
        history["reward/mean"].append(float(rewards.mean()))
        history["loss/policy"].append(float(loss.detach()))
        history["stats/kl_behavior"].append(float((logp_behavior[valid] - logp.detach()[valid]).mean()))
        history["stats/ess"].append(float(raw.sum() ** 2 / (raw.numel() * (raw ** 2).sum())))
        history["stats/weight_max"].append(float(raw.max()))
        history["stats/truncfrac"].append(float((raw > cfg.clip).double().mean()) if cfg.clip else 0.0)
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            evaluate(step + 1)
    policy.eval()
    return history


def staleness_sweep(profile: str | Profile | None = None, staleness=(0, 6), corrections=CORRECTIONS,
                    progress: bool = False, importance_weights: Callable | None = None,
                    **overrides) -> dict[tuple[int, str], dict[str, list[float]]]:
    """``run_stale_grpo`` for every (k, correction); k = 0 runs once (no correction needed on-policy).

    Every run starts from the same SFT policy and sees the same prompts.
    """
    runs = {}
    for k in staleness:
        for correction in (("none",) if k == 0 else corrections):
            cfg = StaleGRPOConfig.for_profile(profile, staleness=k, correction=correction, **overrides)
            runs[(k, correction)] = run_stale_grpo(cfg, progress=progress, importance_weights=importance_weights)
    return runs

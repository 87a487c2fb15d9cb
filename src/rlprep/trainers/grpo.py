"""GRPO / DAPO on the arithmetic task, in plain PyTorch, with the graded functions injectable.

One step (GRPO, Shao et al. 2024, arXiv 2402.03300, Eq. 3; DAPO, Yu et al. 2025, arXiv 2503.14476, Eq. 8):

1. sample ``prompts_per_step`` prompts and ``group_size`` completions per prompt from the current policy;
2. reward = the task's verifier (1.0 right, 0.0 wrong);
3. ``group_advantages(rewards, G)``: (r - group mean) / (group std + eps), broadcast to every token;
4. optional **dynamic sampling** (DAPO): drop groups whose rewards are all equal (zero advantage) and sample
   more prompts to fill the batch;
5. ``num_iterations`` (μ) gradient steps on the same rollouts with ``grpo_loss`` (clipped ratio, clip-higher
   ``eps_low/eps_high``, ``beta`` · k3 KL to the frozen SFT reference, token or sequence aggregation).
   ``importance_level="sequence"`` swaps the per-token ratio for GSPO's length-normalised sequence ratio
   (Zheng et al. 2025, arXiv 2507.18071, Eq. 7) without touching ``grpo_loss``.

Every step logs ``reward/mean``, ``loss/policy``, ``stats/grad_norm``, ``stats/frac_zero_std_groups``,
``stats/frac_valid_tokens``, ``stats/clipfrac``, ``stats/entropy``, ``stats/kl``, ``stats/completion_len``,
and ``eval/accuracy`` (greedy, held-out) every ``eval_every`` steps. :func:`zero_loss_stats` turns a row into
the dict that ``rlprep.algos.grpo.diagnose_zero_loss`` reads, and :func:`reproduce_zero_loss` recreates each
zero-loss cause on the real policy (W11).

Run: ``python -m rlprep.trainers.grpo --profile cpu``.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from rlprep.live import History, run_steps
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.sequences import (completion_logprobs, frozen_copy, reference, resolve_device,
                                       seed_everything, truncated_rows, unwrap_model)

AGGREGATIONS = ("token", "sequence")
WARM_START_FIELDS = {"sft_steps", "sft_stop", "sft_stop_accuracy"}
"""The config fields that pick the warm start (at most one is set)."""
SCALES = ("group", "batch", "none")
IMPORTANCE_LEVELS = ("token", "sequence")


@dataclass
class GRPOConfig:
    """Budget and knobs of one GRPO/DAPO run. ``GRPOConfig.for_profile("cpu")`` gives the lab's defaults."""

    profile: str = "smoke"
    """Profile the policy is built for (sizes the model; see ``rlprep.profiles``)."""
    steps: int = 10
    """Optimizer rounds (each = one batch of rollouts, then ``num_iterations`` gradient steps)."""
    prompts_per_step: int = 8
    """Distinct prompts per step (N)."""
    group_size: int = 8
    """Completions sampled per prompt (G); the advantage baseline is the group mean. Must be >= 2."""
    max_new_tokens: int = 6
    """Completion budget in tokens; completions cut here count as truncated."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts (1.0 = the policy's own distribution, as the ratio assumes)."""
    lr: float = 1e-4
    """AdamW learning rate (constant)."""
    eps_low: float = 0.2
    """Lower clip: ratios below 1 - eps_low stop contributing gradient when A < 0 (PPO Eq. 7)."""
    eps_high: float = 0.2
    """Upper clip; DAPO's clip-higher uses 0.28 (arXiv 2503.14476, Sec. 3.1)."""
    beta: float = 0.0
    """Weight of the k3 KL to the SFT reference inside the loss (GRPO uses 0.04; DAPO drops it: 0)."""
    aggregation: str = "token"
    """``"token"``: sum over all valid tokens / their count (DAPO); ``"sequence"``: mean of per-row means (GRPO)."""
    scale_rewards: str = "group"
    """Advantage scaling passed to ``group_advantages``: ``group``, ``batch`` or ``none`` (Dr. GRPO)."""
    dynamic_sampling: bool = False
    """DAPO dynamic sampling: drop groups whose rewards are all equal and sample more prompts to refill."""
    dynamic_sampling_rounds: int = 3
    """Extra sampling rounds allowed per step to refill the batch under dynamic sampling."""
    num_iterations: int = 1
    """μ: gradient steps per batch of rollouts. With 1 the ratio is exactly 1 (fully on-policy)."""
    importance_level: str = "token"
    """``"token"`` (GRPO ratio per token) or ``"sequence"`` (GSPO: exp of the mean per-token log-ratio)."""
    mask_truncated: bool = False
    """Exclude completions that never emitted eos from the loss (TRL's ``mask_truncated_completions``)."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold (the pre-clip norm is logged as ``stats/grad_norm``)."""
    eval_every: int = 5
    """Greedy held-out accuracy every this many steps (and at the start and the end)."""
    eval_size: int = 200
    """Held-out test prompts for ``eval/accuracy``."""
    log_kl: bool = True
    """Log ``stats/kl`` (k3 to the reference) even when ``beta == 0`` (one extra no-grad forward)."""
    sft_steps: int | None = None
    """SFT steps of the warm start when the policy is loaded here; None = the profile's full SFT (``load_policy``).
    A shorter SFT run has its own compressed cosine schedule (cached separately), and where it lands is hard to
    predict; ``sft_stop`` / ``sft_stop_accuracy`` (at most one of the three is set) are the steadier way to
    leave RL headroom (the full cpu-profile SFT already solves ~98% of 2-digit additions)."""
    sft_stop: int | None = None
    """Stop the profile's full SFT schedule after this many steps (the snapshot of that run in progress, see
    ``SFTConfig.stop_after``) for the warm start; None trains all of it (or ``sft_steps``). Unlike a shorter
    ``sft_steps``, the snapshots of one run improve steadily, so the start's accuracy is predictable."""
    sft_stop_accuracy: float | None = None
    """Stop the profile's full SFT run at the first check (every ``SFT_CHECK_EVERY`` steps) where its greedy
    accuracy on 256 *training* prompts reaches this (never the test prompts); None: no such stop. It puts the
    warm start in the same place of the learning curve whatever the profile or machine."""
    seed: int = 0
    """Seeds sampling, prompt order and torch."""
    device: str | None = None
    """torch device; None takes the profile's."""
    run_dir: str | None = None
    """Folder for checkpoint/history/plot at the end; None writes only on interrupt."""
    plot_keys: tuple[str, ...] = ("reward/mean", "eval/accuracy", "stats/entropy", "stats/kl",
                                  "stats/clipfrac", "stats/completion_len")
    """Metrics on the live plot."""
    plot_every: int = 5
    """Redraw the live plot every this many steps."""

    def __post_init__(self) -> None:
        checks = [
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.prompts_per_step >= 1, f"prompts_per_step must be >= 1, got {self.prompts_per_step}"),
            (self.group_size >= 2, f"group_size must be >= 2 (a group of 1 has no baseline), got {self.group_size}"),
            (self.max_new_tokens >= 1, f"max_new_tokens must be >= 1, got {self.max_new_tokens}"),
            (self.temperature > 0, f"temperature must be > 0 for sampling, got {self.temperature}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (0 <= self.eps_low < 1, f"eps_low must be in [0, 1), got {self.eps_low}"),
            (self.eps_high >= 0, f"eps_high must be >= 0, got {self.eps_high}"),
            (self.beta >= 0, f"beta must be >= 0, got {self.beta}"),
            (self.aggregation in AGGREGATIONS, f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}"),
            (self.scale_rewards in SCALES, f"scale_rewards must be one of {SCALES}, got {self.scale_rewards!r}"),
            (self.importance_level in IMPORTANCE_LEVELS,
             f"importance_level must be one of {IMPORTANCE_LEVELS}, got {self.importance_level!r}"),
            (self.num_iterations >= 1, f"num_iterations must be >= 1, got {self.num_iterations}"),
            (self.dynamic_sampling_rounds >= 0, "dynamic_sampling_rounds must be >= 0"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.eval_every >= 1, f"eval_every must be >= 1, got {self.eval_every}"),
            (self.eval_size >= 1, f"eval_size must be >= 1, got {self.eval_size}"),
            (self.plot_every >= 1, f"plot_every must be >= 1, got {self.plot_every}"),
            (self.sft_steps is None or self.sft_steps >= 1, f"sft_steps must be None or >= 1, got {self.sft_steps}"),
            (self.sft_stop is None or self.sft_stop >= 1, f"sft_stop must be None or >= 1, got {self.sft_stop}"),
            (self.sft_stop_accuracy is None or 0 < self.sft_stop_accuracy <= 1,
             f"sft_stop_accuracy must be None or in (0, 1], got {self.sft_stop_accuracy}"),
            (sum(x is not None for x in (self.sft_steps, self.sft_stop, self.sft_stop_accuracy)) <= 1,
             "set at most one of sft_steps (a shorter SFT run), sft_stop and sft_stop_accuracy (stop the full run "
             "early); set the others to None"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"GRPOConfig: {message}")

    @property
    def batch_size(self) -> int:
        """Completions per step: N * G."""
        return self.prompts_per_step * self.group_size

    @classmethod
    def for_profile(cls, profile: str | Profile | None = None, **overrides) -> "GRPOConfig":
        """Budgets for a profile: smoke (seconds, CI), cpu (the lab's <= 10 min on 2 cores), gpu (the 95% target)."""
        p = profile if isinstance(profile, Profile) else get_profile(profile)
        if p.name == "smoke":
            base = dict(steps=8, prompts_per_step=8, group_size=8, lr=3e-4, eval_every=4, eval_size=100)
        elif p.name == "cpu":
            # The full cpu SFT already solves ~98% of held-out additions, so RL starts from the same SFT run
            # stopped where greedy accuracy on training prompts first reaches 0.5 (step 250 of 700; that run
            # learns carries abruptly between steps 225 and 300). A shorter SFT run is no substitute: its
            # compressed schedule lands anywhere (200 steps: 0.39, 350: 0.14, 500: 0.94). Measured 2026-11-30,
            # 2 shared cores (docs/benchmarks.md, "GRPO accuracy target"): 0.524 -> 0.774 in 400 steps
            # (RL seeds 1 and 2: +30.8 and +23.8 points).
            base = dict(steps=400, prompts_per_step=16, group_size=8, lr=1e-4, eval_every=25, eval_size=500,
                        sft_stop_accuracy=0.5)
        else:  # gpu (NOT run yet: no GPU so far): bigger model and batches, same warm-start rule at a higher bar,
            # dynamic sampling (many all-correct groups near the top), clip-higher, bf16 autocast
            base = dict(steps=int(100 * p.scale), prompts_per_step=64, group_size=16, lr=1e-4,
                        eval_every=20, eval_size=1000, plot_every=10, dynamic_sampling=True, eps_high=0.28,
                        sft_stop_accuracy=0.7)
        if WARM_START_FIELDS & overrides.keys():  # one warm-start choice replaces the profile's
            base = {k: v for k, v in base.items() if k not in WARM_START_FIELDS}
        base.update(overrides)
        return cls(profile=p.name, **base)


# --------------------------------------------------------------------------------------------- masks
def completion_mask_default(rollout, eos_id: int, mask_truncated: bool) -> torch.Tensor:
    """The loss mask ``[B, C]``: the rollout's completion mask, minus truncated rows when ``mask_truncated``."""
    mask = rollout.completion_mask.float()
    if mask_truncated:
        keep = ~truncated_rows(rollout.completion_ids, rollout.completion_mask, eos_id)  # (B,)
        mask = mask * keep.unsqueeze(-1).float()
    return mask


def completion_mask_planted_bug(rollout, eos_id: int, mask_truncated: bool) -> torch.Tensor:
    """A **planted bug** for the W11 demo: the truncation filter is inverted, so it keeps only the rows that
    were cut off and drops every completion that finished with eos. On a policy that always finishes, no token
    is left in the loss."""
    truncated = truncated_rows(rollout.completion_ids, rollout.completion_mask, eos_id)  # (B,)
    return rollout.completion_mask.float() * truncated.unsqueeze(-1).float()


# --------------------------------------------------------------------------------------------- warm start
SFT_CHECK_EVERY = 25
"""SFT steps between two accuracy checks of ``sft_stop_accuracy``."""


def _stop_probe(task, seed: int) -> list:
    """The 256 *training* prompts the ``sft_stop_accuracy`` rule is measured on (the test set stays unseen)."""
    return task.sample(256, split="train", seed=seed + 20_000)


def load_warm_start(profile: str | Profile | None = None, sft_steps: int | None = None, seed: int = 0, *,
                    sft_stop: int | None = None, sft_stop_accuracy: float | None = None):
    """``(policy, tokenizer)``: the arithmetic SFT policy; with ``sft_steps`` a shorter SFT of the same recipe
    (its own, compressed schedule); with ``sft_stop`` the profile's full SFT run stopped after that many steps;
    with ``sft_stop_accuracy`` that run stopped at the first check where greedy accuracy on 256 training
    prompts reaches it. Built once with tinyworld's ``build_checkpoint`` and cached next to the full one (the
    manifest's ``metrics`` hold ``sft/steps`` and the held-out ``eval/accuracy``)."""
    import os

    from rlprep.tinyworld import build_tokenizer, checkpoints, get_task, load_policy

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    if sum(x is not None for x in (sft_steps, sft_stop, sft_stop_accuracy)) > 1:
        raise ValueError("pass at most one of sft_steps (a shorter SFT run), sft_stop and sft_stop_accuracy "
                         "(stop the full run early)")
    if sft_stop is not None and not 1 <= sft_stop <= p.sft_steps:
        raise ValueError(f"sft_stop must be in 1..{p.sft_steps} (the {p.name} profile's SFT steps), got {sft_stop}")
    if sft_stop_accuracy is not None and not 0 < sft_stop_accuracy <= 1:
        raise ValueError(f"sft_stop_accuracy must be in (0, 1], got {sft_stop_accuracy}")
    stop_when = None
    if sft_stop_accuracy is not None:
        task = get_task("arithmetic")
        probe = _stop_probe(task, seed)
        probe_tokenizer = build_tokenizer()

        def stop_when(step: int, model) -> bool:
            if (step + 1) % SFT_CHECK_EVERY:
                return False
            return evaluate_accuracy(model, probe_tokenizer, task, probe, max_new_tokens=6) >= sft_stop_accuracy

        suffix = f"acc{sft_stop_accuracy:g}-every{SFT_CHECK_EVERY}"  # the rule is part of the cache name
    elif sft_stop is not None and sft_stop != p.sft_steps:
        suffix = f"stop{sft_stop}"
    elif sft_steps is not None and sft_steps != p.sft_steps:
        suffix = f"sft{sft_steps}"
    else:
        return load_policy("arithmetic", p, seed=seed)
    full = checkpoints.checkpoint_dir("arithmetic", p, seed)
    target = full.with_name(f"{full.name}-{suffix}")
    if not target.exists() or checkpoints.verify_checkpoint(target) is not None:
        tmp, _ = checkpoints.build_checkpoint("arithmetic", p, seed, steps=sft_steps, stop_after=sft_stop,
                                              stop_when=stop_when)
        if target.exists():
            checkpoints._discard(target)
        os.replace(tmp, target)
    return checkpoints.load_checkpoint(target, device=p.device)


def warm_start_kwargs(config: "GRPOConfig") -> dict:
    """The ``load_warm_start`` keywords a config asks for."""
    return dict(sft_steps=config.sft_steps, sft_stop=config.sft_stop, sft_stop_accuracy=config.sft_stop_accuracy)


# --------------------------------------------------------------------------------------------- eval
@torch.no_grad()
def evaluate_accuracy(policy, tokenizer, task, examples, max_new_tokens: int, batch_size: int = 256) -> float:
    """Greedy held-out accuracy: the fraction of ``examples`` whose greedy completion the verifier accepts."""
    from rlprep.rollout import generate

    was_training = policy.training
    policy.eval()
    correct = 0
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        prompts = [ex.prompt for ex in chunk]
        out = generate(policy, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=0.0)
        correct += sum(task.verify(p, t) for p, t in zip(prompts, out.texts))
    policy.train(was_training)
    return correct / max(1, len(examples))


# --------------------------------------------------------------------------------------------- trainer
class GRPOTrainer:
    """Holds the policy, the frozen reference, the optimizer and the injected functions; ``step()`` does one round.

    Use :func:`train_grpo` for a whole run with progress and interrupt safety.
    """

    def __init__(self, config: GRPOConfig, policy=None, tokenizer=None, task=None, *,
                 group_advantages: Callable | None = None, grpo_loss: Callable | None = None,
                 kl_k3: Callable | None = None, completion_mask_fn: Callable | None = None,
                 prompt_source: Callable[[int, int], list[str]] | None = None):
        from rlprep.tinyworld import get_task

        self.config = config
        self.profile = get_profile(config.profile)
        self.device = resolve_device(config.device, self.profile)
        seed_everything(config.seed)
        if policy is None:
            policy, tokenizer = load_warm_start(self.profile, **warm_start_kwargs(config))
        if tokenizer is None:
            raise ValueError("pass the tokenizer together with the policy (load_policy returns both)")
        self.policy = policy.to(self.device).train()
        self.tokenizer = tokenizer
        self.task = task if task is not None else get_task("arithmetic")
        self.reference = frozen_copy(self.policy)
        self.group_advantages = group_advantages or reference("grpo", "group_advantages")
        self.grpo_loss = grpo_loss or reference("grpo", "grpo_loss")
        self.kl_k3 = kl_k3 or reference("grpo", "kl_k3")
        self.completion_mask_fn = completion_mask_fn or completion_mask_default
        self.optimizer = torch.optim.AdamW(self.policy.parameters(), lr=config.lr, weight_decay=0.0)
        self.rng = np.random.default_rng(config.seed)
        self.prompt_source = prompt_source or self._train_prompts
        self.eval_examples = self.task.sample(config.eval_size, split="test", seed=config.seed + 10_000)
        self.eos_id = tokenizer.eos_token_id
        self._round = 0

    def _train_prompts(self, n: int, round_index: int) -> list[str]:
        seed = int(self.config.seed * 1_000_003 + round_index)
        return [ex.prompt for ex in self.task.sample(n, split="train", seed=seed)]

    def evaluate(self) -> float:
        return evaluate_accuracy(unwrap_model(self.policy), self.tokenizer, self.task, self.eval_examples,
                                 self.config.max_new_tokens)

    @torch.no_grad()
    def _rollouts(self, prompts: list[str]):
        """Sample G completions per prompt and score them; rewards ``[N*G]``, groups consecutive."""
        from rlprep.rollout import generate

        cfg = self.config
        repeated = [p for p in prompts for _ in range(cfg.group_size)]  # (N*G,) consecutive groups
        self.policy.eval()
        rollout = generate(unwrap_model(self.policy), self.tokenizer, repeated, max_new_tokens=cfg.max_new_tokens,
                           temperature=cfg.temperature, seed=int(self.rng.integers(2**31)))
        self.policy.train()
        rewards = torch.tensor([float(self.task.reward(p, t)) for p, t in zip(repeated, rollout.texts)],
                               device=self.device)
        return rollout, rewards

    def _collect(self):
        """Rollouts for one step; with dynamic sampling, keep only groups with reward spread and refill."""
        cfg = self.config
        N, G = cfg.prompts_per_step, cfg.group_size
        rollout, rewards = self._rollouts(self.prompt_source(N, self._round))
        self._round += 1
        grouped = rewards.view(N, G)  # (N, G)
        zero_std = (grouped.max(dim=1).values == grouped.min(dim=1).values)  # (N,)
        stats = {"frac_zero_std_groups": zero_std.float().mean().item(),
                 "reward_mean": rewards.mean().item(),
                 "truncated": truncated_rows(rollout.completion_ids, rollout.completion_mask,
                                             self.eos_id).float().mean().item(),
                 "completion_len": rollout.completion_mask.float().sum(-1).mean().item(),
                 "n_groups": float(N)}
        if not cfg.dynamic_sampling:
            return [(rollout, rewards)], stats
        kept = [(rollout, rewards, ~zero_std)]
        n_kept = int((~zero_std).sum())
        for _ in range(cfg.dynamic_sampling_rounds):
            if n_kept >= N:
                break
            extra, extra_rewards = self._rollouts(self.prompt_source(N, self._round))
            self._round += 1
            g = extra_rewards.view(N, G)
            keep = g.max(dim=1).values != g.min(dim=1).values
            kept.append((extra, extra_rewards, keep))
            n_kept += int(keep.sum())
        batches = []
        budget = N
        for ro, rw, keep in kept:
            idx_groups = torch.nonzero(keep).flatten()[:budget]
            budget -= len(idx_groups)
            if len(idx_groups) == 0:
                continue
            rows = (idx_groups.unsqueeze(1) * G + torch.arange(G, device=idx_groups.device)).flatten()  # (n*G,)
            batches.append((_select_rows(ro, rows.cpu()), rw[rows]))
        stats["n_groups"] = float(N - budget)
        return batches, stats

    def step(self) -> dict[str, float]:
        cfg = self.config
        t0 = time.perf_counter()
        batches, collect_stats = self._collect()
        t_rollout = time.perf_counter() - t0
        metrics = {"reward/mean": collect_stats["reward_mean"],
                   "stats/frac_zero_std_groups": collect_stats["frac_zero_std_groups"],
                   "stats/frac_truncated": collect_stats["truncated"],
                   "stats/completion_len": collect_stats["completion_len"],
                   "stats/groups_used": collect_stats["n_groups"]}
        if not batches:  # dynamic sampling found no informative group: nothing to learn from this step
            metrics.update({"loss/policy": 0.0, "stats/grad_norm": 0.0, "stats/frac_valid_tokens": 0.0,
                            "stats/clipfrac": 0.0, "stats/entropy": float("nan"), "stats/kl": float("nan"),
                            "stats/approx_kl": 0.0, "time/rollout_s": t_rollout, "time/update_s": 0.0})
            return metrics
        prepared = [self._prepare(ro, rw) for ro, rw in batches]
        sums: dict[str, float] = {}
        for it in range(cfg.num_iterations):
            for batch in prepared:
                for key, value in self._update(batch, first=(it == 0)).items():
                    sums[key] = sums.get(key, 0.0) + value
        n_updates = cfg.num_iterations * len(prepared)
        metrics.update({k: v / n_updates for k, v in sums.items()})
        metrics["time/rollout_s"] = t_rollout
        metrics["time/update_s"] = time.perf_counter() - t0 - t_rollout
        return metrics

    @torch.no_grad()
    def _prepare(self, rollout, rewards) -> dict:
        cfg = self.config
        C = rollout.completion_ids.shape[1]
        mask = self.completion_mask_fn(rollout, self.eos_id, cfg.mask_truncated).to(self.device)  # (B, C)
        advantages = self.group_advantages(rewards, cfg.group_size, scale=cfg.scale_rewards)  # (B,)
        input_ids = rollout.input_ids.to(self.device)
        attention_mask = rollout.attention_mask.to(self.device)
        old_logp = None
        if cfg.num_iterations > 1:  # μ > 1: the behaviour policy's log-probs, fixed for the μ steps
            old_logp = completion_logprobs(self.policy, input_ids, attention_mask, C)  # (B, C)
        ref_logp = None
        if cfg.beta > 0 or cfg.log_kl:
            ref_logp = completion_logprobs(self.reference, input_ids, attention_mask, C)  # (B, C)
        return dict(input_ids=input_ids, attention_mask=attention_mask, mask=mask, C=C,
                    advantages=advantages.detach().float(), old_logp=old_logp, ref_logp=ref_logp)

    def _update(self, batch: dict, first: bool) -> dict[str, float]:
        cfg = self.config
        mask, advantages = batch["mask"], batch["advantages"]
        logp, entropy = completion_logprobs(self.policy, batch["input_ids"], batch["attention_mask"], batch["C"],
                                            with_entropy=True)  # (B, C) each
        old_logp = batch["old_logp"] if batch["old_logp"] is not None else logp.detach()
        logp_for_loss = logp
        if cfg.importance_level == "sequence":  # GSPO: one length-normalised log-ratio per row
            n_valid = mask.sum(-1).clamp(min=1)  # (B,)
            seq_log_ratio = ((logp - old_logp) * mask).sum(-1) / n_valid  # (B,)
            logp_for_loss = old_logp + seq_log_ratio.unsqueeze(-1)  # (B, C): ratio = exp(seq_log_ratio)
        loss = self.grpo_loss(logp_for_loss, old_logp, advantages, mask, eps_low=cfg.eps_low,
                              eps_high=cfg.eps_high, beta=cfg.beta,
                              ref_logp=batch["ref_logp"] if cfg.beta > 0 else None,
                              aggregation=cfg.aggregation)
        self.optimizer.zero_grad(set_to_none=True)
        if loss.requires_grad:
            loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm))
        if loss.requires_grad and math.isfinite(grad_norm):
            self.optimizer.step()
        with torch.no_grad():
            n_valid = mask.sum()
            denom = n_valid.clamp(min=1)
            ratio = torch.exp(logp_for_loss.detach() - old_logp)  # (B, C)
            adv = advantages.unsqueeze(-1)  # (B, 1)
            clipped = ((ratio < 1 - cfg.eps_low) & (adv < 0)) | ((ratio > 1 + cfg.eps_high) & (adv > 0))
            out = {"loss/policy": float(loss.detach()),
                   "stats/grad_norm": grad_norm,
                   "stats/frac_valid_tokens": float(n_valid / mask.numel()),
                   "stats/clipfrac": float((clipped.float() * mask).sum() / denom),
                   "stats/entropy": float((entropy.detach() * mask).sum() / denom),
                   "stats/approx_kl": float((0.5 * (logp.detach() - old_logp) ** 2 * mask).sum() / denom)}
            if batch["ref_logp"] is not None:
                kl = self.kl_k3(logp.detach(), batch["ref_logp"])  # (B, C)
                out["stats/kl"] = float((kl * mask).sum() / denom)
            else:
                out["stats/kl"] = float("nan")
        return out


def _select_rows(rollout, rows: torch.Tensor):
    """A copy of ``rollout`` holding only ``rows`` (used by dynamic sampling)."""
    import copy

    picked = copy.copy(rollout)
    for name in ("input_ids", "attention_mask", "completion_ids", "completion_mask", "logprobs"):
        value = getattr(rollout, name, None)
        if isinstance(value, torch.Tensor):
            setattr(picked, name, value[rows.to(value.device)])
    for name in ("texts", "prompts"):
        value = getattr(rollout, name, None)
        if isinstance(value, list):
            setattr(picked, name, [value[i] for i in rows.tolist()])
    return picked


def train_grpo(config: GRPOConfig | None = None, *, policy=None, tokenizer=None, task=None,
               group_advantages: Callable | None = None, grpo_loss: Callable | None = None,
               kl_k3: Callable | None = None, completion_mask_fn: Callable | None = None,
               prompt_source: Callable[[int, int], list[str]] | None = None,
               callbacks: Sequence[Callable] = (), live: bool | None = None) -> History:
    """Train ``policy`` (default: the arithmetic SFT policy of the config's profile) with GRPO/DAPO.

    The graded functions are keyword arguments defaulting to the references in ``rlprep.algos.grpo``;
    a lab passes the learner's own. The policy is trained in place; the history's ``meta`` holds
    ``accuracy_start``, ``accuracy_end`` and ``wall_s``. Stop any time (KeyboardInterrupt): weights are kept,
    a checkpoint and the plot are saved, and the history returned.
    """
    config = config or GRPOConfig.for_profile()
    trainer = GRPOTrainer(config, policy, tokenizer, task, group_advantages=group_advantages,
                          grpo_loss=grpo_loss, kl_k3=kl_k3, completion_mask_fn=completion_mask_fn,
                          prompt_source=prompt_source)
    history = History(meta={"config": asdict(config), "trainer": "grpo"})
    t0 = time.perf_counter()
    history.meta["accuracy_start"] = trainer.evaluate()

    def step_fn(step: int) -> dict:
        metrics = trainer.step()
        if step % config.eval_every == 0:
            metrics["eval/accuracy"] = trainer.evaluate()
        return metrics

    history.append({"step": 0, "eval/accuracy": history.meta["accuracy_start"]})
    run_steps(step_fn, config.steps, model=trainer.policy, run_dir=config.run_dir, plot_keys=config.plot_keys,
              plot_every=config.plot_every, callbacks=callbacks, desc="grpo", live=live, history=history,
              start_step=1)
    if history[-1].get("eval/accuracy") is None:
        history.meta["accuracy_end"] = trainer.evaluate()
        history[-1]["eval/accuracy"] = history.meta["accuracy_end"]
    else:
        history.meta["accuracy_end"] = history[-1]["eval/accuracy"]
    history.meta["wall_s"] = time.perf_counter() - t0
    history.trainer = trainer
    return history


# --------------------------------------------------------------------------------------------- W11
def zero_loss_stats(row: dict, config: GRPOConfig) -> dict[str, float]:
    """The dict ``diagnose_zero_loss`` reads, from one logged row of a GRPO run."""
    return {"loss": row["loss/policy"], "grad_norm": row["stats/grad_norm"],
            "frac_zero_std_groups": row["stats/frac_zero_std_groups"],
            "frac_valid_tokens": row["stats/frac_valid_tokens"], "clip_frac": row["stats/clipfrac"],
            "beta": config.beta, "num_iterations": config.num_iterations}


ZERO_LOSS_CAUSES = ("on_policy", "too_easy", "too_hard", "all_truncated", "mask_bug")


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
    ``kl_k3`` are the graded functions, as in :func:`train_grpo` (default: the references); a lab passes its own.
    """
    if cause not in ZERO_LOSS_CAUSES:
        raise ValueError(f"cause must be one of {ZERO_LOSS_CAUSES}, got {cause!r}")
    from rlprep.tinyworld import get_task

    base = config or GRPOConfig.for_profile()
    if policy is None:
        policy, tokenizer = load_warm_start(base.profile, **warm_start_kwargs(base))
    task = task or get_task("arithmetic")
    saved = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    was_training = policy.training
    overrides = dict(steps=1, num_iterations=1, beta=0.0, dynamic_sampling=False, log_kl=False, eval_size=1)
    mask_fn = None
    prompt_source = None  # the default: training prompts of the warm start's level
    if cause == "on_policy":  # sequence aggregation: the loss is -(1/N) sum of centred advantages = 0 exactly
        overrides.update(aggregation="sequence")
    elif cause == "all_truncated":
        overrides.update(max_new_tokens=1, mask_truncated=True)
    elif cause == "mask_bug":
        mask_fn = completion_mask_planted_bug
    cfg = GRPOConfig(**{**asdict(base), **overrides})
    try:
        trainer = GRPOTrainer(cfg, policy, tokenizer, task, group_advantages=group_advantages, grpo_loss=grpo_loss,
                              kl_k3=kl_k3, completion_mask_fn=mask_fn, prompt_source=prompt_source)
        kind = {"on_policy": "mixed", "too_easy": "all_correct", "too_hard": "all_wrong"}.get(cause)
        if kind:  # a warm start that answers (almost) everything right would make on_policy look too_easy
            batch = _group_batch(policy, tokenizer, task, cfg, kind, pool_size, trainer.device)
            n_groups = len(batch[1]) // cfg.group_size
            cfg.prompts_per_step = n_groups  # the step's batch is exactly these groups
            trainer._rollouts = lambda prompts: batch  # noqa: E731  (the step trains on the selected groups)
        row = trainer.step()
    finally:
        policy.load_state_dict(saved)
        policy.train(was_training)
    stats = zero_loss_stats(row, cfg)
    stats["reward_mean"] = row["reward/mean"]
    return stats


@torch.no_grad()
def sample_success_rates(policy, tokenizer, task, prompts: list[str], n_samples: int, max_new_tokens: int,
                         temperature: float = 1.0, seed: int = 0, return_rollout: bool = False):
    """Per-prompt fraction of ``n_samples`` sampled completions the verifier accepts: ``[len(prompts)]``
    (and the rollout with its ``[P*n]`` rewards when ``return_rollout``)."""
    from rlprep.rollout import generate

    repeated = [p for p in prompts for _ in range(n_samples)]  # (P*n,) consecutive groups
    was_training = policy.training
    policy.eval()
    out = generate(policy, tokenizer, repeated, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
    policy.train(was_training)
    rewards = np.array([task.reward(p, t) for p, t in zip(repeated, out.texts)])
    rates = rewards.reshape(len(prompts), n_samples).mean(axis=1)
    return (rates, out, rewards) if return_rollout else rates


GROUP_KINDS = {
    "all_correct": lambda rate: rate == 1.0,   # too easy: no reward spread
    "all_wrong": lambda rate: rate == 0.0,     # too hard: no reward spread
    "mixed": lambda rate: 0.0 < rate < 1.0,    # a learning signal in every group
}


def _group_batch(policy, tokenizer, task, cfg: GRPOConfig, kind: str, pool_size: int, device):
    """A batch of ``prompts_per_step`` groups of ``kind`` (see ``GROUP_KINDS``), taken from a sampled pool:
    ``(rollout, rewards [N*G])``.

    All wrong: 3-digit multiplication (level 6), far beyond the 2-digit-addition warm start. All correct and
    mixed: the warm start's own level, keeping the prompts whose G samples are all right / neither all right
    nor all wrong.
    """
    level = 6 if kind == "all_wrong" else 2
    pool = [ex.prompt for ex in task.sample(pool_size, split="train", seed=cfg.seed + 777, level=level)]
    G = cfg.group_size
    rates, out, rewards = sample_success_rates(policy, tokenizer, task, pool, G, cfg.max_new_tokens,
                                               cfg.temperature, seed=cfg.seed + 778, return_rollout=True)
    groups = [i for i, r in enumerate(rates) if GROUP_KINDS[kind](r)][:cfg.prompts_per_step]
    if not groups:
        raise ValueError(f"no {kind.replace('_', '-')} prompt group in a pool of {pool_size}; pass a larger pool_size")
    rows = torch.tensor([g * G + k for g in groups for k in range(G)])  # (n*G,)
    return _select_rows(out, rows), torch.tensor(rewards, dtype=torch.float32, device=device)[rows.to(device)]


# --------------------------------------------------------------------------------------------- SFT curve
def sft_curve(profile: Profile, stop: int, every: int = SFT_CHECK_EVERY, seed: int = 0) -> list[dict]:
    """Follow the profile's full arithmetic SFT run for its first ``stop`` steps (nothing is cached) and, every
    ``every`` steps, measure what a GRPO warm start taken there would offer: ``test`` (greedy, 256 held-out
    prompts), ``train_probe`` (the ``sft_stop_accuracy`` rule's number), ``sampled`` (mean reward of 8 samples
    at temperature 1 on 64 training prompts) and ``mixed`` (share of those groups with both right and wrong
    samples: the groups that give GRPO a gradient). Used to choose the warm start; see docs/benchmarks.md."""
    from rlprep.tinyworld import build_tokenizer, get_task
    from rlprep.tinyworld.checkpoints import sft_config
    from rlprep.tinyworld.model import build_model
    from rlprep.tinyworld.sft import train_sft

    tokenizer, task = build_tokenizer(), get_task("arithmetic")
    model = build_model(profile, tokenizer, seed=seed).to(profile.device)
    test = task.sample(256, split="test", seed=seed + 10_000)
    probe = _stop_probe(task, seed)
    pool = [ex.prompt for ex in task.sample(64, split="train", seed=seed + 5)]
    rows: list[dict] = []

    def on_step(step: int, loss: float) -> None:
        if (step + 1) % every:
            return
        rates = sample_success_rates(model, tokenizer, task, pool, 8, 6, seed=seed + 1)
        rows.append({"step": step + 1, "loss": loss,
                     "test": evaluate_accuracy(model, tokenizer, task, test, 6),
                     "train_probe": evaluate_accuracy(model, tokenizer, task, probe, 6),
                     "sampled": float(rates.mean()), "mixed": float(((rates > 0) & (rates < 1)).mean())})
        print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()),
              flush=True)
        model.train()

    train_sft(model, tokenizer, task, sft_config(task, profile, seed, stop_after=stop), on_step=on_step)
    return rows


# --------------------------------------------------------------------------------------------- CLI
def _parse_overrides(pairs: list[str]) -> dict:
    """``["lr=2e-4", "dynamic_sampling=true"]`` -> typed ``GRPOConfig`` overrides (ValueError names the fix)."""
    import dataclasses

    types = {f.name: f.type for f in dataclasses.fields(GRPOConfig)}
    out = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in types:
            raise ValueError(f"--set {pair!r}: expected KEY=VALUE with KEY a GRPOConfig field ({', '.join(types)})")
        kind = str(types[key])
        if raw.strip().lower() == "none":
            out[key] = None
        elif kind.startswith("bool"):
            out[key] = raw.strip().lower() in ("1", "true", "yes", "on")
        elif kind.startswith("int"):
            out[key] = int(raw)
        elif kind.startswith("float"):
            out[key] = float(raw)
        else:
            out[key] = raw
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="GRPO/DAPO on the arithmetic task (reference functions).")
    parser.add_argument("--profile", default=None, help="smoke, cpu or gpu (default: RLPREP_PROFILE or auto)")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a GRPOConfig field, e.g. --set lr=2e-4 --set sft_stop=275 (repeatable)")
    parser.add_argument("--sft-curve", type=int, default=None, metavar="STEPS",
                        help="instead of GRPO: follow the profile's SFT run for STEPS steps and print what a warm "
                             "start would offer every 25 steps (sft_curve)")
    parser.add_argument("--device", default=None, help="with --sft-curve: run the profile's model on this device")
    args = parser.parse_args(argv)
    if args.sft_curve is not None:
        import dataclasses

        from rlprep.profiles import PROFILES

        name = (args.profile or get_profile().name).strip().lower()
        if name not in PROFILES:
            get_profile(name)  # raises the RlprepError that names the profiles
        profile = dataclasses.replace(PROFILES[name], device=args.device) if args.device else get_profile(name)
        sft_curve(profile, min(args.sft_curve, profile.sft_steps))
        return 0
    overrides = _parse_overrides(args.overrides)
    if args.steps is not None:
        overrides["steps"] = args.steps
    config = GRPOConfig.for_profile(args.profile, run_dir=args.run_dir, **overrides)
    history = train_grpo(config, live=False)
    meta = history.meta
    n = config.eval_size
    start, end = meta["accuracy_start"], meta["accuracy_end"]
    se = lambda p: math.sqrt(p * (1 - p) / n)  # noqa: E731  binomial standard error of one accuracy
    curve = " ".join(f"{r['step']}:{r['eval/accuracy']:.3f}" for r in history if r.get("eval/accuracy") is not None)
    print(f"held-out greedy accuracy by step ({n} test prompts): {curve}")
    print(f"profile={config.profile} steps={len(history) - 1} accuracy {start:.3f} ± {se(start):.3f} -> "
          f"{end:.3f} ± {se(end):.3f} ({100 * (end - start):+.1f} points) in {meta['wall_s']:.0f} s"
          f"{' (interrupted)' if history.interrupted else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

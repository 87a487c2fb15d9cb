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
The run is a :class:`~rlprep.trainers.grpo.GRPOTrainer` (the package's one GRPO loop) whose sampler lags the
policy and whose per-token advantages ``[B, C]`` are ``A_b · w_bt``; with μ = 1 and β = 0, ``grpo_loss``'s
gradient is then exactly the weighted REINFORCE estimate ``-Σ w A ∇log π_θ / n`` (the ratio is 1 in value).
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

import torch

from rlprep.algos import importance_sampling
from rlprep.demos.lab_runs import record_cli
from rlprep.live import History
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer, train_grpo
from rlprep.trainers.sequences import completion_logprobs, frozen_copy

CORRECTIONS = ("none", "tis")


@dataclass
class StaleGRPOConfig(GRPOConfig):
    """A GRPO run on k-step-stale rollouts. ``StaleGRPOConfig.for_profile("cpu", staleness=4)`` gives the lab's
    budget; every other field is :class:`GRPOConfig`'s (μ = 1, β = 0 and token aggregation are assumed)."""

    staleness: int = 0
    """k: the rollouts of step s are sampled by the policy after step s - k (0 = on-policy)."""
    correction: str = "none"
    """``"none"`` (treat stale samples as on-policy) or ``"tis"`` (truncated importance weights per token)."""
    clip: float | None = 2.0
    """Truncation level C of the TIS weights; None = untruncated IS. Ignored when ``correction="none"``."""
    lr: float = 3e-4
    """AdamW learning rate (constant). Staleness matters more the further each step moves the policy."""
    eval_size: int = 100
    """Held-out prompts for ``eval/accuracy``."""
    log_kl: bool = False
    """No KL to the SFT reference (β = 0): the mismatch that matters here is ``stats/kl_behavior``."""
    plot_keys: tuple[str, ...] = ("reward/mean", "eval/accuracy", "stats/kl_behavior", "stats/ess")
    """Metrics on the live plot."""

    def checks(self) -> list[tuple[bool, str]]:
        return super().checks() + [
            (self.staleness >= 0, f"staleness must be >= 0, got {self.staleness}"),
            (self.correction in CORRECTIONS, f"correction must be one of {CORRECTIONS}, got {self.correction!r}"),
            (self.clip is None or self.clip > 0, f"clip must be > 0 or None, got {self.clip}"),
            (self.steps >= 1, f"steps must be >= 1, got {self.steps}"),
            ((self.num_iterations, self.beta, self.dynamic_sampling) == (1, 0.0, False),
             "stale rollouts assume num_iterations=1, beta=0 and no dynamic sampling"),
        ]

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: seconds (CI); cpu: the lab's run on 2 cores; gpu: longer, bigger batches."""
        if p.name == "smoke":
            base = dict(steps=16, prompts_per_step=8, group_size=8, lr=3e-4, eval_every=8, eval_size=64)
        elif p.name == "cpu":
            base = dict(steps=40, prompts_per_step=16, group_size=8, lr=3e-4, eval_every=10, eval_size=200)
        else:
            base = dict(steps=int(40 * p.scale), prompts_per_step=64, group_size=16, lr=5e-4, eval_every=20,
                        eval_size=1000)
        return base


class StaleGRPOTrainer(GRPOTrainer):
    """:class:`GRPOTrainer` whose rollouts come from the policy of ``staleness`` steps ago (the behaviour policy μ),
    each token's advantage weighted by its (truncated) importance ratio π_θ/μ when ``correction="tis"``."""

    def __init__(self, config: StaleGRPOConfig, policy=None, tokenizer=None, task=None, *,
                 importance_weights: Callable | None = None, group_advantages: Callable | None = None):
        super().__init__(config, policy, tokenizer, task, group_advantages=group_advantages)
        self.importance_weights = importance_weights or importance_sampling.importance_weights
        self.behavior = frozen_copy(self.policy)
        # snapshots[0] is the policy after step s - k: the one that samples step s's rollouts
        self.snapshots = deque([copy.deepcopy(self.policy.state_dict())], maxlen=config.staleness + 1)
        self._stale_stats: dict[str, float] = {}

    def sampler(self):
        self.behavior.load_state_dict(self.snapshots[0])
        return self.behavior

    @torch.no_grad()
    def prepare(self, rollout, rewards) -> dict:
        batch = super().prepare(rollout, rewards)
        batch["behavior_logp"] = completion_logprobs(self.behavior, batch["input_ids"], batch["attention_mask"],
                                                     batch["C"])  # (B, C) log μ
        return batch

    @torch.no_grad()
    def token_advantages(self, batch: dict, logp: torch.Tensor) -> torch.Tensor:
        """``[B, C]``: A_b · w_bt, with w = ``importance_weights(log π_θ, log μ, clip)`` (tis) or 1 (none)."""
        cfg, valid = self.config, batch["mask"].bool()  # (B, C)
        target, behavior = logp.detach()[valid], batch["behavior_logp"][valid]  # (n,) each
        raw = torch.as_tensor(self.importance_weights(target, behavior)).double()  # (n,) untruncated
        weights = torch.ones_like(logp)  # (B, C)
        if cfg.correction == "tis":
            weights[valid] = torch.as_tensor(self.importance_weights(target, behavior, clip=cfg.clip),
                                             dtype=weights.dtype, device=weights.device)
        self._stale_stats = {"stats/kl_behavior": float((behavior - target).mean()),
                             "stats/ess": float(raw.sum() ** 2 / (raw.numel() * (raw ** 2).sum())),
                             "stats/weight_max": float(raw.max()),
                             "stats/truncfrac": float((raw > cfg.clip).double().mean()) if cfg.clip else 0.0}
        return batch["advantages"].unsqueeze(1) * weights  # (B, C)

    def update(self, batch: dict) -> dict[str, float]:
        return {**super().update(batch), **self._stale_stats}

    def step(self) -> dict[str, float]:
        row = super().step()
        self.snapshots.append(copy.deepcopy(self.policy.state_dict()))
        return row


def run_stale_grpo(config: StaleGRPOConfig, policy=None, tokenizer=None, task=None, *,
                   importance_weights: Callable | None = None, group_advantages: Callable | None = None,
                   progress: bool = False) -> History:
    """Train ``policy`` (default: a fresh arithmetic SFT policy of the profile) on k-step-stale rollouts.

    Returns the run's :class:`~rlprep.live.History` (row 0: the start's ``eval/accuracy``; rows 1..steps: the
    step metrics), like every GRPO run; the policy is trained in place. ``importance_weights(logp_target,
    logp_behavior, clip)`` and ``group_advantages(rewards, G)`` default to the references in ``rlprep.algos``;
    ``progress`` draws the live plot (in a notebook).
    """
    trainer = StaleGRPOTrainer(config, policy, tokenizer, task, importance_weights=importance_weights,
                               group_advantages=group_advantages)
    return train_grpo(trainer=trainer, live=progress, desc=f"grpo k={config.staleness} {config.correction}")


def staleness_sweep(profile: str | Profile | None = None, staleness=(0, 6), corrections=CORRECTIONS,
                    progress: bool = False, importance_weights: Callable | None = None,
                    **overrides) -> dict[tuple[int, str], History]:
    """``run_stale_grpo`` for every (k, correction); k = 0 runs once (no correction needed on-policy).

    Every run starts from the same SFT policy and sees the same prompts.
    """
    runs = {}
    for k in staleness:
        for correction in (("none",) if k == 0 else corrections):
            cfg = StaleGRPOConfig.for_profile(profile, staleness=k, correction=correction, **overrides)
            runs[(k, correction)] = run_stale_grpo(cfg, progress=progress, importance_weights=importance_weights)
    return runs


RECORD = "lab06_stale"
LABELS = {"none": "no correction", "tis": "TIS (clip 2)"}


def run_label(k: int, correction: str) -> str:
    return "on-policy" if k == 0 else f"k={k}, {LABELS.get(correction, correction)}"


def plot_sweep(runs: dict[tuple[int, str], History], title: str = ""):
    """Accuracy, behavior-policy KL and token-weight ESS against the GRPO step, one line per run."""
    import matplotlib.pyplot as plt

    from rlprep.metrics import unit

    panels = [("eval/accuracy", "held-out greedy accuracy"), ("stats/kl_behavior", "behavior-policy mismatch"),
              ("stats/ess", "token-weight ESS")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (key, panel_title) in zip(axes, panels):
        for (k, corr), h in runs.items():
            ax.plot(*h.series(key), "o-" if key == "eval/accuracy" else "-", label=run_label(k, corr))
        ax.set_title(panel_title)
        ax.set_xlabel("GRPO step")
        ax.set_ylabel(f"{key} ({unit(key)})")
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def summary(runs: dict[tuple[int, str], History]) -> dict[str, float]:
    """Per run ``<k>_<correction>_start`` / ``_end`` (held-out accuracy), ``_kl`` (mean KL(μ‖π_θ)), ``_ess`` (min)."""
    out: dict[str, float] = {}
    for (k, corr), h in runs.items():
        _, acc = h.series("eval/accuracy")
        _, kl = h.series("stats/kl_behavior")
        _, ess = h.series("stats/ess")
        out.update({f"k{k}_{corr}_start": acc[0], f"k{k}_{corr}_end": acc[-1],
                    f"k{k}_{corr}_kl": sum(kl) / len(kl), f"k{k}_{corr}_ess": min(ess)})
    return out


def stale_demo(importance_weights: Callable | None = None, profile: str | Profile | None = None,
               staleness=(0, 6), progress: bool | None = None, record: bool = False, show: bool = True,
               **overrides) -> dict[tuple[int, str], History]:
    """lab06's GPT-2 demo: :func:`staleness_sweep` with the learner's ``importance_weights``, a table and a plot.

    Prints what the active profile will show, trains each run with a live progress line named after it
    (``grpo k=6 tis``), prints held-out accuracy start -> end, mean KL(μ‖π_θ) and the lowest ESS per run, and
    plots them against the step. ``record=True`` writes ``records/lab06_stale.json`` (the figures lab06 quotes).
    """
    import time

    import matplotlib.pyplot as plt

    from rlprep.demos.lab_runs import profile_note, save_record

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    cfg = StaleGRPOConfig.for_profile(p, **overrides)
    print(profile_note(f"GRPO on {cfg.steps}-step runs with staleness k in {tuple(staleness)}", p))
    t0 = time.perf_counter()
    runs = staleness_sweep(p, staleness=staleness, progress=progress, importance_weights=importance_weights,
                           **overrides)
    wall = time.perf_counter() - t0
    stats = summary(runs)
    print(f"{'run':>22} {'accuracy start -> end':>22} {'mean KL(mu||pi)':>16} {'min ESS':>8}")
    for k, corr in runs:
        s = {name: stats[f"k{k}_{corr}_{name}"] for name in ("start", "end", "kl", "ess")}
        print(f"{run_label(k, corr):>22} {s['start']:>10.2f} -> {s['end']:<9.2f} {s['kl']:>16.3f} {s['ess']:>8.2f}")
    plot_sweep(runs, f"GRPO on k-step-stale rollouts ({p.name} profile, {cfg.steps} steps, seed {cfg.seed})")
    if show:
        plt.show()
    if record:
        save_record(RECORD, {**stats, "steps": cfg.steps, "seed": cfg.seed, "wall_s": round(wall, 1)},
                    "rlprep.demos.stale_rollouts", p)
    return runs


def main(argv=None) -> int:
    """``python -m rlprep.demos.stale_rollouts --record``: the lab's run with the reference functions, recorded."""
    return record_cli("rlprep.demos.stale_rollouts", RECORD, stale_demo, argv)


if __name__ == "__main__":
    raise SystemExit(main())

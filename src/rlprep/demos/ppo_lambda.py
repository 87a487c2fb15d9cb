"""Lab 1's PPO demo: the learner's ``compute_gae`` inside PPO-RLHF on the reviews policy, once per λ and seed.

Each completion is one episode ending at its last token, the reward is a per-token KL penalty plus the reward
model's score on the last token, and γ = 1. Every run starts from the same SFT policy and reward model; runs of
one seed share its sampling and held-out prompts, so within a seed they differ by λ alone: λ = 0 trusts the young
critic (biased), λ = 1 uses the whole noisy return.

With several seeds each λ gets the mean held-out gold reward over seeds and its 95% Student-t interval
(:func:`rlprep.demos.seed_stats.mean_ci95`), and λ = 0.95 − λ = 0 is taken seed by seed (a paired difference)
before its mean and interval. With one seed, ± covers the held-out prompts only (1.96 standard errors).

    python -m rlprep.demos.ppo_lambda --record   # RECORD_SEEDS x LAMBDAS -> records/lab01_ppo_lambda.json
"""

from __future__ import annotations

import copy
import itertools
import math
import statistics
import time
from collections.abc import Mapping
from dataclasses import replace

from rlprep.demos.lab_runs import record_cli, save_record
from rlprep.demos.seed_stats import check_seeds, interval, mean_series, reading, runs_by_seed

LAMBDAS = (0.0, 0.95, 1.0)
STEPS = {"smoke": 2, "cpu": 20}  # gpu: the profile's own budget
RECORD = "lab01_ppo_lambda"
RECORD_SEEDS = (0, 1, 2)
"""Training seeds of the recorded sweep (``PPOConfig.seed``: prompts, sampling, minibatch order, held-out prompts);
every seed starts from the same SFT policy. The lab's own cell trains seed 0 only, to stay minutes long."""
GAPS = ((0.95, 0.0), (1.0, 0.95))
"""Paired differences the record holds: (λ_a, λ_b) -> ``gap_<a>_vs_<b>`` = gold(λ_a) − gold(λ_b), seed by seed."""


def lambda_sweep(compute_gae, profile=None, lambdas=LAMBDAS, *, seeds=(0,), live: bool | None = None,
                 plot: bool = True, record: bool = False) -> dict:
    """Train one PPO run per (seed, λ) with ``compute_gae``; print the gold rewards, plot, optionally record.

    Returns ``{λ: History}`` for one seed (the lab's default), and ``{λ: {seed: History}}`` for several. The stop
    button (■) ends the sweep: the interrupted run is kept, later runs are not trained. ``record=True`` writes
    ``records/lab01_ppo_lambda.json`` (:func:`summary`).
    """
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.ppo import PPOConfig, train_ppo
    from rlprep.trainers.reward_model import load_reward_model

    profile = get_profile(profile) if not hasattr(profile, "name") else profile
    seeds = check_seeds(seeds)
    steps = STEPS.get(profile.name)
    config = PPOConfig.for_profile(profile, **({"steps": steps, "eval_every": 0} if steps else {}))
    if profile.name == "smoke":
        print(f"smoke profile: {config.steps} PPO steps per λ only check that your function runs inside PPO; the "
              "policy is too small and the runs too short to learn. Set RLPREP_PROFILE=cpu for the comparison.")
    print("loading the reviews SFT policy and its reward model (built once and cached; the first cpu run takes "
          "a few minutes)...", flush=True)
    sft_policy, tokenizer = load_policy("reviews", profile)
    reward_model = load_reward_model(profile, policy=sft_policy, tokenizer=tokenizer)
    runs: dict = {lam: {} for lam in lambdas}
    t0 = time.perf_counter()
    for seed, lam in itertools.product(seeds, lambdas):  # seed-major: a stop leaves whole seeds behind it
        label = f"ppo λ={lam:g}" + (f" seed={seed}" if len(seeds) > 1 else "")
        runs[lam][seed] = train_ppo(replace(config, gae_lambda=lam, seed=seed), policy=copy.deepcopy(sft_policy),
                                    tokenizer=tokenizer, reward_model=reward_model, compute_gae=compute_gae,
                                    live=live, label=label)
        if runs[lam][seed].interrupted:
            break
    wall = time.perf_counter() - t0
    runs = {lam: by_seed for lam, by_seed in runs.items() if by_seed}
    values = summary(runs, config.steps, wall_s=wall)
    print(format_summary(runs, values))
    if plot:
        over = f"mean of {len(seeds)} seeds" if len(seeds) > 1 else f"seed {seeds[0]}"
        plot_runs(runs, f"PPO on the reviews policy with your compute_gae ({profile.name} profile, "
                        f"{config.steps} steps per λ, {over})")
    if record:
        save_record(RECORD, values, "rlprep.demos.ppo_lambda", profile)
    return runs if len(seeds) > 1 else {lam: by_seed[seeds[0]] for lam, by_seed in runs.items()}


def plot_runs(runs: Mapping, title: str):
    """RM reward, gold reward and explained variance per step: one line per λ, the mean over its seeds."""
    import matplotlib.pyplot as plt

    from rlprep.metrics import unit

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for key, ax in zip(("reward/rm", "reward/gold", "stats/explained_var"), axes):
        for lam, by_seed in runs_by_seed(runs).items():
            n = len(by_seed)
            ax.plot(*mean_series(by_seed.values(), key), marker=".",
                    label=f"λ = {lam:g}" + (f" (mean of {n} seeds)" if n > 1 else ""))
        ax.set_xlabel("PPO step (one batch of rollouts)")
        ax.set_ylabel(f"{key} ({unit(key) or 'value'})")
        ax.set_title(key)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    plt.show()
    return fig


def _key(lam: float) -> str:
    return f"lam{lam:g}".replace(".", "")


def summary(runs: Mapping, steps: int, wall_s: float | None = None) -> dict:
    """The figures lab 1's text quotes, from ``{λ: History}`` or ``{λ: {seed: History}}``.

    Keys: ``steps``, ``lambdas``, ``seeds``, ``n_seeds`` (seeds every λ finished), ``interval`` ("seeds" or
    "evaluation samples"), ``gold_start`` (mean over seeds) and ``gold_start_seeds``; per λ (``lam0``, ``lam095``,
    ``lam1``): ``_gold_end`` (mean over seeds), ``_gold_end_ci95`` (95% half-width), ``_gold_end_seeds``,
    ``_n_seeds``, ``_wall_s`` (mean per run); per pair in :data:`GAPS` (``gap_095_vs_0``, ``gap_1_vs_095``): the
    paired difference's mean, ``_ci95``, ``_seeds`` over the seeds both λ finished and ``_reading`` (:func:`reading`);
    ``wall_s`` when given.
    """
    by_seed = runs_by_seed(runs)
    first = next(iter(by_seed.values()))
    seeds = list(first)
    out = {"steps": steps, "lambdas": [float(lam) for lam in by_seed], "seeds": seeds,
           "n_seeds": min(len(r) for r in by_seed.values())}
    out["interval"] = "seeds" if out["n_seeds"] > 1 else "evaluation samples"
    out["gold_start_seeds"] = [first[s].meta["gold_start"] for s in seeds]
    out["gold_start"] = statistics.fmean(out["gold_start_seeds"])
    for lam, r in by_seed.items():
        ends = [h.meta["gold_end"] for h in r.values()]
        mean, half = interval(ends, next(iter(r.values())).meta["gold_end_se"])
        out.update({f"{_key(lam)}_gold_end": mean, f"{_key(lam)}_gold_end_ci95": half,
                    f"{_key(lam)}_gold_end_seeds": ends, f"{_key(lam)}_n_seeds": len(ends),
                    f"{_key(lam)}_wall_s": statistics.fmean(h.meta["wall_s"] for h in r.values())})
    for a, b in GAPS:
        if a in by_seed and b in by_seed:
            paired = [s for s in by_seed[a] if s in by_seed[b]]
            if not paired:
                continue
            diffs = [by_seed[a][s].meta["gold_end"] - by_seed[b][s].meta["gold_end"] for s in paired]
            se = math.hypot(by_seed[a][paired[0]].meta["gold_end_se"], by_seed[b][paired[0]].meta["gold_end_se"])
            mean, half = interval(diffs, se)
            name = f"gap_{_key(a)[3:]}_vs_{_key(b)[3:]}"
            out.update({name: mean, f"{name}_ci95": half, f"{name}_seeds": diffs,
                        f"{name}_reading": reading(mean, half, a, b, len(diffs))})
    if wall_s is not None:
        out["wall_s"] = round(wall_s, 1)
    return out


def format_summary(runs: Mapping, values: dict) -> str:
    """One line per run, then per λ the mean ± 95% interval and the paired differences, as text."""
    lines = []
    for lam, by_seed in runs_by_seed(runs).items():
        for seed, h in by_seed.items():
            m = h.meta
            lines.append(f"λ = {lam:<4g} seed {seed}: held-out gold {m['gold_start']:+.3f} -> {m['gold_end']:+.3f} "
                         f"± {m['gold_end_se']:.3f} (one standard error over prompts), KL {m['kl_end']:.3f} nats")
    over = f"over {values['n_seeds']} seeds (Student t)" if values["n_seeds"] > 1 else \
        "over the held-out prompts only (one seed: 1.96 standard errors)"
    lines.append(f"mean ± 95% interval {over}:")
    for lam in values["lambdas"]:
        k = _key(lam)
        lines.append(f"  λ = {lam:<4g} gold {values[f'{k}_gold_end']:+.3f} ± {values[f'{k}_gold_end_ci95']:.3f}")
    for a, b in GAPS:
        name = f"gap_{_key(a)[3:]}_vs_{_key(b)[3:]}"
        if name in values:
            gap, half, words = values[name], values[f"{name}_ci95"], values[f"{name}_reading"]
            lines.append(f"  λ = {a:g} − λ = {b:g}, paired by seed: {gap:+.3f} ± {half:.3f} ({words})")
    return "\n".join(lines)


def main(argv=None) -> int:
    """``python -m rlprep.demos.ppo_lambda [--record]``: :data:`RECORD_SEEDS` x :data:`LAMBDAS` with the reference
    ``compute_gae`` in the active profile, no plot window."""
    from rlprep.algos.gae import compute_gae

    def demo(progress, record, show):
        return lambda_sweep(compute_gae, seeds=RECORD_SEEDS, live=progress, plot=show, record=record)

    return record_cli("rlprep.demos.ppo_lambda", RECORD, demo, argv)


if __name__ == "__main__":
    raise SystemExit(main())

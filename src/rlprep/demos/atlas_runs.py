"""Notebook 13's side-by-side runs: the same GPT-2 arithmetic task trained with every policy-gradient variant.

Each key of ``rlprep.algos.pg_losses.PG_LOSSES`` (reinforce, rloo, grpo, dr_grpo, dapo, gspo, cispo, sapo) trains
a fresh copy of the same warm start through ``GRPOTrainer`` with ``GRPOConfig.loss_type = name``: the variant's own
loss and baseline (``PG_ADVANTAGES``), the same seeds, prompts per step, group size and number of steps. Two
gradient steps per batch (mu = 2) make the second step off-policy, so the clipping rules (PPO's band, DAPO's
clip-higher, GSPO's sequence ratio, CISPO's clipped weight, SAPO's soft gate) act at all; with mu = 1 every ratio is
exactly 1 and only the baselines and the aggregations would differ.

:func:`side_by_side` returns the histories; :func:`summarise` the end-of-run accuracy, k3 KL to the SFT policy,
entropy and completion length per variant (mean and spread over seeds); :func:`plot_runs` draws the curves.
``python -m rlprep.demos.atlas_runs --record`` writes ``records/atlas_runs.json`` (notebook 13 shows it).
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from dataclasses import replace

from rlprep.algos.pg_losses import PG_LOSSES
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.grpo import LOSS_KNOBS, GRPOConfig, train_grpo

RECORD = "atlas_runs"
VARIANTS = tuple(PG_LOSSES)
BUDGETS = {  # the same for every variant; the cpu record must fit 10 minutes on 2 cores for all 8 variants x seeds
    "smoke": dict(steps=2, prompts_per_step=2, group_size=4, eval_every=2, eval_size=20, seeds=(0,)),
    "cpu": dict(steps=12, prompts_per_step=8, group_size=8, eval_every=6, eval_size=200, seeds=(0, 1, 2)),
    "gpu": dict(steps=60, prompts_per_step=32, group_size=16, eval_every=20, eval_size=1000, seeds=(0, 1, 2)),
}
NUM_ITERATIONS = 2  # mu: the second gradient step on a batch is off-policy, so the clip rules differ
CURVES = {  # metric -> (y label with its unit, panel title)
    "reward/mean": ("mean training reward (fraction correct)", "reward of the sampled completions"),
    "stats/kl_k3_token": ("k3 KL to the SFT policy (nats / token)", "drift from the warm start"),
    "stats/entropy": ("policy entropy (nats / token)", "entropy of the sampled tokens"),
    "stats/completion_len": ("completion length (tokens)", "length of the sampled completions"),
}
SUMMARY = {"accuracy": "eval/accuracy", "kl": "stats/kl_k3_token", "entropy": "stats/entropy",
           "length": "stats/completion_len"}


def budget(profile: str | Profile | None = None) -> tuple[GRPOConfig, tuple[int, ...]]:
    """(the shared GRPOConfig without ``loss_type``, the seeds) for ``profile``: the same budget for every variant,
    with every knob a variant fixes (``LOSS_KNOBS``) unset, so each runs its own."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    spec = dict(BUDGETS.get(p.name, BUDGETS["gpu"]))
    seeds = spec.pop("seeds")
    config = GRPOConfig.for_profile(p, num_iterations=NUM_ITERATIONS, beta=0.0, plot_every=10**6,
                                    **dict.fromkeys(LOSS_KNOBS), **spec)
    return config, seeds


def side_by_side(profile: str | Profile | None = None, variants=VARIANTS, seeds: tuple[int, ...] | None = None,
                 progress: bool | None = False) -> dict[str, list]:
    """Train every variant in ``variants`` from the same warm start with the same budget, once per seed.

    Returns ``{variant: [History per seed]}``; each history's ``meta`` has ``accuracy_start``, ``accuracy_end``,
    ``wall_s`` and ``config`` (its ``loss_type`` and ``seed``).
    """
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.warm_start import load_warm_start, warm_start_kwargs

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config, default_seeds = budget(p)
    unknown = [v for v in variants if v not in PG_LOSSES]
    if unknown:
        raise ValueError(f"unknown variant(s) {unknown}; choose from {sorted(PG_LOSSES)}")
    policy, tokenizer = load_warm_start(p, **warm_start_kwargs(config))
    task = get_task("arithmetic")
    runs: dict[str, list] = {}
    for name in variants:
        for seed in default_seeds if seeds is None else seeds:
            run = train_grpo(replace(config, loss_type=name, seed=seed), policy=copy.deepcopy(policy),
                             tokenizer=tokenizer, task=task, live=progress, desc=f"{name} s{seed}")
            runs.setdefault(name, []).append(run)
            if run.interrupted:
                return runs
    return runs


def _tail_mean(run, key: str) -> float:
    """Mean of ``key`` over the last quarter of the steps that logged it (at least one): the run's end state."""
    _, values = run.series(key)
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return float("nan")
    tail = values[-max(1, len(values) // 4):]
    return sum(tail) / len(tail)


def summarise(runs: dict[str, list]) -> dict:
    """Flat record values: ``<variant>/<quantity>_mean`` and ``_spread`` (sample std over seeds; 0 for one seed).

    Quantities: ``accuracy`` (held-out greedy accuracy at the end), ``kl``, ``entropy`` and ``length`` (means over
    the last quarter of the steps); plus ``accuracy_start``, ``seeds``, ``steps`` and ``completions_per_step``.
    """
    values: dict = {}
    for name, histories in runs.items():
        for quantity, key in SUMMARY.items():
            per_seed = [h.meta["accuracy_end"] if quantity == "accuracy" else _tail_mean(h, key) for h in histories]
            values[f"{name}/{quantity}_mean"] = statistics.fmean(per_seed)
            values[f"{name}/{quantity}_spread"] = statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0
    first = next(iter(runs.values()))
    config = first[0].meta["config"]
    values.update({"accuracy_start": first[0].meta["accuracy_start"], "seeds": len(first), "steps": config["steps"],
                   "completions_per_step": config["prompts_per_step"] * config["group_size"],
                   "updates_per_batch": config["num_iterations"], "eval_size": config["eval_size"]})
    return values


def _mean_curve(histories, key: str) -> tuple[list[int], list[float]]:
    """Steps and the mean over seeds of ``key`` (the seeds log the same steps)."""
    steps, _ = histories[0].series(key)
    columns = [h.series(key)[1] for h in histories]
    return list(steps), [statistics.fmean(col) for col in zip(*columns)]


def plot_runs(runs: dict[str, list], profile_name: str = "", show: bool = True):
    """Five panels, one line per variant (mean over seeds): held-out accuracy, reward, KL, entropy, length."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 5, figsize=(22, 4.2))
    panels = {"eval/accuracy": ("held-out accuracy (greedy, fraction correct)", "held-out accuracy"), **CURVES}
    for ax, (key, (ylabel, title)) in zip(axes, panels.items()):
        for name, histories in runs.items():
            steps, mean = _mean_curve(histories, key)
            ax.plot(steps, mean, marker="o" if key == "eval/accuracy" else None, ms=3, label=name)
        ax.set(xlabel="training step (one batch of rollouts)", ylabel=ylabel, title=title)
    seeds = len(next(iter(runs.values())))
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Every PG_LOSSES variant on arithmetic, same warm start and budget "
                 f"({profile_name} profile, mean of {seeds} seed{'s' if seeds > 1 else ''})")
    fig.tight_layout()
    if show:
        plt.show()
    return fig


def experiment(profile: str | None = None) -> dict:
    """All variants in ``profile``'s budget; the record's values (with the wall time of the whole experiment)."""
    t0 = time.perf_counter()
    values = summarise(side_by_side(profile, progress=False))
    values["wall_s"] = round(time.perf_counter() - t0, 1)
    return values


def main(argv=None) -> int:
    """``python -m rlprep.demos.atlas_runs [--record] [--profile P]``: run every variant; write the record."""
    import matplotlib

    from rlprep.demos.recorded import run_and_record

    matplotlib.use("Agg")
    args = sys.argv[1:] if argv is None else argv
    profile = args[args.index("--profile") + 1] if "--profile" in args[:-1] else get_profile(None).name
    command = f"RLPREP_PROFILE={profile} python -m rlprep.demos.atlas_runs --record"
    return run_and_record(experiment, RECORD, command, argv, "Notebook 13's side-by-side runs of every "
                          "policy-gradient variant with the same seeds and budget.")


if __name__ == "__main__":
    sys.exit(main())

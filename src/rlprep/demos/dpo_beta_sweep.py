"""lab04's GPT-2 demo and W12's β sweep: DPO on the reviews preference pairs, one run per β and training seed.

Checks the first loss (policy = reference, so ln 2: DPO, Rafailov et al. 2023, arXiv 2305.18290, Eq. 7 at a zero
margin), trains a fresh copy of the SFT policy per (seed, β) with :func:`rlprep.trainers.dpo.beta_sweep`, and draws
the gold-reward-versus-KL frontier (the paper's Fig. 2, left, in miniature) with the training curves per β.

With several seeds each β gets the mean over seeds and a 95% Student-t interval of that mean (``*_ci95``: the
half-width); with one seed the interval covers the evaluation samples only (1.96 standard errors), not the spread
between training runs. :func:`kl_trend` calls a step between neighbouring β a fall only when the intervals do not
overlap. ``python -m rlprep.demos.dpo_beta_sweep --record`` runs :data:`RECORD_SEEDS` at :data:`RECORD_BUDGET` with
the reference functions and writes ``records/lab04_beta_sweep.json``; :func:`recorded_table` prints it.
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from dataclasses import replace
from functools import partial
from typing import Callable, Sequence

from rlprep.demos.lab_runs import profile_note, record_cli, save_record
from rlprep.demos.seed_stats import mean_ci95
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.dpo import SWEEP_BETAS, DPOConfig, beta_sweep

RECORD = "lab04_beta_sweep"
RECORD_SEEDS = (0, 1, 2)
"""Training seeds of the recorded sweep (data order, evaluation prompts and sampling; the SFT start is shared)."""
RECORD_BUDGET = dict(steps=40, eval_every=40)
"""The recorded sweep's cut of the cpu budget: 3 seeds x 5 β at the lab's 80 steps did not fit in ~15 minutes on
2 shared cores, so each run trains 40 steps and is evaluated at its start and end (same batch and evaluation size)."""

METRICS = (("kl", "kl_se"), ("gold", "gold_se"), ("implicit_accuracy", None))

def lab_config(profile: str | Profile | None = None, **overrides) -> DPOConfig:
    """The lab's budget: ``DPOConfig.for_profile``, cut to seconds per β in the smoke profile."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = DPOConfig.for_profile(p)
    if p.name == "smoke":
        config = replace(config, steps=4, eval_every=4, eval_prompts=16, n_train_pairs=64)
    return replace(config, **overrides)


def summarize_seeds(runs: dict[int, list[dict]]) -> list[dict]:
    """One row per β from ``{seed: beta_sweep rows}``: the mean over seeds and its 95% interval.

    Row keys: ``beta``, ``n_seeds``, ``interval`` ("seeds" or "evaluation samples"), for each of ``kl``, ``gold``,
    ``implicit_accuracy``: the mean, ``<key>_ci95`` (half-width) and ``<key>_seeds`` (one value per seed);
    ``gold_start``, ``interrupted`` and the first seed's ``history``. A β that not every seed finished is left out.
    """
    seeds = list(runs)
    betas = [r["beta"] for r in runs[seeds[0]]] if seeds else []
    rows = []
    for i, beta in enumerate(betas):
        finished = [runs[s][i] for s in seeds if i < len(runs[s])]
        if len(finished) < len(seeds):
            break
        row = {"beta": beta, "n_seeds": len(seeds), "interval": "seeds" if len(seeds) > 1 else "evaluation samples",
               "gold_start": statistics.fmean(r["gold_start"] for r in finished),
               "interrupted": any(r["interrupted"] for r in finished), "history": finished[0]["history"]}
        for key, se in METRICS:
            values = [r["reward/implicit_accuracy"] if key == "implicit_accuracy" else r[key] for r in finished]
            if len(values) > 1:
                mean, half = mean_ci95(values)
            else:
                mean, half = values[0], 1.96 * finished[0][se] if se else float("nan")
            row.update({key: mean, f"{key}_ci95": half, f"{key}_seeds": values})
        rows.append(row)
    return rows


def kl_trend(rows: Sequence[dict]) -> list[str]:
    """For each neighbouring pair of β (in the rows' order): "falls" when the larger β's KL interval lies wholly
    below the smaller β's, "rises" when wholly above, "overlaps" otherwise."""
    verdicts = []
    for a, b in zip(rows, rows[1:]):
        lo_a, hi_b = a["kl"] - a["kl_ci95"], b["kl"] + b["kl_ci95"]
        hi_a, lo_b = a["kl"] + a["kl_ci95"], b["kl"] - b["kl_ci95"]
        verdicts.append("falls" if hi_b < lo_a else "rises" if lo_b > hi_a else "overlaps")
    return verdicts


def plot_frontier(rows: list[dict], title: str = ""):
    """Gold reward vs KL, one point per β (bars: the rows' 95% intervals), beside the first seed's implicit-reward
    accuracy and log-probs per step."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_acc, ax_lp) = plt.subplots(1, 3, figsize=(16, 4.5))
    colors = plt.cm.viridis([i / max(1, len(rows) - 1) for i in range(len(rows))])
    for r, c in zip(rows, colors):
        ax.errorbar(r["kl"], r["gold"], xerr=r["kl_ci95"], yerr=r["gold_ci95"], fmt="o", color=c, capsize=3,
                    label=f"β = {r['beta']:g}")
        ax.annotate(f"β={r['beta']:g}", (r["kl"], r["gold"]), textcoords="offset points", xytext=(6, 4))
        h = r["history"]
        ax_acc.plot(*h.series("reward/implicit_accuracy"), color=c, label=f"β = {r['beta']:g}")
        ax_lp.plot(*h.series("logps/chosen"), color=c, label=f"chosen, β = {r['beta']:g}")
        ax_lp.plot(*h.series("logps/rejected"), color=c, ls="--")
    if rows:
        ax.axhline(rows[0]["gold_start"], color="gray", ls=":", label="SFT start")
    over = f"mean of {rows[0]['n_seeds']} seeds, 95% intervals" if rows and rows[0]["n_seeds"] > 1 else "one seed"
    ax.set(xlabel="KL(π ‖ π_ref) per sequence (nats)", ylabel="gold reward of policy samples (gold-scorer units)",
           title=f"Reward vs KL frontier, one point per β ({over})")
    ax_acc.set(xlabel="DPO step", ylabel="implicit-reward accuracy (fraction of pairs)",
               title="β·log π/π_ref ranks chosen above rejected (first seed)")
    ax_lp.set(xlabel="DPO step", ylabel="log π(y|x) of the batch (nats)",
              title="chosen (solid) and rejected (dashed) log-probs (first seed)")
    for a in (ax, ax_lp) if rows else ():
        a.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _key(beta: float, name: str) -> str:
    return f"beta_{beta:g}_{name}".replace(".", "p")


def record_values(rows: list[dict], config: DPOConfig, seeds: Sequence[int], wall_s: float) -> dict:
    """The JSON values of ``records/lab04_beta_sweep.json`` (``beta_<β>_<metric>``, dots written as ``p``)."""
    values = {"betas": [r["beta"] for r in rows], "seeds": list(seeds), "n_seeds": len(seeds),
              "interval": rows[0]["interval"] if rows else "", "kl_trend": kl_trend(rows),
              "gold_start": rows[0]["gold_start"] if rows else float("nan"), "steps": config.steps,
              "batch_size": config.batch_size, "eval_prompts": config.eval_prompts, "wall_s": round(wall_s, 1)}
    for r in rows:
        for key, _ in METRICS:
            values.update({_key(r["beta"], key): r[key], _key(r["beta"], f"{key}_ci95"): r[f"{key}_ci95"],
                           _key(r["beta"], f"{key}_seeds"): r[f"{key}_seeds"]})
    return values


def beta_frontier(sequence_logprobs: Callable | None = None, dpo_loss: Callable | None = None,
                  profile: str | Profile | None = None, betas=SWEEP_BETAS, seeds: Sequence[int] = (0,),
                  progress: bool | None = None, record: bool = False, show: bool = True, **overrides) -> list[dict]:
    """Train the reviews policy with DPO once per (seed, β) using the given functions; print, plot, return the rows.

    Each run shows a progress line named after it (``dpo beta=0.1``); the stop button (■) ends the sweep and
    keeps the β every seed finished. Rows: :func:`summarize_seeds`. ``record=True`` writes
    ``records/lab04_beta_sweep.json`` (:func:`record_values`).
    """
    import matplotlib.pyplot as plt

    from rlprep.tinyworld import get_task, load_policy

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = lab_config(p, **overrides)
    mine = dict(sequence_logprobs=sequence_logprobs, dpo_loss=dpo_loss)
    print(profile_note(f"DPO, {config.steps} steps x {config.batch_size} pairs for each β in {tuple(betas)}, "
                       f"seeds {tuple(seeds)}", p))
    policy, tokenizer = load_policy("reviews", p)
    task = get_task("reviews")
    pair = task.preference_pairs(1, split="train", seed=0)[0]
    print(f"prompt   {pair.prompt!r}\nchosen   {pair.chosen!r}\nrejected {pair.rejected!r}")
    from rlprep.trainers.dpo import DPOTrainer

    first = DPOTrainer(config, copy.deepcopy(policy), tokenizer, task, **mine).step(0)["loss/dpo"]
    verdict = "ok" if abs(first - math.log(2)) < 1e-3 else "WRONG: at step 0 the loss must be ln 2, check dpo_loss"
    print(f"loss at step 0 = {first:.6f}   ln 2 = {math.log(2):.6f}   {verdict}")
    t0 = time.perf_counter()
    runs: dict[int, list[dict]] = {}
    for seed in seeds:
        runs[seed] = beta_sweep(betas, config=replace(config, seed=seed), policy=policy, tokenizer=tokenizer,
                                task=task, live=progress, **mine)
        if runs[seed] and runs[seed][-1]["interrupted"]:
            print(f"stopped early in seed {seed}; the last run is saved in "
                  f"{runs[seed][-1]['history'].meta.get('run_dir')}")
            break
    wall = time.perf_counter() - t0
    rows = summarize_seeds(runs) if runs else []
    print(format_rows(rows))
    plot_frontier(rows, f"DPO β sweep on the reviews policy ({p.name} profile, {config.steps} steps per β)")
    if show:
        plt.show()
    if record:
        save_record(RECORD, record_values(rows, config, list(runs), wall), "rlprep.demos.dpo_beta_sweep", p)
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    """The sweep as a text table and the KL verdict between neighbouring β. With several seeds the KL column lists
    one value per seed: a mean ± t-interval over three seeds of a non-negative quantity can reach below zero (as
    Lab 4 says); the verdict still compares the intervals. Gold is a mean ± 95% half-width."""
    if not rows:
        return "no β finished"
    n, interval = rows[0]["n_seeds"], rows[0]["interval"]
    per_seed = n > 1 and all("kl_seeds" in r for r in rows)
    kl_head = "KL(pi||ref) nats, per seed" if per_seed else "KL(pi||ref) nats"
    lines = [f"{'beta':>6}  {kl_head:>26}  {'gold':>16}  {'implicit acc':>13}"]
    for r in rows:
        kl = (", ".join(f"{x:.2f}" for x in r["kl_seeds"]) if per_seed else f"{r['kl']:8.3f} ± {r['kl_ci95']:<6.3f}")
        lines.append(f"{r['beta']:>6g}  {kl:>26}  {r['gold']:+7.3f} ± {r['gold_ci95']:<6.3f}"
                     f"  {r['implicit_accuracy']:13.2f}")
    lines.append(f"SFT start: gold {rows[0]['gold_start']:+.3f}. ± is the 95% interval over {interval}"
                 + (f" ({n} seeds, Student t)" if n > 1 else " (1.96 standard errors; one seed)"))
    trend = kl_trend(rows)
    steps = ", ".join(f"{a['beta']:g}→{b['beta']:g} {v}" for a, b, v in zip(rows, rows[1:], trend))
    if trend:
        ok = all(v == "falls" for v in trend)
        lines.append(f"KL between neighbouring β: {steps}. "
                     + ("KL falls monotonically as β grows, beyond the intervals."
                        if ok else "The intervals do not show a monotone fall at every step."))
    return "\n".join(lines)


def recorded_rows(name: str = RECORD) -> tuple[list[dict], dict]:
    """The recorded sweep as :func:`summarize_seeds` rows (without histories), and the whole record."""
    from rlprep.records import load

    doc = load(name)
    v = doc["values"]
    rows = [{"beta": b, "n_seeds": v["n_seeds"], "interval": v["interval"], "gold_start": v["gold_start"],
             **{k: v[_key(b, k)] for key, _ in METRICS for k in (key, f"{key}_ci95", f"{key}_seeds")}}
            for b in v["betas"]]
    return rows, doc


def recorded_table(name: str = RECORD) -> str:
    """The recorded sweep (``records/<name>.json``) as :func:`format_rows` prints it, with its command and budget.
    The run's wall time, machine and date are in :func:`recorded_conditions` (a Reproducibility note's line)."""
    from rlprep.records import command_line

    rows, doc = recorded_rows(name)
    v = doc["values"]
    head = (f"recorded ({doc['profile']} profile): {v['steps']} steps x {v['batch_size']} pairs per run, "
            f"evaluated on {v['eval_prompts']} held-out prompts, seeds {tuple(v['seeds'])}; remake with: "
            f"{command_line(doc)}")
    return head + "\n" + format_rows(rows)


def recorded_conditions(name: str = RECORD) -> str:
    """One line for a Reproducibility note: the record's command, wall time, machine and date."""
    from rlprep.records import command_line

    _, doc = recorded_rows(name)
    return (f"`{command_line(doc)}` ({doc['profile']} profile): {doc['values']['wall_s']:.0f} s on {doc['machine']}, "
            f"{doc['date']}.")


def plot_recorded(name: str = RECORD):
    """KL by β (seed means, each seed as a dot) and gold reward (95% interval) vs mean KL, from the record."""
    import matplotlib.pyplot as plt

    rows, doc = recorded_rows(name)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    betas = [r["beta"] for r in rows]
    ax1.plot(betas, [r["kl"] for r in rows], marker="o", label="mean over seeds")  # no ± band: KL >= 0 (Lab 4)
    for i, r in enumerate(rows):
        ax1.plot([r["beta"]] * len(r["kl_seeds"]), r["kl_seeds"], "k.", ms=5, label="one seed" if i == 0 else None)
    ax1.set(xscale="log", title="KL to the reference after DPO, by β (dots: seeds)", xlabel="β (log scale)",
            ylabel="KL(π‖π_ref) per sequence (nats)")
    ax1.legend(fontsize=8)
    ax2.errorbar([r["kl"] for r in rows], [r["gold"] for r in rows], yerr=[r["gold_ci95"] for r in rows], marker="o",
                 ls="", capsize=3)  # x: the seeds' mean KL; y: gold with its 95% interval
    for r in rows:
        ax2.annotate(f"β={r['beta']:g}", (r["kl"], r["gold"]), fontsize=8, xytext=(4, 4), textcoords="offset points")
    ax2.axhline(rows[0]["gold_start"], color="gray", ls="--", label="SFT start")
    ax2.set(title="Gold reward vs KL: the β frontier", xlabel="KL(π‖π_ref) per sequence (nats)",
            ylabel="gold score (hidden scorer, mean)")
    ax2.legend(fontsize=8)
    fig.suptitle(f"Recorded β sweep ({doc['profile']} profile, {len(doc['values']['seeds'])} seeds, "
                 f"{doc['values']['steps']} steps per run)")
    fig.tight_layout()
    return fig


def main(argv=None) -> int:
    """``python -m rlprep.demos.dpo_beta_sweep --record``: the sweep over :data:`RECORD_SEEDS` at :data:`RECORD_BUDGET`
    with the reference functions, recorded."""
    return record_cli("rlprep.demos.dpo_beta_sweep", RECORD, partial(beta_frontier, seeds=RECORD_SEEDS, **RECORD_BUDGET),
                      argv)


if __name__ == "__main__":
    raise SystemExit(main())

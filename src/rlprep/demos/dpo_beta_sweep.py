"""lab04's GPT-2 demo: DPO on the reviews preference pairs with the learner's functions, one run per β.

Checks the first loss (policy = reference, so ln 2: DPO, Rafailov et al. 2023, arXiv 2305.18290, Eq. 7 at a zero
margin), trains a fresh copy of the SFT policy per β with :func:`rlprep.trainers.dpo.beta_sweep`, and draws the
gold-reward-versus-KL frontier (the paper's Fig. 2, left, in miniature) with the training curves per β.
``python -m rlprep.demos.dpo_beta_sweep --record`` runs it with the reference functions and writes
``records/lab04_beta_sweep.json``.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import replace
from typing import Callable

from rlprep.demos.lab_runs import profile_note, record_cli, save_record
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.dpo import SWEEP_BETAS, DPOConfig, DPOTrainer, beta_sweep

RECORD = "lab04_beta_sweep"


def lab_config(profile: str | Profile | None = None, **overrides) -> DPOConfig:
    """The lab's budget: ``DPOConfig.for_profile``, cut to seconds per β in the smoke profile."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = DPOConfig.for_profile(p)
    if p.name == "smoke":
        config = replace(config, steps=4, eval_every=4, eval_prompts=16, n_train_pairs=64)
    return replace(config, **overrides)


def plot_frontier(rows: list[dict], title: str = ""):
    """Gold reward vs KL, one point per β, beside the implicit-reward accuracy and the log-probs per step."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_acc, ax_lp) = plt.subplots(1, 3, figsize=(16, 4.5))
    colors = plt.cm.viridis([i / max(1, len(rows) - 1) for i in range(len(rows))])
    for r, c in zip(rows, colors):
        ax.errorbar(r["kl"], r["gold"], xerr=r["kl_se"], yerr=r["gold_se"], fmt="o", color=c, label=f"β = {r['beta']:g}")
        ax.annotate(f"β={r['beta']:g}", (r["kl"], r["gold"]), textcoords="offset points", xytext=(6, 4))
        h = r["history"]
        ax_acc.plot(*h.series("reward/implicit_accuracy"), color=c, label=f"β = {r['beta']:g}")
        ax_lp.plot(*h.series("logps/chosen"), color=c, label=f"chosen, β = {r['beta']:g}")
        ax_lp.plot(*h.series("logps/rejected"), color=c, ls="--")
    if rows:
        ax.axhline(rows[0]["gold_start"], color="gray", ls=":", label="SFT start")
    ax.set(xlabel="KL(π ‖ π_ref) per sequence (nats)", ylabel="gold reward of policy samples (gold-scorer units)",
           title="Reward vs KL frontier, one point per β")
    ax_acc.set(xlabel="DPO step", ylabel="implicit-reward accuracy (fraction of pairs)",
               title="β·log π/π_ref ranks chosen above rejected")
    ax_lp.set(xlabel="DPO step", ylabel="log π(y|x) of the batch (nats)",
              title="chosen (solid) and rejected (dashed) log-probs")
    for a in (ax, ax_lp) if rows else ():
        a.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def beta_frontier(sequence_logprobs: Callable | None = None, dpo_loss: Callable | None = None,
                  profile: str | Profile | None = None, betas=SWEEP_BETAS, progress: bool | None = None,
                  record: bool = False, show: bool = True, **overrides) -> list[dict]:
    """Train the reviews policy with DPO once per β using the given functions; print, plot and return the rows.

    Each run shows a progress line named after it (``dpo beta=0.1``); the stop button (■) ends the sweep and
    keeps the β finished so far. Rows: ``beta``, ``kl``, ``kl_se``, ``gold``, ``gold_se``, ``gold_start``,
    ``reward/implicit_accuracy``, ``interrupted``, ``history``. ``record=True`` writes ``records/lab04_beta_sweep.json``.
    """
    import matplotlib.pyplot as plt

    from rlprep.demos.lab_runs import profile_note, save_record
    from rlprep.tinyworld import get_task, load_policy

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = lab_config(p, **overrides)
    mine = dict(sequence_logprobs=sequence_logprobs, dpo_loss=dpo_loss)
    print(profile_note(f"DPO, {config.steps} steps x {config.batch_size} pairs for each β in {tuple(betas)}", p))
    policy, tokenizer = load_policy("reviews", p)
    task = get_task("reviews")
    pair = task.preference_pairs(1, split="train", seed=0)[0]
    print(f"prompt   {pair.prompt!r}\nchosen   {pair.chosen!r}\nrejected {pair.rejected!r}")
    first = DPOTrainer(config, copy.deepcopy(policy), tokenizer, task, **mine).step(0)["loss/dpo"]
    verdict = "ok" if abs(first - math.log(2)) < 1e-3 else "WRONG: at step 0 the loss must be ln 2, check dpo_loss"
    print(f"loss at step 0 = {first:.6f}   ln 2 = {math.log(2):.6f}   {verdict}")
    t0 = time.perf_counter()
    rows = beta_sweep(betas, config=config, policy=policy, tokenizer=tokenizer, task=task, live=progress, **mine)
    wall = time.perf_counter() - t0
    for r in rows:
        print(f"beta={r['beta']:<5g} KL(pi||ref) {r['kl']:7.3f} ± {r['kl_se']:.3f} nats   "
              f"gold {r['gold']:+.3f} ± {r['gold_se']:.3f} (SFT {r['gold_start']:+.3f})   "
              f"implicit-reward accuracy {r['reward/implicit_accuracy']:.2f}")
    if rows and rows[-1]["interrupted"]:
        print(f"stopped early: {len(rows)} of {len(betas)} betas; the last one is saved in "
              f"{rows[-1]['history'].meta.get('run_dir')}")
    kls = [r["kl"] for r in rows]
    falls = sum(a > b for a, b in zip(kls, kls[1:]))
    print(f"KL falls between {falls} of {max(0, len(kls) - 1)} neighbouring betas (expected: all, within noise)")
    plot_frontier(rows, f"DPO β sweep on the reviews policy ({p.name} profile, {config.steps} steps per β)")
    if show:
        plt.show()
    if record:
        values = {f"beta_{r['beta']:g}_{k}".replace(".", "p"): r[key] for r in rows
                  for key, k in (("kl", "kl"), ("kl_se", "kl_se"), ("gold", "gold"), ("gold_se", "gold_se"),
                                 ("reward/implicit_accuracy", "implicit_accuracy"))}
        values.update(gold_start=rows[0]["gold_start"] if rows else float("nan"), kl_falls=falls,
                      steps=config.steps, wall_s=round(wall, 1))
        save_record(RECORD, values, "rlprep.demos.dpo_beta_sweep", p)
    return rows


def main(argv=None) -> int:
    """``python -m rlprep.demos.dpo_beta_sweep --record``: the lab's run with the reference functions, recorded."""
    return record_cli("rlprep.demos.dpo_beta_sweep", RECORD, beta_frontier, argv)


if __name__ == "__main__":
    raise SystemExit(main())

"""Lab 2's demos: a GPT-2 reward model trained with the learner's Bradley-Terry loss, checked against gold.

Each lab cell is one call with the learner's function as an argument:

- :func:`train` trains the reviews reward model with ``bradley_terry_loss`` (live progress, then a summary);
- :func:`plot_rm_vs_gold` scatters RM scores against the hidden gold scorer on held-out completions;
- :func:`plot_best_of_n` picks the RM's favourite of N samples (G16) and plots its RM and gold reward against
  the analytic KL log N - (N-1)/N (Stiennon et al. 2020, arXiv 2009.01325, App. G; Gao et al. 2022,
  arXiv 2210.10760, Fig. 1).

``python -m rlprep.demos.reward_model --record`` runs all three in the cpu profile with the reference loss and
writes ``records/lab02_reward_model.json``, the figures the lab's text quotes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rlprep.profiles import Profile, get_profile

RECORD = "lab02_reward_model"
COMMAND = "RLPREP_PROFILE=cpu OMP_NUM_THREADS=1 python -m rlprep.demos.reward_model --record"

SCOPE = {
    "smoke": "smoke profile: {steps} steps on {pairs} pairs, seconds. Too small to reproduce the text's figures "
             "(few held-out pairs, 8 best-of-N prompts: the best-of-N curve is mostly noise); they come from the "
             "cpu profile.",
    "cpu": "cpu profile: {steps} steps on {pairs} pairs, a few minutes on 2 cores: the budget the text's figures "
           "were measured with, so your run should land close to them.",
    "gpu": "gpu profile: {steps} steps on {pairs} pairs: a longer run than the text's cpu figures.",
}


@dataclass
class RewardModelRun:
    """What :func:`train` returns: the trained RM, its history and what the later demos need."""

    rm: object
    history: object
    policy: object
    tokenizer: object
    task: object
    profile: Profile


def train(bradley_terry_loss: Callable, *, profile: str | Profile | None = None, live: bool | None = None,
          **overrides) -> RewardModelRun:
    """Train the reviews reward model with ``bradley_terry_loss(chosen [B], rejected [B]) -> scalar``.

    Prints what the active profile shows, then held-out accuracy (against the label-noise ceiling), agreement
    with the gold ordering and Pearson r with gold. ``overrides`` go to ``RewardModelConfig.for_profile``.
    """
    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.reward_model import RewardModelConfig, train_reward_model

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = RewardModelConfig.for_profile(p, **overrides)
    print(SCOPE[p.name].format(steps=config.steps, pairs=config.n_train_pairs))
    policy, tokenizer = load_policy("reviews", p)
    task = get_task("reviews")
    rm, history = train_reward_model(config, policy=policy, tokenizer=tokenizer, task=task, live=live,
                                     bradley_terry_loss=bradley_terry_loss,
                                     desc=f"lab02 reward model, your loss ({p.name} profile)")
    m = history.meta
    print(f"held-out pairwise accuracy {m['accuracy_start']:.1%} -> {m['accuracy']:.1%} ± {m['accuracy_se']:.1%} "
          f"(ceiling for these noisy labels: {m['ceiling/expected']:.1%}); agreement with the gold ordering "
          f"{m['accuracy_gold']:.1%}; Pearson r with gold {m['pearson_gold']:.3f}")
    return RewardModelRun(rm, history, policy, tokenizer, task, p)


def plot_rm_vs_gold(run: RewardModelRun, *, n_pairs: int = 200, seed: int = 7, show: bool = True) -> dict:
    """Scatter RM score against gold score on the chosen and rejected completions of held-out pairs.

    Returns ``{"rm": [2P] scores, "gold": [2P] scores, "pearson": r}``.
    """
    import matplotlib.pyplot as plt

    pairs = run.task.preference_pairs(n_pairs, split="test", seed=seed)
    prompts = [p.prompt for p in pairs] * 2
    completions = [p.chosen for p in pairs] + [p.rejected for p in pairs]
    rm_scores = run.rm.score(run.tokenizer, prompts, completions).numpy()  # (2P,)
    gold = np.array([run.task.gold_score(p, c) for p, c in zip(prompts, completions)])  # (2P,)
    pearson = float(np.corrcoef(rm_scores, gold)[0, 1])
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(gold, rm_scores, s=8, alpha=0.5)
    ax.set_xlabel("gold score (gold reward units)")
    ax.set_ylabel("RM score (logit units, shift-invariant)")
    ax.set_title(f"Held-out completions: RM vs gold, Pearson r = {pearson:.2f} ({run.profile.name} profile)")
    fig.tight_layout()
    if show:
        plt.show()
    return {"rm": rm_scores, "gold": gold, "pearson": pearson}


def best_of_n_budget(profile: Profile) -> tuple[int, tuple[int, ...]]:
    """(test prompts, the Ns) of the best-of-N demo for ``profile``."""
    if profile.name == "smoke":
        return 8, (1, 2, 4, 8)
    return (64 if profile.name == "cpu" else 256), (1, 2, 4, 8, 16, 32)


def plot_best_of_n(run: RewardModelRun, *, show: bool = True) -> dict:
    """Best-of-N with the trained RM: proxy and gold reward of the pick against KL(best-of-N ‖ policy).

    Returns ``trainers.reward_model.best_of_n``'s dict: ``{"n", "reward/rm", "reward/gold", "reward/gold_se",
    "kl_bound"}``.
    """
    import matplotlib.pyplot as plt

    from rlprep.trainers.reward_model import best_of_n

    n_prompts, ns = best_of_n_budget(run.profile)
    prompts = [ex.prompt for ex in run.task.sample(n_prompts, split="test", seed=5)]
    bon = best_of_n(run.policy, run.rm, run.tokenizer, prompts, ns=ns, task=run.task)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax.plot(bon["kl_bound"], bon["reward/rm"], "o-", color="tab:orange")
    ax.set_xlabel("KL(best-of-N ‖ policy) (nats)")
    ax.set_ylabel("RM score of the pick (logit units)")
    ax.set_title("Proxy reward: rises with N by construction")
    ax2.errorbar(bon["kl_bound"], bon["reward/gold"], yerr=bon["reward/gold_se"], fmt="o-", capsize=3)
    for x, y, n in zip(bon["kl_bound"], bon["reward/gold"], bon["n"]):
        ax2.annotate(f"N={n}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax2.set_xlabel("KL(best-of-N ‖ policy) (nats)")
    ax2.set_ylabel("gold score of the pick (gold reward units)")
    ax2.set_title(f"Gold reward of the RM's pick (± 1 SE, {n_prompts} prompts, {run.profile.name} profile)")
    fig.tight_layout()
    if show:
        plt.show()
    for i, n in enumerate(bon["n"]):
        print(f"best-of-{n:<3d} RM {bon['reward/rm'][i]:+.3f}   gold {bon['reward/gold'][i]:+.3f} "
              f"± {bon['reward/gold_se'][i]:.3f}")
    return bon


def experiment(profile: str | Profile | None = "cpu") -> dict:
    """The lab's three demos with the reference loss; returns the values :func:`main` records."""
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.algos.reward_model import bradley_terry_loss

    start = time.perf_counter()
    run = train(bradley_terry_loss, profile=profile, live=False)
    train_s = time.perf_counter() - start
    scatter = plot_rm_vs_gold(run, show=False)
    bon = plot_best_of_n(run, show=False)
    m, config = run.history.meta, run.history.meta["config"]
    by_n = dict(zip(bon["n"], range(len(bon["n"]))))
    n_max = bon["n"][-1]
    return {
        "steps": config["steps"], "lr": config["lr"], "n_train_pairs": config["n_train_pairs"],
        "n_eval_pairs": config["n_eval_pairs"], "seed": config["seed"], "train_s": train_s,
        "accuracy_start": m["accuracy_start"], "accuracy": m["accuracy"], "accuracy_se": m["accuracy_se"],
        "accuracy_gold": m["accuracy_gold"], "pearson_gold": m["pearson_gold"],
        "ceiling": m["ceiling/expected"], "gold_on_labels": m["ceiling/gold_on_labels"],
        "near_tied": m["ceiling/near_tied"], "scatter_pearson": scatter["pearson"],
        "bon_n": bon["n"], "bon_rm": bon["reward/rm"], "bon_gold": bon["reward/gold"],
        "bon_gold_se": bon["reward/gold_se"], "bon_n_max": n_max, "bon_kl_max": bon["kl_bound"][-1],
        "bon_gold_n1": bon["reward/gold"][by_n[1]], "bon_gold_n8": bon["reward/gold"][by_n[8]],
        "bon_gold_max": bon["reward/gold"][-1],
    }


def main(argv: list[str] | None = None) -> int:
    from rlprep.demos.recorded import run_and_record

    return run_and_record(experiment, RECORD, COMMAND, argv, "Lab 2's demos with the reference Bradley-Terry loss.")


if __name__ == "__main__":
    sys.exit(main())

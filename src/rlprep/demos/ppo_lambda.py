"""Lab 1's PPO demo: the learner's ``compute_gae`` inside PPO-RLHF on the reviews policy, once per λ.

Each completion is one episode ending at its last token, the reward is a per-token KL penalty plus the reward
model's score on the last token, and γ = 1. Every λ starts from the same SFT policy and seed, so the runs differ
by λ alone: λ = 0 trusts the young critic (biased), λ = 1 uses the whole noisy return.

    python -m rlprep.demos.ppo_lambda --record     # cpu profile, reference compute_gae -> records/lab01_ppo_lambda.json
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from dataclasses import replace

LAMBDAS = (0.0, 0.95, 1.0)
STEPS = {"smoke": 2, "cpu": 20}  # gpu: the profile's own budget
RECORD = "lab01_ppo_lambda"


def lambda_sweep(compute_gae, profile=None, lambdas=LAMBDAS, *, live: bool | None = None, plot: bool = True,
                 record: bool = False) -> dict:
    """Train one PPO run per λ with ``compute_gae``; return {λ: History}. Prints what the profile can show."""
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.ppo import PPOConfig, train_ppo
    from rlprep.trainers.reward_model import load_reward_model

    profile = get_profile(profile) if not hasattr(profile, "name") else profile
    steps = STEPS.get(profile.name)
    config = PPOConfig.for_profile(profile, **({"steps": steps, "eval_every": 0} if steps else {}))
    if profile.name == "smoke":
        print(f"smoke profile: {config.steps} PPO steps per λ only check that your function runs inside PPO; the "
              "policy is too small and the runs too short to learn. Set RLPREP_PROFILE=cpu for the comparison.")
    print("loading the reviews SFT policy and its reward model (built once and cached; the first cpu run takes "
          "a few minutes)...", flush=True)
    sft_policy, tokenizer = load_policy("reviews", profile)
    reward_model = load_reward_model(profile, policy=sft_policy, tokenizer=tokenizer)
    runs = {}
    for lam in lambdas:
        runs[lam] = train_ppo(replace(config, gae_lambda=lam), policy=copy.deepcopy(sft_policy), tokenizer=tokenizer,
                              reward_model=reward_model, compute_gae=compute_gae, live=live, label=f"ppo λ={lam:g}")
        if runs[lam].interrupted:
            break
    for lam, h in runs.items():
        m = h.meta
        print(f"λ = {lam:<4g} held-out gold {m['gold_start']:+.3f} -> {m['gold_end']:+.3f} ± {m['gold_end_se']:.3f}, "
              f"KL {m['kl_end']:.3f} nats")
    if plot:
        plot_runs(runs, f"PPO on the reviews policy with your compute_gae ({profile.name} profile, "
                        f"{config.steps} steps per λ)")
    if record:
        record_runs(runs, config.steps, profile.name)
    return runs


def plot_runs(runs: dict, title: str):
    import matplotlib.pyplot as plt

    from rlprep.metrics import unit

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for key, ax in zip(("reward/rm", "reward/gold", "stats/explained_var"), axes):
        for lam, h in runs.items():
            ax.plot(*h.series(key), marker=".", label=f"λ = {lam:g}")
        ax.set_xlabel("PPO step (one batch of rollouts)")
        ax.set_ylabel(f"{key} ({unit(key) or 'value'})")
        ax.set_title(key)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    plt.show()
    return fig


def summary(runs: dict, steps: int) -> dict:
    """The figures lab 1's text quotes: gold reward per λ and the λ = 0 vs 0.95 gap in standard errors."""
    out = {"steps": steps, "lambdas": [float(lam) for lam in runs]}
    first = next(iter(runs.values())).meta
    out["gold_start"] = first["gold_start"]
    for lam, h in runs.items():
        key = f"lam{lam:g}".replace(".", "")
        out[f"{key}_gold_end"] = h.meta["gold_end"]
        out[f"{key}_gold_end_se"] = h.meta["gold_end_se"]
        out[f"{key}_wall_s"] = h.meta["wall_s"]
    if 0.0 in runs and 0.95 in runs:
        a, b = runs[0.0].meta, runs[0.95].meta
        diff = b["gold_end"] - a["gold_end"]
        out["gap_095_vs_0"] = diff
        out["gap_095_vs_0_se"] = diff / math.hypot(a["gold_end_se"], b["gold_end_se"])
    if 1.0 in runs and 0.95 in runs:
        a, b = runs[0.95].meta, runs[1.0].meta
        out["gap_1_vs_095_se"] = (b["gold_end"] - a["gold_end"]) / math.hypot(a["gold_end_se"], b["gold_end_se"])
    return out


def record_runs(runs: dict, steps: int, profile: str):
    from rlprep import records

    return records.record(RECORD, summary(runs, steps), profile=profile,
                          command=f"RLPREP_PROFILE={profile} python -m rlprep.demos.ppo_lambda --record")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rlprep.demos.ppo_lambda", description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help=f"write records/{RECORD}.json")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.algos.gae import compute_gae

    lambda_sweep(compute_gae, live=False, plot=False, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Reward hacking you can watch (lab03, notebook 08): PPO against a reward model with exploitable errors.

Gao, Schulman, Hilton 2022 (arXiv 2210.10760, Fig. 1 and Sec. 3) show that optimising a policy against a learned
proxy RM raises the proxy reward monotonically while the gold reward rises, peaks and falls, and that a smaller
RM (or one trained on less data) is over-optimised sooner. Here the proxy is the reviews reward model trained on
few pairs, and the gold scorer of the reviews task is the "human" the RM stands in for.

- :func:`review_features` describes what the policy writes (length, intensifiers, repeats, parse rate), so a
  run's metrics can *name* the hack instead of only showing a gap between two curves;
- :func:`rm_probes` scores hand-written ladders (one more intensifier, one more repeat, a longer text) with the
  RM and with the gold scorer: where the RM's score keeps climbing and gold falls is what PPO will exploit;
- :func:`hacking_sweep` runs :func:`rlprep.trainers.ppo.kl_sweep` with those features logged every round;
- :func:`plot_hacking` draws RM reward and gold reward against PPO step, one colour per kl_coef.

Reproduce: ``python -m rlprep.demos.reward_hacking --profile cpu`` (see docs/benchmarks.md, issue 4).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace
from typing import Sequence

import numpy as np

WEAK_RM = {"n_train_pairs": 320, "steps": 60}
"""Overrides of :class:`~rlprep.trainers.reward_model.RewardModelConfig` for the proxy RM of the sweep: few pairs
and steps, so it has errors to exploit (Gao et al. 2022, Fig. 2: smaller proxy RMs are over-optimised sooner).
Measured (cpu profile, seed 0): held-out accuracy 73.6%, Pearson r 0.75 with gold (docs/benchmarks.md)."""

PROBE_LADDERS: dict[str, list[str]] = {
    "distinct intensifiers": [" it is lovely.", " it is very lovely.", " it is very really lovely.",
                              " it is very really truly lovely.", " it is very really truly so lovely."],
    "repeated intensifier": [" it is very lovely.", " it is very very lovely.", " it is very very very lovely.",
                             " it is very very very very lovely.", " it is very very very very very lovely."],
    "second sentence": [" it is great.", " it is great. the price is great.",
                        " it is very great. the price is very great.",
                        " it is very really great. the price is very really great.",
                        " it is very really truly great. the price is very really truly great."],
    "broken grammar": [" the color is lovely.", " the colr is lovely.", " the colovely.", " color lovely.",
                       " lovely."],
}
"""Hand-written ladders: each step adds one more of a feature. Gold credits distinct intensifiers (x1.3 each),
but charges 0.5 per repeated intensifier and 0.05 per character beyond 48, and gives -1.5 to text outside the
grammar (the RM never saw any: every annotated pair is grammatical)."""


def review_features(prompts: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """Flat metrics of a batch of review completions (``prompts`` unused; the ``text_metrics`` hook signature).

    ``text/chars`` mean length in characters; ``text/intensifiers`` intensifier words per completion;
    ``text/repeats`` intensifier words that repeat one already in the same sentence, per completion;
    ``text/over_budget`` fraction longer than the gold scorer's 48-character budget; ``text/parse_rate``.
    """
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.tasks.reviews import INTENSIFIERS, LENGTH_BUDGET

    task = get_task("reviews")
    n = max(1, len(texts))
    chars = ints = repeats = over = parses = 0
    for text in texts:
        chars += len(text)
        over += len(text) > LENGTH_BUDGET
        parses += task.parses(text)
        for sentence in text.split("."):
            words = [w for w in sentence.split() if w in INTENSIFIERS]
            ints += len(words)
            repeats += len(words) - len(set(words))
    return {"text/chars": chars / n, "text/intensifiers": ints / n, "text/repeats": repeats / n,
            "text/over_budget": over / n, "text/parse_rate": parses / n}


def rm_probes(reward_model, tokenizer, prompt: str = "Review of the mug:",
              ladders: dict[str, list[str]] | None = None) -> dict[str, dict[str, list]]:
    """RM score and gold score of each rung of each ladder: ``{ladder: {"text", "rm", "gold"}}``.

    A ladder where ``rm`` keeps rising while ``gold`` falls is a feature the RM over-rewards.
    """
    from rlprep.tinyworld import get_task

    task = get_task("reviews")
    out = {}
    for name, texts in (ladders or PROBE_LADDERS).items():
        rm = reward_model.score(tokenizer, [prompt] * len(texts), list(texts)).tolist()
        out[name] = {"text": list(texts), "rm": rm, "gold": [task.gold_score(prompt, t) for t in texts]}
    return out


def hacking_sweep(kl_coefs: Sequence[float] = (0.0, 0.05), config=None, *, reward_model=None, policy=None,
                  tokenizer=None, live: bool | None = False, **functions) -> list[dict]:
    """:func:`~rlprep.trainers.ppo.kl_sweep` with :func:`review_features` logged every round.

    Each row: ``kl_coef``, start/end RM and gold reward, KL, ``history`` (per-step ``reward/rm``,
    ``reward/gold``, ``text/*``), and ``samples``: eight completions of the trained policy.
    """
    from rlprep.rollout import generate
    from rlprep.trainers.ppo import kl_sweep

    rows = kl_sweep(kl_coefs, config, policy=policy, tokenizer=tokenizer, reward_model=reward_model, live=live,
                    text_metrics=review_features, **functions)
    for row in rows:
        trainer = row["history"].trainer
        trainer.policy.eval()
        out = generate(trainer.policy, trainer.tokenizer, trainer.eval_prompts[:8],
                       max_new_tokens=trainer.config.max_new_tokens, seed=0)
        row["samples"] = out.texts
    return rows


def plot_hacking(rows: Sequence[dict], feature: str = "text/parse_rate", title: str = ""):
    """Three panels against PPO step: RM reward, gold reward, and one ``text/*`` feature; a line per kl_coef
    (training-batch means, 5-step moving average), plus held-out ``eval/rm`` / ``eval/gold`` points when the run
    logged them (``eval_every``). Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    panels = [("reward/rm", "eval/rm", "RM (proxy) reward (logit units)"),
              ("reward/gold", "eval/gold", "gold reward (gold units)"),
              (feature, None, feature.split("/")[-1].replace("_", " ") + " (fraction or count)")]
    for (key, eval_key, label), ax in zip(panels, axes):
        for i, row in enumerate(rows):
            color = f"C{i}"
            steps, values = row["history"].series(key)
            ax.plot(steps, _smooth(values), color=color, label=f"kl_coef = {row['kl_coef']:g}")
            if eval_key is not None:
                e_steps, e_values = row["history"].series(eval_key)
                if len(e_steps) > 1:
                    ax.plot(e_steps, e_values, "o", color=color, markersize=4)
        ax.set_xlabel("PPO step")
        ax.set_ylabel(label)
        ax.set_title(key)
        ax.legend(fontsize=8)
    fig.suptitle(title or "Reward hacking: the proxy climbs while gold falls at low kl_coef "
                          "(lines: batch means, 5-step average; dots: held-out evaluation)")
    fig.tight_layout()
    return fig


def _smooth(values: Sequence[float], window: int = 5) -> list[float]:
    """Trailing moving average (the first points average what there is)."""
    values = np.asarray(values, dtype=float)
    return [float(values[max(0, i - window + 1):i + 1].mean()) for i in range(len(values))]


def main(argv: list[str] | None = None) -> int:
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.ppo import PPOConfig
    from rlprep.trainers.reward_model import load_reward_model, RewardModelConfig

    parser = argparse.ArgumentParser(description="Reward hacking: a kl_coef sweep of PPO against a weak RM.")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--rm-pairs", type=int, default=WEAK_RM["n_train_pairs"],
                        help="train the proxy RM on this many pairs")
    parser.add_argument("--rm-steps", type=int, default=WEAK_RM["steps"])
    parser.add_argument("--eval-every", type=int, default=0, help="held-out gold/RM evaluation every N steps")
    parser.add_argument("--steps", type=int, default=None, help="PPO steps per kl_coef")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--kl-coefs", default="0,0.05")
    parser.add_argument("--plot", default=None, help="save the plot here (png)")
    parser.add_argument("--json", default=None, help="save per-step series here")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rm_over = {k: v for k, v in (("n_train_pairs", args.rm_pairs), ("steps", args.rm_steps)) if v is not None}
    rm_config = RewardModelConfig.for_profile(args.profile, **rm_over)
    policy, tokenizer = load_policy("reviews", rm_config.profile)
    rm = load_reward_model(rm_config.profile, policy=policy, tokenizer=tokenizer, config=rm_config)
    print(f"RM: {rm_config.n_train_pairs} pairs, {rm_config.steps} steps: held-out accuracy "
          f"{rm.meta.get('accuracy', float('nan')):.3f}, r(gold) {rm.meta.get('pearson_gold', float('nan')):.3f}")
    for name, probe in rm_probes(rm, tokenizer).items():
        print(f"  probe {name}: " + "  ".join(f"{r:+.2f}/{g:+.2f}" for r, g in zip(probe["rm"], probe["gold"]))
              + "   (RM/gold per rung)")
    ppo_over = {k: v for k, v in (("steps", args.steps), ("lr", args.lr)) if v is not None}
    config = PPOConfig.for_profile(rm_config.profile, **ppo_over)
    kl_coefs = [float(x) for x in args.kl_coefs.split(",")]
    rows = hacking_sweep(kl_coefs, replace(config, eval_every=args.eval_every), reward_model=rm, policy=policy,
                         tokenizer=tokenizer)
    for r in rows:
        h = r["history"]
        print(f"kl_coef={r['kl_coef']:<6g} RM {r['rm_start']:+.3f} -> {r['rm_end']:+.3f}  gold {r['gold_start']:+.3f}"
              f" -> {r['gold_end']:+.3f} ± {r['gold_end_se']:.3f}  KL {r['kl_end']:.2f}  "
              + "  ".join(f"{k.split('/')[1]} {h.last(k):.2f}" for k in ("text/chars", "text/intensifiers",
                                                                        "text/repeats", "text/parse_rate")))
        print("    samples: " + " | ".join(r["samples"][:4]))
    print(f"wall {time.perf_counter() - t0:.0f} s")
    if args.json:
        keys = ("reward/rm", "reward/gold", "stats/kl_k1_seq", "text/chars", "text/intensifiers", "text/repeats",
                "text/parse_rate", "eval/gold", "eval/gold_se", "eval/rm")
        with open(args.json, "w") as f:
            json.dump([{**{k: v for k, v in r.items() if k not in ("history",)},
                        "series": {k: r["history"].series(k) for k in keys}} for r in rows], f)
    if args.plot:
        plot_hacking(rows).savefig(args.plot, dpi=90)
    return 0 if all(math.isfinite(r["gold_end"]) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

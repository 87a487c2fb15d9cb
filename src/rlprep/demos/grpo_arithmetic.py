"""lab05's GPT-2 demos: GRPO on arithmetic with the learner's ``group_advantages``, ``grpo_loss`` and ``kl_k3``.

``main_run`` trains the early-stopped SFT warm start (GRPO, Shao et al. 2024, arXiv 2402.03300, Eq. 3, with DAPO's
token aggregation, arXiv 2503.14476, Eq. 8); ``zero_loss_table`` reproduces each cause of W11's zero loss and
asks the learner's ``diagnose_zero_loss``; ``dapo_variants`` turns one DAPO knob per run; ``gspo_spread``
compares per-token ratios with GSPO's sequence ratio (arXiv 2507.18071). ``python -m rlprep.demos.grpo_arithmetic
--record`` runs the main run and the variants with the references and writes ``records/lab05_grpo.json``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

from rlprep.demos.lab_runs import profile_note, record_cli, save_record
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.grpo import GRPOConfig, train_grpo

RECORD = "lab05_grpo"
VARIANT_STEPS = {"smoke": 2, "cpu": 25, "gpu": 160}  # multiples of the main run's eval_every
BASELINE = "baseline (symmetric, token, no KL)"
SYMMETRIC_CLIP = "symmetric clip (mu = 2)"
CLIP_HIGHER = "clip-higher (eps_high = 0.28, mu = 2)"
DYNAMIC_SAMPLING = "dynamic sampling"
SEQUENCE_AGGREGATION = "sequence aggregation (GRPO)"
KL_IN_LOSS = "KL in the loss (beta = 0.04)"
VARIANTS = {  # the clip only acts off-policy: those two runs take mu = 2 updates per batch
    SYMMETRIC_CLIP: dict(num_iterations=2),
    CLIP_HIGHER: dict(num_iterations=2, eps_high=0.28),
    DYNAMIC_SAMPLING: dict(dynamic_sampling=True),
    SEQUENCE_AGGREGATION: dict(aggregation="sequence"),
    KL_IN_LOSS: dict(beta=0.04),
}
EXPECTED = {"on_policy": {"expected"}, "too_easy": {"zero_advantage"}, "too_hard": {"zero_advantage"},
            "all_truncated": {"no_valid_tokens", "zero_advantage"}, "mask_bug": {"no_valid_tokens"}}
"""W11: the diagnosis each reproduced cause should get (``all_truncated`` may leave a few valid tokens)."""


def lab_setup(profile: str | Profile | None = None):
    """(profile, the lab's GRPOConfig, warm-start policy, tokenizer, task); smoke is cut to seconds per run."""
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.warm_start import load_warm_start, warm_start_kwargs

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = GRPOConfig.for_profile(p)
    policy, tokenizer = load_warm_start(p, **warm_start_kwargs(config))
    if p.name == "smoke":
        config = replace(config, steps=4, prompts_per_step=4, eval_every=2, eval_size=50)
    return p, config, policy, tokenizer, get_task("arithmetic")


def accuracy_se(p: float, n: int) -> float:
    """Binomial standard error of an accuracy ``p`` measured on ``n`` prompts."""
    return math.sqrt(p * (1 - p) / n)


def main_run(profile=None, progress: bool | None = None, show: bool = True, **functions):
    """GRPO with ``functions``; prints held-out accuracy start -> end ± SE and the share of zero-std groups; plots."""
    import matplotlib.pyplot as plt

    p, config, policy, tokenizer, task = lab_setup(profile)
    print(profile_note(f"GRPO on arithmetic, {config.steps} steps x {config.prompts_per_step} prompts x "
                       f"{config.group_size} samples (progress line 'grpo')", p))
    run = train_grpo(config, policy=copy.deepcopy(policy), tokenizer=tokenizer, task=task, live=progress, **functions)
    m, n = run.meta, config.eval_size
    print(f"held-out accuracy {m['accuracy_start']:.3f} ± {accuracy_se(m['accuracy_start'], n):.3f} -> "
          f"{m['accuracy_end']:.3f} ± {accuracy_se(m['accuracy_end'], n):.3f} "
          f"({100 * (m['accuracy_end'] - m['accuracy_start']):+.1f} points) in {m['wall_s']:.0f} s"
          + (f" (stopped early; saved in {m.get('run_dir')})" if run.interrupted else ""))
    _, zero_std = run.series("stats/frac_zero_std_groups")
    print(f"groups whose rewards were all equal (no gradient): {sum(zero_std) / max(1, len(zero_std)):.0%}")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax.plot(*run.series("eval/accuracy"), "o-")
    ax.set(xlabel="GRPO step", ylabel="held-out accuracy (greedy, fraction correct)",
           title=f"GRPO on arithmetic ({p.name} profile)")
    ax2.plot(*run.series("reward/mean"))
    ax2.set(xlabel="GRPO step", ylabel="mean reward of the samples (fraction correct)",
            title="training reward (temperature 1)")
    fig.tight_layout()
    if show:
        plt.show()
    return run


def zero_loss_table(diagnose_zero_loss, profile=None, **functions) -> dict:
    """W11: one real GRPO step per cause (weights restored), the learner's diagnosis of its logged stats.

    Returns ``{cause: (stats, diagnosis)}`` and prints one row per cause, marked ``ok`` or with the expected verdict.
    """
    from rlprep.demos.zero_loss import ZERO_LOSS_CAUSES, reproduce_zero_loss

    p, config, policy, tokenizer, task = lab_setup(profile)
    print(f"{'cause':<14}{'loss':>9}{'grad_norm':>11}{'zero_std':>10}{'valid':>8}{'clip':>7}  diagnosis")
    table = {}
    for cause in ZERO_LOSS_CAUSES:
        try:
            stats = reproduce_zero_loss(cause, policy, tokenizer, task, config=config, **functions)
        except ValueError as err:  # e.g. no all-correct group in the pool for a weak warm start
            print(f"{cause:<14}could not be reproduced here: {err}")
            continue
        verdict = diagnose_zero_loss(stats)
        table[cause] = (stats, verdict)
        mark = "ok" if verdict in EXPECTED[cause] else f"<- expected {' or '.join(sorted(EXPECTED[cause]))}"
        print(f"{cause:<14}{stats['loss']:>9.2g}{stats['grad_norm']:>11.3g}{stats['frac_zero_std_groups']:>10.2f}"
              f"{stats['frac_valid_tokens']:>8.2f}{stats['clip_frac']:>7.2f}  {verdict} {mark}")
    return table


def _compare(ax, runs, key, names, ylabel, steps, title):
    for name in names:
        at, values = runs[name].series(key)
        keep = [i for i, s in enumerate(at) if s <= steps]
        ax.plot([at[i] for i in keep], [values[i] for i in keep], label=name)
    ax.set(xlabel="GRPO step", ylabel=ylabel, title=title)
    ax.legend(fontsize=8)


def dapo_variants(baseline_run, profile=None, progress: bool | None = None, show: bool = True, **functions) -> dict:
    """One fresh run per DAPO knob (``VARIANTS``) against the first steps of ``baseline_run`` (what :func:`main_run`
    returned); plots and prints them."""
    import matplotlib.pyplot as plt

    p, config, policy, tokenizer, task = lab_setup(profile)
    steps = VARIANT_STEPS.get(p.name, 2 * config.eval_every)
    print(profile_note(f"{len(VARIANTS)} DAPO variants, {steps} steps each", p))
    short = replace(config, steps=steps, eval_every=max(1, steps // 2))
    runs = {BASELINE: baseline_run}
    for name, knobs in VARIANTS.items():
        print(f"run {name}:")
        runs[name] = train_grpo(replace(short, **knobs), policy=copy.deepcopy(policy), tokenizer=tokenizer, task=task,
                                live=progress, **functions)
        if runs[name].interrupted:
            break
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    panels = [(axes[0, 0], "stats/entropy", [SYMMETRIC_CLIP, CLIP_HIGHER], "policy entropy (nats / token)",
               "W24/W25: clip-higher against entropy collapse"),
              (axes[0, 1], "stats/frac_zero_std_groups", [BASELINE, DYNAMIC_SAMPLING],
               "groups with equal rewards (fraction, before filtering)", "dynamic sampling trains only on informative groups"),
              (axes[1, 0], "stats/completion_len", [BASELINE, SEQUENCE_AGGREGATION], "completion length (tokens)",
               "token vs sequence aggregation: response length"),
              (axes[1, 1], "stats/kl_k3_token", [BASELINE, KL_IN_LOSS], "k3 KL to the SFT policy (nats / token)",
               "W08: KL penalty vs none")]
    for ax, key, which, ylabel, title in panels:
        _compare(ax, runs, key, [n for n in which if n in runs], ylabel, steps, title)
    fig.tight_layout()
    if show:
        plt.show()
    for name, run in runs.items():  # every run at the same point: its last evaluation by `steps`
        at, accuracy = run.series("eval/accuracy")
        last = max(i for i, s in enumerate(at) if s <= steps)
        print(f"{name:<38} accuracy {accuracy[0]:.3f} -> {accuracy[last]:.3f} at step {at[last]}")
    return runs


def gspo_spread(profile=None, show: bool = True, **functions):
    """Per-token log-ratios against GSPO's per-sequence log-ratios after a few updates on one batch (a histogram)."""
    import matplotlib.pyplot as plt

    from rlprep.demos.grpo import ratio_spread

    p, config, policy, tokenizer, task = lab_setup(profile)
    token_ratios, seq_ratios = ratio_spread(copy.deepcopy(policy), tokenizer, task, config, **functions)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.hist(token_ratios.log().numpy(), bins=50, alpha=0.6, density=True, label="per token: log ρ_t")
    ax.hist(seq_ratios.log().numpy(), bins=50, alpha=0.6, density=True, label="per sequence: log s_i (GSPO)")
    ax.set(xlabel="log importance ratio (nats)", ylabel="density (1 / nats)",
           title="Token ratios vs GSPO's sequence ratio after a few updates on one batch")
    ax.legend()
    if show:
        plt.show()
    print(f"std of log ratio: per token {token_ratios.log().std():.4f}, per sequence {seq_ratios.log().std():.4f}")
    return token_ratios, seq_ratios


def lab_runs(profile=None, progress: bool | None = None, record: bool = False, show: bool = True, **functions):
    """The main run and the DAPO variants; ``record=True`` writes ``records/lab05_grpo.json``."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    run = main_run(p, progress=progress, show=show, **functions)
    runs = dapo_variants(run, p, progress=progress, show=show, **functions)
    if record:
        n = run.meta["config"]["eval_size"]
        values = {"accuracy_start": run.meta["accuracy_start"], "accuracy_end": run.meta["accuracy_end"],
                  "accuracy_start_se": accuracy_se(run.meta["accuracy_start"], n),
                  "accuracy_end_se": accuracy_se(run.meta["accuracy_end"], n), "eval_size": n,
                  "steps": run.meta["config"]["steps"], "wall_s": round(run.meta["wall_s"], 1)}
        _, zero_std = run.series("stats/frac_zero_std_groups")
        values["frac_zero_std_groups"] = sum(zero_std) / max(1, len(zero_std))
        save_record(RECORD, values, "rlprep.demos.grpo_arithmetic", p)
    return run, runs


def main(argv=None) -> int:
    """``python -m rlprep.demos.grpo_arithmetic --record``: lab05's runs with the reference functions, recorded."""
    return record_cli("rlprep.demos.grpo_arithmetic", RECORD, lab_runs, argv)


if __name__ == "__main__":
    raise SystemExit(main())

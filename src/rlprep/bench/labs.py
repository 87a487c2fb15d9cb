"""The ``labs`` section (``--gpu`` only): every lab's training in the gpu profile, each stopped at its share of the
labs' wall-clock budget (reported as stopped), with its headline figures, its curve and one figure of all curves."""

from __future__ import annotations

import importlib
import io
import time
from pathlib import Path

from rlprep.bench.schedule import deadline_callback

LAB_RUNS = {
    # lab: (module, config class, train function, headline meta keys, curve metric, dry-run overrides)
    "lab02_reward_model": ("rlprep.trainers.reward_model", "RewardModelConfig", "train_reward_model",
                           ("accuracy_start", "accuracy", "pearson_gold"), "eval/accuracy",
                           dict(steps=2, batch_size=8, n_train_pairs=32, n_eval_pairs=16, eval_every=2)),
    "lab03_ppo_rlhf": ("rlprep.trainers.ppo", "PPOConfig", "train_ppo",
                       ("gold_start", "gold_end", "gold_gain_se", "kl_end"), "reward/rm",
                       dict(steps=1, batch_size=4, minibatch_size=4, eval_prompts=4)),
    "lab04_dpo": ("rlprep.trainers.dpo", "DPOConfig", "train_dpo", ("gold_start", "gold", "kl"), "loss/dpo",
                  dict(steps=2, batch_size=4, n_train_pairs=8, eval_every=2, eval_prompts=4)),
    "lab05_grpo": ("rlprep.trainers.grpo", "GRPOConfig", "train_grpo", ("accuracy_start", "accuracy_end"),
                   "reward/mean", dict(steps=2, prompts_per_step=2, group_size=4, eval_every=2, eval_size=8)),
}
"""The labs whose training runs through ``live.run_steps`` (so a wall-clock budget can stop them cleanly)."""

LAB_SHARES = {"lab02_reward_model": 0.12, "lab03_ppo_rlhf": 0.26, "lab04_dpo": 0.14, "lab05_grpo": 0.26,
              "lab06_importance_sampling": 0.12, "lab07_infonce": 0.10}
"""Each lab's share of the labs' wall-clock budget (lab01 trains PPO like lab03; lab08 is the image section)."""


def bench_labs(device, profile=None, budget_s: float = 270.0, dry_run: bool = False) -> dict:
    """Every lab's training in the gpu profile, each stopped at its share of ``budget_s`` (reported as such),
    with its headline figures and its curve. ``dry_run`` runs the same code on the CPU with tiny budgets (the
    plumbing test of ``make gpu-check``)."""
    if device.type != "cuda" and not dry_run:
        return {"skipped": "no CUDA device: the gpu-profile lab runs need a GPU"}
    from rlprep.profiles import get_profile

    profile = profile or get_profile("gpu")
    t0 = time.perf_counter()
    out = {"warm_starts": _build_warm_starts(profile)}
    start = time.perf_counter()
    budget_s = max(budget_s - (start - t0), 0.4 * budget_s)  # the labs share what the warm starts left
    out["labs_budget_s"] = budget_s
    spent_share = 0.0
    for lab, share in LAB_SHARES.items():
        spent_share += share
        deadline = start + budget_s * spent_share  # a lab that finishes early leaves its time to the next
        try:
            if lab in LAB_RUNS:
                out[lab] = _run_lab(lab, profile, deadline, dry_run)
            elif lab == "lab06_importance_sampling":
                out[lab] = _run_stale(profile, dry_run)
            else:
                out[lab] = _run_infonce(profile, dry_run)
        except Exception as exc:  # one lab failing must not hide the others' figures
            out[lab] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def _build_warm_starts(profile) -> dict:
    """The warm starts every lab loads (built once per machine, then cached), timed apart from the labs."""
    t0 = time.perf_counter()
    try:
        from rlprep.tinyworld import load_policy
        from rlprep.trainers.reward_model import load_reward_model

        for task in ("arithmetic", "reviews"):
            load_policy(task, profile)
        load_reward_model(profile)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"wall_s": time.perf_counter() - t0,
            "what": "arithmetic and reviews SFT policies and the reference reward model (built on first use, cached)"}


def _run_lab(lab, profile, deadline: float, dry_run: bool) -> dict:
    """A ``LAB_RUNS`` lab through its trainer's ``for_profile`` config, stopped (weights kept) at ``deadline``."""
    module, cfg_name, fn_name, keys, curve_key, dry = LAB_RUNS[lab]
    mod = importlib.import_module(module)
    cfg = getattr(mod, cfg_name).for_profile(profile, **(dry if dry_run else {}))
    t0 = time.perf_counter()
    result = getattr(mod, fn_name)(cfg, live=False, callbacks=[deadline_callback(deadline)])
    hist = result[-1] if isinstance(result, tuple) else result  # train_reward_model -> (model, history)
    row = {"wall_s": time.perf_counter() - t0, "steps": len(hist) - 1, "planned_steps": cfg.steps,
           "stopped_at_budget": bool(hist.meta.get("stopped_at_budget"))}
    row.update({k: hist.meta.get(k) for k in keys})
    steps, values = hist.series(curve_key)
    row["curve"] = {"key": curve_key, "steps": steps, "values": values}
    return row


def _run_stale(profile, dry_run: bool) -> dict:
    """Lab 6: GRPO on stale rollouts (k = 0, k = 6 without and with truncated IS), its own step budget."""
    from rlprep.demos.stale_rollouts import StaleGRPOConfig, staleness_sweep

    base = StaleGRPOConfig.for_profile(profile)
    overrides = (dict(steps=2, prompts_per_step=2, group_size=4, eval_every=2, eval_size=8) if dry_run
                 else dict(steps=min(base.steps, 60)))  # gpu: 3 runs of 60 steps keep it within its share
    t0 = time.perf_counter()
    runs = staleness_sweep(profile, **overrides)
    row = {"wall_s": time.perf_counter() - t0, "steps": overrides["steps"], "planned_steps": overrides["steps"],
           "stopped_at_budget": False}
    for (k, correction), h in runs.items():
        row[f"accuracy_end k={k} {correction}"] = h.last("eval/accuracy")
    steps, values = runs[(0, "none")].series("eval/accuracy") if (0, "none") in runs else ([], [])
    row["curve"] = {"key": "eval/accuracy (k=0)", "steps": steps, "values": values}
    return row


def _run_infonce(profile, dry_run: bool) -> dict:
    """Lab 7: the dual encoder with InfoNCE at tau = 0.07 (trains on the CPU in every profile)."""
    from rlprep.multimodal import dual_encoder as de

    base = de.DualEncoderConfig.for_profile(profile)
    overrides = (dict(steps=3, n_train=32, n_test=16, batch_size=8) if dry_run else dict(steps=min(base.steps, 1000)))
    cfg = de.DualEncoderConfig.for_profile(profile, temperature=0.07, **overrides)
    t0 = time.perf_counter()
    _, hist = de.train_dual_encoder(cfg)
    return {"wall_s": time.perf_counter() - t0, "steps": cfg.steps, "planned_steps": cfg.steps,
            "stopped_at_budget": False, "recall@1": hist["recall@1"][-1],
            "curve": {"key": "loss", "steps": list(range(1, len(hist["loss"]) + 1)), "values": list(hist["loss"])}}


def plot_labs(labs: dict, path: Path) -> Path | None:
    """One PNG with each lab's curve (the figure ``make gpu-check`` leaves next to its report)."""
    rows = [(lab, x["curve"]) for lab, x in labs.items() if isinstance(x, dict) and x.get("curve", {}).get("values")]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ncols = 3
    nrows = (len(rows) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.4 * nrows), squeeze=False)
    for ax, (lab, curve) in zip(axes.flat, rows):
        ax.plot(curve["steps"], curve["values"], marker=".")
        ax.set_title(lab)
        ax.set_xlabel("step")
        ax.set_ylabel(curve["key"])
    for ax in list(axes.flat)[len(rows):]:
        ax.axis("off")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    from rlprep.live import atomic_write_bytes

    return atomic_write_bytes(path, buffer.getvalue())

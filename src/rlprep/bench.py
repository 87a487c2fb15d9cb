"""``rlprep bench``: our loops against the tools a practitioner would use instead, side by side in one run.

Sections (each can be run alone with ``--only``):

* ``steps``   - steps/s and completion tokens/s of our GRPO and DPO steps vs TRL's GRPOTrainer/DPOTrainer on
  the same model, batch and data (medians over ``--repeats`` timed steps after warm-up steps);
* ``target``  - wall time until GRPO lifts held-out accuracy to a target, ours vs TRL's, bounded by
  ``--target-seconds`` (evaluation time is excluded from both clocks; "not reached in N s" is reported as such);
* ``rollout`` - generation tokens/s of :func:`rlprep.rollout.generate` vs plain ``model.generate``;
* ``grading`` - seconds of ``rlprep grade`` per ``solutions/*/*.ipynb``;
* ``image``   - the image-diff benchmark of :mod:`rlprep.bench_image_diff`;
* ``tests``   - the ``make test`` wall time the Makefile leaves in ``build/make-test-seconds``;
* ``labs``    - (``--gpu`` only) every lab's trainer in the gpu profile, with its headline figure.

Every ratio is computed from figures measured in the same run. Sections whose tools are missing (no trl, no
nbgrader, no CUDA) are skipped with a note in the report, never faked. Writes ``docs/benchmarks.json`` and
``docs/benchmarks.md`` atomically (``--out`` changes the folder).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import glob
import importlib.util
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

SECTIONS = ("steps", "target", "rollout", "grading", "image", "tests")
GPU_SECTIONS = ("labs",) + SECTIONS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", action="store_true",
                        help="the GPU half: gpu profile on CUDA (bf16), plus every lab's training; without CUDA "
                             "the GPU-only parts are skipped with a note")
    parser.add_argument("--quick", action="store_true", help="smallest sizes (the smoke profile, few repeats)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated sections to run, from {','.join(GPU_SECTIONS)} (default: all)")
    parser.add_argument("--profile", default=None, help="model profile for the CPU half (default: smoke)")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per measurement (median)")
    parser.add_argument("--target-seconds", type=float, default=None, help="wall-time bound per time-to-target run")
    parser.add_argument("--target-points", type=float, default=None,
                        help="accuracy target = start accuracy + this many points (default 10, quick 5)")
    parser.add_argument("--out", default=None,
                        help="output folder (default: docs/ of the repository; with --gpu, $OUT when it is set)")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="--gpu: wall-clock budget of the whole run (default 450, under the 8-minute goal); "
                             "labs stop at their share, later sections are skipped with a note once it is spent")
    parser.add_argument("--notes-only", action="store_true",
                        help="measure nothing: rewrite benchmarks.md from the figures in benchmarks.json with the "
                             "current benchmarks-notes.md and benchmarks-gpu.md (after editing the notes)")
    parser.add_argument("--dry-run", action="store_true",
                        help="--gpu plumbing check without a GPU: the same code path on the CPU, smoke profile, tiny "
                             "budgets (also RLPREP_GPU_DRY_RUN=1); the figures are not GPU figures")


# ----------------------------------------------------------------------------------------------- helpers
def median(xs):
    return float(statistics.median(xs)) if xs else float("nan")


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def atomic_write(path: Path, text: str) -> None:
    """Text through :func:`rlprep.live.atomic_write_bytes` (temp file, then ``os.replace``)."""
    from rlprep.live import atomic_write_bytes

    atomic_write_bytes(path, text.encode())


def machine_info(device) -> dict:
    import torch

    info = {"date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version(),
            "torch": torch.__version__, "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "device": str(device)}
    with contextlib.suppress(OSError):
        info["loadavg_1m_at_start"] = os.getloadavg()[0]
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    for mod in ("transformers", "trl", "accelerate"):
        if have(mod):
            info[mod] = __import__(mod).__version__
    return info


@contextlib.contextmanager
def quiet():
    """Silence chatty libraries (TRL and transformers print progress bars and warnings)."""
    import warnings

    import transformers

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    with contextlib.suppress(ImportError):
        import datasets

        datasets.disable_progress_bars()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            transformers.logging.set_verbosity(level)


def _trl_common(tmp: str, device, lr: float, max_steps: int, batch: int) -> dict:
    """TRL arguments set explicitly (its defaults are bf16 on CPU, gradient checkpointing, lr 1e-6)."""
    cuda = device.type == "cuda"
    return dict(output_dir=tmp, per_device_train_batch_size=batch, learning_rate=lr, lr_scheduler_type="constant",
                warmup_steps=0, max_steps=max_steps, bf16=cuda, fp16=False, gradient_checkpointing=False,
                use_cpu=not cuda, report_to="none", save_strategy="no", logging_steps=1, disable_tqdm=True,
                max_grad_norm=1.0, seed=0, dataloader_num_workers=0, weight_decay=0.0)


def _step_timer():
    """A TRL TrainerCallback recording each optimizer step's wall time and the logged rows."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times, self.logs, self._t = [], [], None

        def on_step_begin(self, args, state, control, **kw):
            self._t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.perf_counter() - self._t)

        def on_log(self, args, state, control, logs=None, **kw):
            self.logs.append(dict(logs or {}))

    return StepTimer()


# ----------------------------------------------------------------------------------------------- steps
def bench_grpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our GRPOTrainer.step vs TRL's GRPOTrainer: 8 prompts x 8 completions, 6 new tokens, beta 0, mu 1."""
    import torch

    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.warm_start import load_warm_start
    from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer

    N, G, C, lr = 8, 8, 6, 1e-4
    policy, tok = load_warm_start(profile)
    task = get_task("arithmetic")
    out = {"batch": f"{N} prompts x {G} completions, max {C} new tokens, beta 0, mu 1",
           "model_params": sum(p.numel() for p in policy.parameters())}
    cfg = GRPOConfig(profile=profile.name, steps=warmup + repeats, prompts_per_step=N, group_size=G,
                     max_new_tokens=C, lr=lr, beta=0.0, log_kl=False, eval_size=1, device=str(device))
    trainer = GRPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    times, lens = [], []
    for i in range(warmup + repeats):
        t0 = time.perf_counter()
        m = trainer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
            lens.append(m["stats/completion_len"])
    out["ours"] = {"step_s": median(times), "steps_per_s": 1 / median(times),
                   "completion_tokens_per_s": N * G * median(lens) / median(times), "n": len(times)}
    if not have("trl"):
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    prompts = [ex.prompt for ex in task.sample(N * (warmup + repeats + 2), split="train", seed=1)]

    def reward(prompts, completions, **kw):
        return [task.reward(p, c) for p, c in zip(prompts, completions)]

    with tempfile.TemporaryDirectory() as tmp, quiet():
        args = TRLConfig(**_trl_common(tmp, device, lr, warmup + repeats, N * G), num_generations=G,
                         max_completion_length=C, temperature=1.0, beta=0.0, loss_type="dapo", scale_rewards="group",
                         num_iterations=1, epsilon=0.2, use_bias_correction_kl=False, log_completions=False,
                         top_k=0, top_p=1.0)
        timer = _step_timer()
        model = copy.deepcopy(policy).to(device)
        trl = TRLTrainer(model=model, reward_funcs=reward, args=args, processing_class=tok,
                         train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[timer])
        trl.train()
    t = timer.times[warmup:]
    lens = [row["completions/mean_length"] for row in timer.logs if "completions/mean_length" in row][warmup:]
    out["trl"] = {"step_s": median(t), "steps_per_s": 1 / median(t),
                  "completion_tokens_per_s": N * G * median(lens) / median(t) if lens else float("nan"), "n": len(t)}
    out["ours_over_trl_steps_per_s"] = out["ours"]["steps_per_s"] / out["trl"]["steps_per_s"]
    return out


def bench_dpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our DPOTrainer.step vs TRL's DPOTrainer: 32 reviews preference pairs per step, beta 0.1."""
    import torch

    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.dpo import DPOConfig, DPOTrainer

    B, lr, steps = 32, 1e-4, warmup + repeats
    policy, tok = load_policy("reviews", profile)
    task = get_task("reviews")
    out = {"batch": f"{B} preference pairs per step, beta 0.1", "model_params": sum(p.numel() for p in policy.parameters())}
    cfg = DPOConfig(profile=profile.name, steps=steps, batch_size=B, lr=lr, n_train_pairs=B * steps, eval_prompts=2,
                    device=str(device))
    trainer = DPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    pairs = trainer.pairs
    n_tokens = sum(len(tok(p.prompt + p.chosen)["input_ids"]) + len(tok(p.prompt + p.rejected)["input_ids"]) + 2
                   for p in pairs) / len(pairs)  # tokens per pair (both rows, with eos)
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        trainer.step(i)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    out["ours"] = {"step_s": median(times), "steps_per_s": 1 / median(times),
                   "tokens_per_s": B * n_tokens / median(times), "n": len(times)}
    if not have("trl"):
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from trl import DPOConfig as TRLConfig
    from trl import DPOTrainer as TRLTrainer

    data = Dataset.from_dict({"prompt": [p.prompt for p in pairs], "chosen": [p.chosen for p in pairs],
                              "rejected": [p.rejected for p in pairs]})
    with tempfile.TemporaryDirectory() as tmp, quiet():
        args = TRLConfig(**_trl_common(tmp, device, lr, steps, B), beta=0.1, loss_type=["sigmoid"],
                         max_length=policy.config.n_positions)
        timer = _step_timer()
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), args=args, processing_class=tok, train_dataset=data,
                         callbacks=[timer])
        trl.train()
    t = timer.times[warmup:]
    out["trl"] = {"step_s": median(t), "steps_per_s": 1 / median(t), "tokens_per_s": B * n_tokens / median(t),
                  "n": len(t), "note": "TRL defaults: reference log-probs recomputed each step"}
    out["ours_over_trl_steps_per_s"] = out["ours"]["steps_per_s"] / out["trl"]["steps_per_s"]
    return out


# ----------------------------------------------------------------------------------------------- target
TARGET_SFT_STEPS = {"smoke": 250}
"""Warm start of the time-to-target run per profile: a shorter SFT leaves headroom (the full smoke SFT already
scores ~97% held-out; its 250-step SFT scored 0.68, measured 2026-11-30). Profiles not listed use the full SFT."""


def bench_time_to_target(profile, device, seconds: float, points: float, eval_every: int = 5,
                         sft_steps: int | None = None) -> dict:
    """GRPO from the arithmetic SFT start until held-out greedy accuracy >= start + ``points``/100, ours vs TRL.

    Same model, lr 1e-4, 8 prompts x 8 completions, beta 0, token aggregation; training wall time only
    (evaluation excluded), bounded by ``seconds``.
    """
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy
    from rlprep.tinyworld.warm_start import load_warm_start
    from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer

    N, G, C, lr, n_eval = 8, 8, 6, 1e-4, 200
    sft_steps = sft_steps if sft_steps is not None else TARGET_SFT_STEPS.get(profile.name)
    policy, tok = load_warm_start(profile, sft_steps)
    task = get_task("arithmetic")
    examples = task.sample(n_eval, split="test", seed=10_000)
    start = evaluate_accuracy(policy, tok, task, examples, C)
    target = min(1.0, start + points / 100)
    out = {"start_accuracy": start, "target_accuracy": target, "bound_s": seconds, "eval_prompts": n_eval,
           "setting": f"{N}x{G}, lr {lr}, beta 0, eval every {eval_every} steps",
           "sft_steps": sft_steps or profile.sft_steps}

    cfg = GRPOConfig(profile=profile.name, steps=10**6, prompts_per_step=N, group_size=G, max_new_tokens=C, lr=lr,
                     beta=0.0, log_kl=False, eval_size=1, device=str(device))
    trainer = GRPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    train_s, steps, acc, curve = 0.0, 0, start, []
    while train_s < seconds and acc < target:
        t0 = time.perf_counter()
        for _ in range(eval_every):
            trainer.step()
        train_s += time.perf_counter() - t0
        steps += eval_every
        acc = evaluate_accuracy(trainer.policy, tok, task, examples, C)
        curve.append([steps, round(train_s, 2), acc])
    out["ours"] = {"reached": acc >= target, "train_s": train_s, "steps": steps, "final_accuracy": acc,
                   "curve": curve}
    if not have("trl"):
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    prompts = [ex.prompt for ex in task.sample(N * 4000, split="train", seed=1)]

    def reward(prompts, completions, **kw):
        return [task.reward(p, c) for p, c in zip(prompts, completions)]

    class StopAtTarget(TrainerCallback):
        def __init__(self):
            self.train_s, self.acc, self.curve, self._t = 0.0, start, [], time.perf_counter()

        def on_step_end(self, args, state, control, model=None, **kw):
            if state.global_step % eval_every:
                return
            self.train_s += time.perf_counter() - self._t
            self.acc = evaluate_accuracy(model, tok, task, examples, C)
            self.curve.append([state.global_step, round(self.train_s, 2), self.acc])
            if self.acc >= target or self.train_s >= seconds:
                control.should_training_stop = True
            self._t = time.perf_counter()

    stop = StopAtTarget()
    with tempfile.TemporaryDirectory() as tmp, quiet():
        common = {**_trl_common(tmp, device, lr, 4000, N * G), "logging_steps": 50}
        args = TRLConfig(**common, num_generations=G, max_completion_length=C, temperature=1.0, beta=0.0,
                         loss_type="dapo", scale_rewards="group", num_iterations=1, use_bias_correction_kl=False,
                         log_completions=False, top_k=0, top_p=1.0)
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), reward_funcs=reward, args=args, processing_class=tok,
                         train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[stop])
        stop._t = time.perf_counter()
        trl.train()
    out["trl"] = {"reached": stop.acc >= target, "train_s": stop.train_s,
                  "steps": stop.curve[-1][0] if stop.curve else 0, "final_accuracy": stop.acc, "curve": stop.curve}
    return out


# ----------------------------------------------------------------------------------------------- rollout
def bench_rollout(profile, device, repeats: int, batch: int = 64, new_tokens: int = 32) -> dict:
    """Sampled completion tokens/s: :func:`rlprep.rollout.generate` vs ``model.generate`` (KV cache, same batch)."""
    import torch

    from rlprep.rollout import generate
    from rlprep.tinyworld import get_task, load_policy

    policy, tok = load_policy("reviews", profile)
    policy = policy.to(device).eval()
    if device.type == "cuda":
        policy = policy.to(torch.bfloat16)
    task = get_task("reviews")
    prompts = [ex.prompt if hasattr(ex, "prompt") else ex for ex in task.sample(batch, split="test", seed=3)]
    eos = tok.eos_token_id
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos

    def ours(seed):
        r = generate(policy, tok, prompts, max_new_tokens=new_tokens, temperature=1.0, seed=seed)
        return int(r.completion_mask.sum())

    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}

    @torch.no_grad()
    def hf(seed):
        torch.manual_seed(seed)
        seq = policy.generate(**enc, max_new_tokens=new_tokens, do_sample=True, temperature=1.0, top_k=0,
                              top_p=1.0, pad_token_id=pad, eos_token_id=eos)
        comp = seq[:, enc["input_ids"].shape[1]:]  # (B, C)
        is_eos = (comp == eos).long()
        before = (is_eos.cumsum(-1) - is_eos) == 0  # up to and including the first eos
        return int(before.sum())

    out = {"batch": batch, "max_new_tokens": new_tokens, "task": "reviews"}
    for name, fn in (("ours", ours), ("hf_generate", hf)):
        fn(0)  # warm-up
    rows = {"ours": [], "hf_generate": []}
    for i in range(repeats):  # interleaved, so load spikes hit both
        for name, fn in (("ours", ours), ("hf_generate", hf)):
            t0 = time.perf_counter()
            n = fn(i + 1)
            if device.type == "cuda":
                torch.cuda.synchronize()
            rows[name].append((n / (time.perf_counter() - t0), n))
    for name, vals in rows.items():
        out[name] = {"tokens_per_s": median([v[0] for v in vals]), "tokens_per_call": median([v[1] for v in vals]),
                     "n": len(vals)}
    out["ours_over_hf"] = out["ours"]["tokens_per_s"] / out["hf_generate"]["tokens_per_s"]
    return out


# ----------------------------------------------------------------------------------------------- grading
def bench_grading(root: Path) -> dict:
    if not have("nbgrader"):
        return {"skipped": "nbgrader is not installed"}
    out = {}
    for nb in sorted(glob.glob(str(root / "solutions" / "*" / "*.ipynb"))):
        lab = Path(nb).stem
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "rlprep", "grade", nb, "--json"], capture_output=True,
                              text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root / "src")})
        seconds = time.perf_counter() - t0
        row = {"seconds": seconds, "exit_code": proc.returncode}
        with contextlib.suppress(ValueError, IndexError):
            row["result"] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
            if not row["result"]:
                row["result"] = json.loads(proc.stdout)
        out[lab] = row
    return out or {"skipped": "no solutions/*/*.ipynb found"}


# ----------------------------------------------------------------------------------------------- labs (gpu)
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


def _budget_callback(deadline: float):
    """A ``run_steps`` callback that stops the run (as an interrupt: weights kept) once ``deadline`` has passed."""

    def stop_at_deadline(step, metrics, history):
        if time.perf_counter() > deadline:
            history.meta["stopped_at_budget"] = True
            raise KeyboardInterrupt

    return stop_at_deadline


def _run_lab(lab, profile, deadline: float, dry_run: bool) -> dict:
    module, cfg_name, fn_name, keys, curve_key, dry = LAB_RUNS[lab]
    mod = importlib.import_module(module)
    cfg = getattr(mod, cfg_name).for_profile(profile, **(dry if dry_run else {}))
    t0 = time.perf_counter()
    result = getattr(mod, fn_name)(cfg, live=False, callbacks=[_budget_callback(deadline)])
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


def bench_labs(device, profile=None, budget_s: float = 270.0, dry_run: bool = False) -> dict:
    """Every lab's training in the gpu profile, each stopped at its share of ``budget_s`` (reported as such),
    with its headline figures and its curve. ``dry_run`` runs the same code on the CPU with tiny budgets (the
    plumbing test of ``make gpu-check``)."""
    if device.type != "cuda" and not dry_run:
        return {"skipped": "no CUDA device: the gpu-profile lab runs need a GPU"}
    from rlprep.profiles import get_profile

    profile = profile or get_profile("gpu")
    out = {}
    t0 = time.perf_counter()
    try:  # the warm starts every lab loads (built once per machine, then cached): timed apart from the labs
        from rlprep.tinyworld import load_policy
        from rlprep.trainers.reward_model import load_reward_model

        for task in ("arithmetic", "reviews"):
            load_policy(task, profile)
        load_reward_model(profile)
        out["warm_starts"] = {"wall_s": time.perf_counter() - t0,
                              "what": "arithmetic and reviews SFT policies and the reference reward model "
                                      "(built on first use, cached)"}
    except Exception as exc:
        out["warm_starts"] = {"error": f"{type(exc).__name__}: {exc}"}
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


# ----------------------------------------------------------------------------------------------- report
def fmt(x, nd=2):
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def render_markdown(report: dict) -> str:
    m = report["machine"]
    lines = ["# Benchmarks", "",
             f"Generated by `{report['command']}` on {m['date_utc']}: {m['cpu_count']} CPU cores ({m['cpu']}), "
             f"device `{m['device']}`{', GPU ' + m['gpu'] if 'gpu' in m else ''}, torch {m['torch']}, "
             f"transformers {m.get('transformers', '-')}, trl {m.get('trl', 'not installed')}; "
             f"1-minute load average at the start {fmt(m.get('loadavg_1m_at_start', float('nan')), 1)}. "
             f"Profile `{report['profile']}`, total wall time {fmt(report['wall_s'], 0)} s.", "",
             "Figures are medians over repeated runs; every ratio comes from figures measured in the same run. "
             "A machine shared with other jobs inflates every time (a load average above the core count means "
             "it was); the ratios are the figures to compare.", ""]
    load = m.get("loadavg_1m_at_start")
    if isinstance(load, (int, float)) and m.get("cpu_count") and load > m["cpu_count"]:
        lines += [f"**This run shared the machine with other jobs** (load {load:.1f} on {m['cpu_count']} cores): "
                  "absolute figures are inflated.", ""]
    if report.get("notes"):
        lines += ["Notes:", ""] + [f"- {n}" for n in report["notes"]] + [""]
    s = report["sections"]
    if "steps" in s:
        lines += ["## Training steps (ours vs TRL)", "",
                  "| loop | batch | ours steps/s | TRL steps/s | ours tokens/s | TRL tokens/s | ours / TRL |",
                  "|---|---|---|---|---|---|---|"]
        for name, key in (("grpo", "completion_tokens_per_s"), ("dpo", "tokens_per_s")):
            r = s["steps"].get(name, {})
            if "ours" not in r:
                lines.append(f"| {name} | - | {r.get('skipped', r.get('error', '-'))} | | | | |")
                continue
            t = r["trl"]
            if "skipped" in t or "error" in t:
                lines.append(f"| {name} | {r['batch']} | {fmt(r['ours']['steps_per_s'])} | "
                             f"{t.get('skipped', t.get('error'))} | {fmt(r['ours'][key], 0)} | - | - |")
            else:
                lines.append(f"| {name} | {r['batch']} | {fmt(r['ours']['steps_per_s'])} | {fmt(t['steps_per_s'])} | "
                             f"{fmt(r['ours'][key], 0)} | {fmt(t[key], 0)} | {fmt(r['ours_over_trl_steps_per_s'])}x |")
        lines += ["", "GRPO tokens = sampled completion tokens; DPO tokens = prompt + chosen + rejected tokens. "
                  "TRL runs with bf16, gradient checkpointing and lr set explicitly (its defaults differ).", ""]
    if "target" in s:
        r = s["target"]
        lines += ["## Time to target (GRPO from the SFT start)", ""]
        if "start_accuracy" in r:
            lines += [f"Warm start: {r.get('sft_steps')}-step SFT. Start accuracy {fmt(r['start_accuracy'], 3)} (greedy, "
                      f"{r['eval_prompts']} held-out prompts); "
                      f"target {fmt(r['target_accuracy'], 3)}; bound {fmt(r['bound_s'], 0)} s of training "
                      f"(evaluation excluded); {r['setting']}.", "",
                      "| loop | reached | training s | steps | final accuracy |", "|---|---|---|---|---|"]
            for name in ("ours", "trl"):
                x = r.get(name, {})
                if "skipped" in x or "error" in x:
                    lines.append(f"| {name} | {x.get('skipped', x.get('error'))} | | | |")
                    continue
                reached = "yes" if x["reached"] else f"not reached in {fmt(x['train_s'], 0)} s"
                lines.append(f"| {name} | {reached} | {fmt(x['train_s'], 1)} | {x['steps']} | "
                             f"{fmt(x['final_accuracy'], 3)} |")
        else:
            lines.append(str(r.get("skipped", r.get("error"))))
        lines.append("")
    if "rollout" in s:
        r = s["rollout"]
        lines += ["## Rollouts (sampled tokens/s)", ""]
        if "ours" in r:
            lines += [f"{r['batch']} {r['task']} prompts, up to {r['max_new_tokens']} new tokens, temperature 1, "
                      "KV cache in both; calls interleaved.", "",
                      "| sampler | tokens/s | tokens per call |", "|---|---|---|",
                      f"| rlprep.rollout.generate | {fmt(r['ours']['tokens_per_s'], 0)} | "
                      f"{fmt(r['ours']['tokens_per_call'], 0)} |",
                      f"| model.generate | {fmt(r['hf_generate']['tokens_per_s'], 0)} | "
                      f"{fmt(r['hf_generate']['tokens_per_call'], 0)} |", "",
                      f"Ours / model.generate: {fmt(r['ours_over_hf'])}x.", ""]
        else:
            lines += [str(r.get("skipped", r.get("error"))), ""]
    if "grading" in s:
        lines += ["## Grading (`rlprep grade` on each solution notebook)", ""]
        r = s["grading"]
        if "skipped" in r or "error" in r:
            lines += [str(r.get("skipped", r.get("error"))), ""]
        else:
            lines += ["| lab | seconds | exit code |", "|---|---|---|"]
            lines += [f"| {lab} | {fmt(x['seconds'], 1)} | {x['exit_code']} |" for lab, x in r.items()
                      if isinstance(x, dict)] + [""]
    if "image" in s:
        lines += ["## Image diff", ""]
        r = s["image"]
        if "table_median" in r:
            lines += [r["table_median"], "", r["table_best"], ""]
        else:
            lines += [str(r.get("skipped", r.get("error"))), ""]
    if "tests" in s:
        r = s["tests"]
        lines += ["## Test suite", "",
                  (f"`make test` wall time: {fmt(r['seconds'], 0)} s (from `build/make-test-seconds`, written "
                   f"{r['written']})." if "seconds" in r else str(r.get("skipped"))), ""]
    if "labs" in s:
        lines += [f"## Labs in the {report.get('labs_profile', 'gpu')} profile", ""]
        r = s["labs"]
        if "skipped" in r or "error" in r:
            lines += [str(r.get("skipped", r.get("error"))), ""]
        else:
            lines += [f"Each lab trains with its `for_profile` config and stops at its share of the labs' "
                      f"{fmt(r.get('labs_budget_s', float('nan')), 0)} s budget (\"stopped\" below); figure: "
                      f"`{report.get('figure', 'none')}`.", "",
                      "| lab | wall s | steps (planned) | figures |", "|---|---|---|---|"]
            for lab, x in r.items():
                if not isinstance(x, dict):
                    continue
                if "error" in x:
                    lines.append(f"| {lab} | error | | {x['error']} |")
                elif lab == "warm_starts":
                    lines.append(f"| warm starts | {fmt(x['wall_s'], 0)} | | {x['what']} |")
                else:
                    figs = ", ".join(f"{k} {fmt(v, 3)}" for k, v in x.items()
                                     if k not in ("wall_s", "steps", "planned_steps", "stopped_at_budget", "curve")
                                     and v is not None)
                    stopped = " stopped" if x.get("stopped_at_budget") else ""
                    lines.append(f"| {lab} | {fmt(x['wall_s'], 0)} | {x['steps']} ({x.get('planned_steps', '-')})"
                                 f"{stopped} | {figs} |")
            lines.append("")
    if report.get("skipped_for_budget"):
        lines += ["## Skipped for the time budget", "",
                  f"skipped: {', '.join(report['skipped_for_budget'])} (the {fmt(report.get('budget_s'), 0)} s "
                  "budget was spent)", ""]
    extra = report.get("extra_markdown")
    if extra:
        lines += [extra.rstrip(), ""]
    gpu = report.get("gpu_markdown")
    if gpu:
        lines += [gpu_section(gpu).rstrip(), ""]
    return "\n".join(lines)


GPU_BEGIN = "<!-- make gpu-check: begin (copied from benchmarks-gpu.md) -->"
GPU_END = "<!-- make gpu-check: end -->"


def gpu_section(gpu_md: str) -> str:
    """The GPU report as a section of ``docs/benchmarks.md``: headings one level down, between markers."""
    body = []
    for line in gpu_md.strip().splitlines():
        if line.startswith("# "):
            line = "## GPU: `make gpu-check`" + line[len("# Benchmarks"):]
        elif line.startswith("#"):
            line = "#" + line
        body.append(line)
    return "\n".join([GPU_BEGIN, *body, GPU_END])


def splice_gpu_section(benchmarks_md: str, gpu_md: str) -> str:
    """``benchmarks_md`` with its GPU section replaced by ``gpu_md`` (appended when it has none yet)."""
    section = gpu_section(gpu_md)
    if GPU_BEGIN in benchmarks_md and GPU_END in benchmarks_md:
        head, rest = benchmarks_md.split(GPU_BEGIN, 1)
        tail = rest.split(GPU_END, 1)[1]
        return head + section + tail
    return benchmarks_md.rstrip() + "\n\n" + section + "\n"


def _run_section(name, fn, sections, notes):
    t0 = time.perf_counter()
    print(f"[bench] {name} ...", file=sys.stderr, flush=True)
    try:
        sections[name] = fn()
    except Exception as exc:  # a section failing is reported, the others still run
        sections[name] = {"error": f"{type(exc).__name__}: {exc}"}
        notes.append(f"section {name} failed: {type(exc).__name__}: {exc}")
    if isinstance(sections[name], dict):
        sections[name]["section_wall_s"] = time.perf_counter() - t0
    print(f"[bench] {name} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


def _out_dir(args, root: Path) -> Path:
    """``--out``; else, for ``--gpu``, ``$OUT`` when set (the GPU machine hands back what is written there);
    else ``docs/``."""
    if args.out:
        return Path(args.out)
    if args.gpu and os.environ.get("OUT"):
        return Path(os.environ["OUT"])
    return root / "docs"


def attach_notes(report: dict, out_dir: Path) -> None:
    """Put the hand-written analysis (``benchmarks-notes.md``) and the last GPU report (``benchmarks-gpu.md``) into
    the CPU report, or take them out when the files are gone."""
    for key, name in (("extra_markdown", "benchmarks-notes.md"), ("gpu_markdown", "benchmarks-gpu.md")):
        report.pop(key, None)
        if (out_dir / name).exists():
            report[key] = (out_dir / name).read_text()


def rerender_notes(out_dir: Path) -> Path:
    """Rewrite ``benchmarks.md`` from the figures stored in ``benchmarks.json`` with the current notes files.

    The notes cite the figures of the last measured run; editing them must not require (or silently trigger) a new
    run whose figures would no longer match the text.
    """
    from rlprep.errors import RlprepError

    stored = out_dir / "benchmarks.json"
    if not stored.exists():
        raise RlprepError(f"no {stored} to re-render", "run `make bench` first (it measures and writes it)")
    try:
        report = json.loads(stored.read_text())
    except json.JSONDecodeError as exc:
        raise RlprepError(f"{stored} is not valid JSON ({exc})", "run `make bench` to measure and rewrite it") from exc
    attach_notes(report, out_dir)
    atomic_write(stored, json.dumps(report, indent=1, default=str) + "\n")
    atomic_write(out_dir / "benchmarks.md", render_markdown(report) + "\n")
    return out_dir / "benchmarks.md"


def run(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    from rlprep.errors import RlprepError
    from rlprep.paths import repo_root
    from rlprep.profiles import get_profile

    if getattr(args, "notes_only", False):
        if args.gpu:
            raise RlprepError("--notes-only re-renders the CPU report", "drop --gpu")
        written = rerender_notes(_out_dir(args, repo_root()))
        print(f"rewrote {written} from benchmarks.json and the current notes (nothing measured)")
        return 0
    dry_run = bool(getattr(args, "dry_run", False)) or os.environ.get("RLPREP_GPU_DRY_RUN") == "1"
    if dry_run and not args.gpu:
        raise RlprepError("--dry-run checks the GPU half's plumbing", "add --gpu (make gpu-check's command)")
    allowed = GPU_SECTIONS if args.gpu else SECTIONS
    wanted = tuple(allowed) if not args.only else tuple(x.strip() for x in args.only.split(",") if x.strip())
    unknown = [x for x in wanted if x not in allowed]
    if unknown:
        raise RlprepError(f"unknown bench section(s): {', '.join(unknown)}",
                          f"pick from {','.join(allowed)} (labs needs --gpu)")
    notes = []
    if dry_run:
        notes.append("DRY RUN (--dry-run / RLPREP_GPU_DRY_RUN=1): the GPU code path on the CPU with the smoke "
                     "profile and tiny budgets; it checks the plumbing, these are not GPU figures")
        device = torch.device("cpu")
        profile = get_profile(args.profile or "smoke")
    elif args.gpu and torch.cuda.is_available():
        device = torch.device("cuda")
        profile = get_profile(args.profile or "gpu")
    else:
        if args.gpu:
            notes.append("--gpu asked for but torch sees no CUDA: GPU-only parts skipped, the rest measured on CPU "
                         "with the smoke profile (these are not GPU figures)")
        device = torch.device("cpu")
        profile = get_profile(args.profile or "smoke")
    if device.type == "cpu" and profile.device != "cpu":
        raise RlprepError(f"profile {profile.name} needs {profile.device}", "use --profile smoke or cpu on this machine")
    quick = args.quick or dry_run
    repeats = args.repeats or (1 if dry_run else 3 if quick else 7)
    default_target = 2.0 if dry_run else 45.0 if args.gpu else 30.0 if quick else 90.0
    target_s = args.target_seconds or default_target
    points = args.target_points if args.target_points is not None else (5.0 if quick else 10.0)
    budget_s = getattr(args, "budget_seconds", None) or (120.0 if dry_run else 450.0)
    root = repo_root()
    out_dir = _out_dir(args, root)
    for mod in ("trl", "nbgrader"):
        if not have(mod):
            notes.append(f"skipped: {mod} is not installed, so the parts that need it are skipped")
    t_start = time.perf_counter()
    info = machine_info(device)
    sections: dict = {}
    skipped_for_budget: list[str] = []

    def within_budget(name: str) -> bool:
        """--gpu: a section starts only while the run's budget lasts (make gpu-check's 8-minute goal)."""
        if args.gpu and time.perf_counter() - t_start > budget_s:
            skipped_for_budget.append(name)
            return False
        return True

    if "labs" in wanted:
        labs_budget = 0.55 * budget_s
        _run_section("labs", lambda: bench_labs(device, profile if dry_run else None, labs_budget, dry_run),
                     sections, notes)
    if "steps" in wanted and within_budget("steps"):
        def steps():
            out = {}
            for name, fn in (("grpo", bench_grpo_steps), ("dpo", bench_dpo_steps)):
                try:
                    out[name] = fn(profile, device, repeats, warmup=1 if dry_run else 2)
                except Exception as exc:  # one loop failing must not hide the other's figures
                    out[name] = {"error": f"{type(exc).__name__}: {exc}"}
                    notes.append(f"steps/{name} failed: {type(exc).__name__}: {exc}")
            return out
        _run_section("steps", steps, sections, notes)
    if "rollout" in wanted and within_budget("rollout"):
        size = dict(batch=8, new_tokens=8) if dry_run else {}
        _run_section("rollout", lambda: bench_rollout(profile, device, repeats, **size), sections, notes)
    if "image" in wanted and within_budget("image"):
        def image():
            if not have("cv2"):
                return {"skipped": "opencv (cv2) is not installed"}
            from rlprep.bench_image_diff import format_table, run_benchmark

            size = dict(height=135, width=240) if dry_run else {}
            res = run_benchmark(repeats=3 if quick else 21, slow_repeats=1, **size)  # 3-6 ms timings: 21 for a stable median
            return {"result": res, "table_median": format_table(res, "timings_ms"),
                    "table_best": format_table(res, "best_ms")}
        _run_section("image", image, sections, notes)
    if "target" in wanted and within_budget("target"):
        bound = target_s
        if args.gpu:  # both loops (ours, TRL) must fit in what is left
            bound = max(1.0, min(target_s, (budget_s - (time.perf_counter() - t_start)) / 2.5))
        sft = profile.sft_steps if dry_run else None  # dry run: the cached warm start, no extra SFT build
        _run_section("target", lambda: bench_time_to_target(profile, device, bound, points, sft_steps=sft),
                     sections, notes)
    if "grading" in wanted and within_budget("grading"):
        _run_section("grading", lambda: bench_grading(root), sections, notes)
    if "tests" in wanted:
        def tests():
            f = root / "build" / "make-test-seconds"
            if not f.exists():
                return {"skipped": "no build/make-test-seconds yet: run `make test` first (its target writes it)"}
            written = datetime.fromtimestamp(f.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            return {"seconds": float(f.read_text().split()[0]), "written": written}
        _run_section("tests", tests, sections, notes)
    cmd = "python -m rlprep bench " + " ".join(sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:])
    report = {"command": cmd.strip(), "profile": profile.name, "quick": quick, "dry_run": dry_run, "machine": info,
              "notes": notes, "sections": sections, "wall_s": time.perf_counter() - t_start}
    if args.gpu:
        report.update(budget_s=budget_s, skipped_for_budget=skipped_for_budget, labs_profile=profile.name)
    stem = "benchmarks-gpu" if args.gpu else "benchmarks"
    if "labs" in sections and "skipped" not in sections["labs"]:
        figure = plot_labs(sections["labs"], out_dir / f"{stem}-labs.png")
        report["figure"] = figure.name if figure else None
    report["wall_s"] = time.perf_counter() - t_start
    if not args.gpu:
        attach_notes(report, out_dir)
    markdown = render_markdown(report) + "\n"
    atomic_write(out_dir / f"{stem}.json", json.dumps(report, indent=1, default=str) + "\n")
    atomic_write(out_dir / f"{stem}.md", markdown)
    written = [f"{stem}.md", f"{stem}.json"] + ([report["figure"]] if report.get("figure") else [])
    docs_md = root / "docs" / "benchmarks.md"
    if args.gpu and not dry_run and out_dir.resolve() == (root / "docs").resolve() and docs_md.exists():
        atomic_write(docs_md, splice_gpu_section(docs_md.read_text(), markdown))
        written.append("benchmarks.md (GPU section)")
    print(f"wrote {', '.join(written)} in {out_dir} in {report['wall_s']:.0f} s")
    return 0

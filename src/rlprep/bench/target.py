"""The ``target`` section: steps and wall time until GRPO lifts held-out accuracy by ``points`` from the SFT start,
ours vs TRL's GRPOTrainer, over several seeds (medians and spread), each run bounded by ``seconds`` of training
(evaluation excluded from both clocks; "not reached in N s" is reported as such).

Both trainers get the same warm start, the same evaluation prompts (the test split, seed 10000), the same batch
(N prompts x G completions), lr, clip range, beta 0 and token aggregation. ``python -m rlprep.bench.target``
runs one trainer over seeds with config changes, the measurements behind docs/benchmarks-notes.md ("Steps to
target").
"""

from __future__ import annotations

import copy
import statistics
import tempfile
import time

from rlprep.bench import machine
from rlprep.bench.trl_adapters import quiet, task_reward, trl_common, trl_grpo_config

N, G, C, LR, N_EVAL = 8, 8, 6, 1e-4, 200
"""The setting of every run: N prompts x G completions, C new tokens, lr, held-out evaluation prompts."""
EVAL_SEED = 10_000
WARM_STARTS = {"smoke": dict(sft_steps=250), "cpu": dict(sft_stop_accuracy=0.5), "gpu": dict(sft_stop_accuracy=0.7)}
"""The warm start per profile: the SFT stopped early leaves headroom (the full SFT already scores ~97%). smoke: a
250-step SFT (0.48 held-out); cpu/gpu: the GRPO lab's start (``GRPOConfig.for_profile``)."""
DIP_EVALS = 10
"""The dip = the lowest accuracy over the first this many evaluations, minus the start."""


def warm_start(profile, sft_steps: int | None = None):
    """``(policy, tokenizer, what)``: the run's start (``sft_steps`` overrides the profile's choice)."""
    from rlprep.tinyworld.warm_start import load_warm_start

    kwargs = dict(sft_steps=sft_steps) if sft_steps is not None else WARM_STARTS.get(profile.name, {})
    policy, tok = load_warm_start(profile, **kwargs)
    what = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "full SFT"
    return policy, tok, what


def eval_examples(task, n: int = N_EVAL):
    """The held-out prompts both trainers are scored on."""
    return task.sample(n, split="test", seed=EVAL_SEED)


def summarise(curve: list, start: float, target: float, seconds: float) -> dict:
    """One run's figures from its ``[[step, train_s, accuracy], ...]`` curve."""
    hit = next((row for row in curve if row[2] >= target), None)
    first = [row[2] for row in curve[:DIP_EVALS]]
    last = curve[-1] if curve else [0, 0.0, start]
    return {"reached": hit is not None, "steps": hit[0] if hit else last[0],
            "train_s": hit[1] if hit else last[1], "final_accuracy": last[2],
            "dip": (min(first) - start) if first else 0.0, "bound_s": seconds, "curve": curve}


def run_ours(policy, tok, task, examples, start: float, target: float, seconds: float, seed: int, device,
             eval_every: int = 5, max_steps: int | None = None, overrides: dict | None = None,
             optimizer: dict | None = None) -> dict:
    """Our GRPOTrainer from ``policy`` until ``target`` accuracy, ``seconds`` of training or ``max_steps``.

    ``overrides``: GRPOConfig fields; ``optimizer``: AdamW keyword arguments (betas, eps, weight_decay) and
    ``warmup_steps`` (linear warm-up of the lr), for the investigation."""
    import torch

    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy
    from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer
    from rlprep.trainers.sequences import adamw

    fields = dict(prompts_per_step=N, group_size=G, max_new_tokens=C, lr=LR, beta=0.0, log_kl=False)
    cfg = GRPOConfig(profile="smoke", steps=10**6, eval_size=1, device=str(device), seed=seed,
                     **{**fields, **(overrides or {})})
    trainer = GRPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    opt = dict(optimizer or {})
    warmup = opt.pop("warmup_steps", 0)
    if opt:
        trainer.optimizer = adamw(trainer.policy.parameters(), lr=cfg.lr, **opt)
    if warmup:
        sched = torch.optim.lr_scheduler.LambdaLR(trainer.optimizer, lambda s: min(1.0, (s + 1) / warmup))
    train_s, steps, acc, curve = 0.0, 0, start, []
    while train_s < seconds and acc < target and (max_steps is None or steps < max_steps):
        t0 = time.perf_counter()
        for _ in range(eval_every):
            trainer.step()
            if warmup:
                sched.step()
        train_s += time.perf_counter() - t0
        steps += eval_every
        acc = evaluate_accuracy(trainer.policy, tok, task, examples, C)
        curve.append([steps, round(train_s, 2), acc])
    return summarise(curve, start, target, seconds)


def run_trl(policy, tok, task, examples, start: float, target: float, seconds: float, seed: int, device,
            eval_every: int = 5, max_steps: int | None = None, **trl_args) -> dict:
    """TRL's GRPOTrainer on the same start, batch and evaluation (``trl_args``: GRPOConfig fields to change)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOTrainer as TRLTrainer

    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy

    budget = max_steps or 4000
    prompts = [ex.prompt for ex in task.sample(N * budget, split="train", seed=1 + seed)]

    class StopAtTarget(TrainerCallback):
        def __init__(self):
            self.train_s, self.curve, self._t = 0.0, [], time.perf_counter()

        def on_step_end(self, args, state, control, model=None, **kw):
            if state.global_step % eval_every:
                return
            self.train_s += time.perf_counter() - self._t
            acc = evaluate_accuracy(model, tok, task, examples, C)
            self.curve.append([state.global_step, round(self.train_s, 2), acc])
            if acc >= target or self.train_s >= seconds:
                control.should_training_stop = True
            self._t = time.perf_counter()

    stop = StopAtTarget()
    with tempfile.TemporaryDirectory() as tmp, quiet():
        common = {**trl_common(tmp, device, LR, budget, N * G), "logging_steps": 50, "seed": seed}
        args = trl_grpo_config(common, G, C, **trl_args)
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), reward_funcs=task_reward(task), args=args,
                         processing_class=tok, train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[stop])
        stop._t = time.perf_counter()
        trl.train()
    return summarise(stop.curve, start, target, seconds)


def spread(runs: list[dict]) -> dict:
    """Median and range of steps and training seconds over seeds (an unreached run counts at its bound)."""
    out = {"reached": sum(r["reached"] for r in runs), "seeds": len(runs)}
    for key in ("steps", "train_s", "dip"):
        xs = [r[key] for r in runs]
        out[key] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}
    return out


def bench_time_to_target(profile, device, seconds: float, points: float, eval_every: int = 5,
                         sft_steps: int | None = None, seeds: int = 3) -> dict:
    """GRPO from the SFT start until held-out greedy accuracy >= start + ``points``/100, ours vs TRL, ``seeds``
    seeds each, interleaved (ours seed 0, TRL seed 0, ours seed 1, ...) so that load changes hit both."""
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy

    policy, tok, what = warm_start(profile, sft_steps)
    task = get_task("arithmetic")
    examples = eval_examples(task)
    start = evaluate_accuracy(policy, tok, task, examples, C)
    target = min(1.0, start + points / 100)
    out = {"start_accuracy": start, "target_accuracy": target, "bound_s": seconds, "eval_prompts": len(examples),
           "setting": f"{N}x{G}, lr {LR}, beta 0, eps 0.2, token aggregation (TRL: loss_type dapo), eval every "
                      f"{eval_every} steps", "warm_start": what, "points": points}
    have_trl = machine.have("trl")
    runs = {"ours": [], "trl": []}
    for seed in range(seeds):
        runs["ours"].append(run_ours(policy, tok, task, examples, start, target, seconds, seed, device, eval_every))
        if have_trl:
            runs["trl"].append(run_trl(policy, tok, task, examples, start, target, seconds, seed, device,
                                       eval_every))
    out["ours"] = {"runs": runs["ours"], **spread(runs["ours"])}
    if not have_trl:
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    out["trl"] = {"runs": runs["trl"], **spread(runs["trl"])}
    out["trl_over_ours_train_s"] = out["trl"]["train_s"]["median"] / out["ours"]["train_s"]["median"]
    out["trl_over_ours_steps"] = out["trl"]["steps"]["median"] / out["ours"]["steps"]["median"]
    return out


def main(argv=None) -> int:
    """One trainer, one seed, one configuration, to ``max_steps`` or the target; appends a JSON line (the curve
    included) to ``--out``. The measurements of docs/benchmarks-notes.md ("Steps to target") are such lines."""
    import argparse
    import json

    import torch

    from rlprep.profiles import get_profile
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy

    parser = argparse.ArgumentParser(prog="python -m rlprep.bench.target", description=main.__doc__)
    parser.add_argument("trainer", choices=("ours", "trl"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--points", type=float, default=25.0)
    parser.add_argument("--max-steps", type=int, default=400)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--change", default="{}", help='JSON: {"cfg": {GRPOConfig fields}, "opt": {AdamW kwargs, '
                                                      'warmup_steps}} for ours, {"trl": {GRPOConfig fields}} for TRL')
    parser.add_argument("--out", default=None, help="append the JSON line here (default: print it only)")
    args = parser.parse_args(argv)
    change = json.loads(args.change)
    profile = get_profile(args.profile)
    policy, tok, what = warm_start(profile)
    task = get_task("arithmetic")
    examples = eval_examples(task)
    start = evaluate_accuracy(policy, tok, task, examples, C)
    common = dict(eval_every=args.eval_every, max_steps=args.max_steps)
    if args.trainer == "ours":
        run = run_ours(policy, tok, task, examples, start, start + args.points / 100, 1e9, args.seed,
                       torch.device("cpu"), overrides=change.get("cfg"), optimizer=change.get("opt"), **common)
    else:
        run = run_trl(policy, tok, task, examples, start, start + args.points / 100, 1e9, args.seed,
                      torch.device("cpu"), **common, **change.get("trl", {}))
    line = json.dumps({"trainer": args.trainer, "seed": args.seed, "profile": profile.name, "warm_start": what,
                       "start": start, "points": args.points, "change": change, **run})
    print(line)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

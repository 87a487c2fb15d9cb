"""The ``steps`` section: steps/s and tokens/s of our GRPO and DPO steps vs TRL's trainers on the same model,
batch and data (medians over ``repeats`` timed steps after ``warmup`` untimed ones)."""

from __future__ import annotations

import copy
import tempfile

from rlprep.bench import machine
from rlprep.bench.timing import median, timed
from rlprep.bench.trl_adapters import quiet, step_timer, task_reward, trl_common, trl_grpo_config


def bench_steps(profile, device, repeats: int, warmup: int, notes: list[str]) -> dict:
    """Both loops; one failing is reported in ``notes`` and must not hide the other's figures."""
    out = {}
    for name, fn in (("grpo", bench_grpo_steps), ("dpo", bench_dpo_steps)):
        try:
            out[name] = fn(profile, device, repeats, warmup=warmup)
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            notes.append(f"steps/{name} failed: {type(exc).__name__}: {exc}")
    return out


def bench_grpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our GRPOTrainer.step vs TRL's GRPOTrainer: 8 prompts x 8 completions, 6 new tokens, beta 0, mu 1."""
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
        seconds, metrics = timed(trainer.step, device)
        if i >= warmup:
            times.append(seconds)
            lens.append(metrics["stats/completion_len"])
    out["ours"] = {"step_s": median(times), "steps_per_s": 1 / median(times),
                   "completion_tokens_per_s": N * G * median(lens) / median(times), "n": len(times)}
    if not machine.have("trl"):
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from trl import GRPOTrainer as TRLTrainer

    prompts = [ex.prompt for ex in task.sample(N * (warmup + repeats + 2), split="train", seed=1)]
    with tempfile.TemporaryDirectory() as tmp, quiet():
        args = trl_grpo_config(trl_common(tmp, device, lr, warmup + repeats, N * G), G, C, epsilon=0.2)
        timer = step_timer()
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), reward_funcs=task_reward(task), args=args,
                         processing_class=tok, train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[timer])
        trl.train()
    t = timer.times[warmup:]
    lens = [row["completions/mean_length"] for row in timer.logs if "completions/mean_length" in row][warmup:]
    out["trl"] = {"step_s": median(t), "steps_per_s": 1 / median(t),
                  "completion_tokens_per_s": N * G * median(lens) / median(t) if lens else float("nan"), "n": len(t)}
    out["ours_over_trl_steps_per_s"] = out["ours"]["steps_per_s"] / out["trl"]["steps_per_s"]
    return out


def bench_dpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our DPOTrainer.step vs TRL's DPOTrainer: 32 reviews preference pairs per step, beta 0.1."""
    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.dpo import DPOConfig, DPOTrainer

    B, lr, steps = 32, 1e-4, warmup + repeats
    policy, tok = load_policy("reviews", profile)
    task = get_task("reviews")
    out = {"batch": f"{B} preference pairs per step, beta 0.1",
           "model_params": sum(p.numel() for p in policy.parameters())}
    cfg = DPOConfig(profile=profile.name, steps=steps, batch_size=B, lr=lr, n_train_pairs=B * steps, eval_prompts=2,
                    device=str(device))
    trainer = DPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    pairs = trainer.pairs
    n_tokens = sum(len(tok(p.prompt + p.chosen)["input_ids"]) + len(tok(p.prompt + p.rejected)["input_ids"]) + 2
                   for p in pairs) / len(pairs)  # tokens per pair (both rows, with eos)
    times = []
    for i in range(steps):
        seconds, _ = timed(lambda: trainer.step(i), device)  # noqa: B023 (called at once, inside this iteration)
        if i >= warmup:
            times.append(seconds)
    out["ours"] = {"step_s": median(times), "steps_per_s": 1 / median(times),
                   "tokens_per_s": B * n_tokens / median(times), "n": len(times)}
    if not machine.have("trl"):
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from trl import DPOConfig as TRLConfig
    from trl import DPOTrainer as TRLTrainer

    data = Dataset.from_dict({"prompt": [p.prompt for p in pairs], "chosen": [p.chosen for p in pairs],
                              "rejected": [p.rejected for p in pairs]})
    with tempfile.TemporaryDirectory() as tmp, quiet():
        args = TRLConfig(**trl_common(tmp, device, lr, steps, B), beta=0.1, loss_type=["sigmoid"],
                         max_length=policy.config.n_positions)
        timer = step_timer()
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), args=args, processing_class=tok, train_dataset=data,
                         callbacks=[timer])
        trl.train()
    t = timer.times[warmup:]
    out["trl"] = {"step_s": median(t), "steps_per_s": 1 / median(t), "tokens_per_s": B * n_tokens / median(t),
                  "n": len(t), "note": "TRL defaults: reference log-probs recomputed each step"}
    out["ours_over_trl_steps_per_s"] = out["ours"]["steps_per_s"] / out["trl"]["steps_per_s"]
    return out

"""The ``steps`` section: steps/s and tokens/s of our GRPO and DPO steps vs TRL's trainers on the same model,
batch and data. The two loops run **interleaved in one process**: after each TRL optimizer step (timed from its
``on_step_begin`` to its ``on_step_end``), a callback times one of our steps, so a load spike on a shared machine
hits both loops alike. Figures are medians over ``repeats`` timed pairs after ``warmup`` untimed ones; the ratio is
also given as the median of the per-pair ratios."""

from __future__ import annotations

import copy
import tempfile
import time

from rlprep.bench import machine
from rlprep.bench.timing import median, timed
from rlprep.bench.trl_adapters import quiet, task_reward, trl_common, trl_grpo_config


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


def interleaved_timer(ours_step, device):
    """A TRL TrainerCallback that records each TRL step's wall time, then times one ``ours_step()`` (which returns
    its metrics) right after it: ``trl_times``, ``ours_times``, ``ours_metrics`` and TRL's logged rows."""
    from transformers import TrainerCallback

    class Interleaved(TrainerCallback):
        def __init__(self):
            self.trl_times, self.ours_times, self.ours_metrics, self.logs, self._t = [], [], [], [], None

        def on_step_begin(self, args, state, control, **kw):
            if device.type == "cuda":
                import torch

                torch.cuda.synchronize()
            self._t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            if device.type == "cuda":
                import torch

                torch.cuda.synchronize()
            self.trl_times.append(time.perf_counter() - self._t)
            seconds, metrics = timed(ours_step, device)
            self.ours_times.append(seconds)
            self.ours_metrics.append(metrics)

        def on_log(self, args, state, control, logs=None, **kw):
            self.logs.append(dict(logs or {}))

    return Interleaved()


def ours_alone(ours_step, device, steps: int) -> tuple[list[float], list[dict]]:
    """Without trl: our steps timed back to back."""
    times, metrics = [], []
    for _ in range(steps):
        seconds, m = timed(ours_step, device)
        times.append(seconds)
        metrics.append(m)
    return times, metrics


def ratios(out: dict, ours_t: list[float], trl_t: list[float]) -> None:
    """The headline ratio (TRL's median step time / ours) and the median of the per-pair ratios."""
    out["ours_over_trl_steps_per_s"] = out["ours"]["steps_per_s"] / out["trl"]["steps_per_s"]
    out["paired_ratio_median"] = median([t / o for o, t in zip(ours_t, trl_t)])
    out["paired_ratio_min"] = min(t / o for o, t in zip(ours_t, trl_t))


def bench_grpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our GRPOTrainer.step vs TRL's GRPOTrainer: 8 prompts x 8 completions, 6 new tokens, beta 0, mu 1."""
    from rlprep.tinyworld import get_task
    from rlprep.tinyworld.warm_start import load_warm_start
    from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer

    N, G, C, lr, steps = 8, 8, 6, 1e-4, warmup + repeats
    policy, tok = load_warm_start(profile)
    task = get_task("arithmetic")
    out = {"batch": f"{N} prompts x {G} completions, max {C} new tokens, beta 0, mu 1",
           "model_params": sum(p.numel() for p in policy.parameters()), "interleaved": machine.have("trl")}
    cfg = GRPOConfig(profile=profile.name, steps=steps, prompts_per_step=N, group_size=G,
                     max_new_tokens=C, lr=lr, beta=0.0, log_kl=False, eval_size=1, device=str(device))
    trainer = GRPOTrainer(cfg, copy.deepcopy(policy), tok, task)

    def summary(times, lens):
        return {"step_s": median(times), "steps_per_s": 1 / median(times),
                "completion_tokens_per_s": N * G * median(lens) / median(times) if lens else float("nan"),
                "n": len(times)}

    if not machine.have("trl"):
        times, metrics = ours_alone(trainer.step, device, steps)
        out["ours"] = summary(times[warmup:], [m["stats/completion_len"] for m in metrics[warmup:]])
        out["trl"] = {"skipped": "trl is not installed"}
        return out
    from datasets import Dataset
    from trl import GRPOTrainer as TRLTrainer

    prompts = [ex.prompt for ex in task.sample(N * (steps + 2), split="train", seed=1)]
    with tempfile.TemporaryDirectory() as tmp, quiet():
        args = trl_grpo_config(trl_common(tmp, device, lr, steps, N * G), G, C, epsilon=0.2)
        timer = interleaved_timer(trainer.step, device)
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), reward_funcs=task_reward(task), args=args,
                         processing_class=tok, train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[timer])
        trl.train()
    ours_t, trl_t = timer.ours_times[warmup:], timer.trl_times[warmup:]
    out["ours"] = summary(ours_t, [m["stats/completion_len"] for m in timer.ours_metrics[warmup:]])
    out["trl"] = summary(trl_t, [row["completions/mean_length"] for row in timer.logs
                                 if "completions/mean_length" in row][warmup:])
    ratios(out, ours_t, trl_t)
    return out


def bench_dpo_steps(profile, device, repeats: int, warmup: int = 2) -> dict:
    """Our DPOTrainer.step vs TRL's DPOTrainer: 32 reviews preference pairs per step, beta 0.1, each pair seen once
    (so both compute the reference log-probs of every step's pairs: TRL's default, and our cache never hits)."""
    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.dpo import DPOConfig, DPOTrainer

    B, lr, steps = 32, 1e-4, warmup + repeats
    policy, tok = load_policy("reviews", profile)
    task = get_task("reviews")
    out = {"batch": f"{B} preference pairs per step, beta 0.1", "interleaved": machine.have("trl"),
           "model_params": sum(p.numel() for p in policy.parameters())}
    cfg = DPOConfig(profile=profile.name, steps=steps, batch_size=B, lr=lr, n_train_pairs=B * steps, eval_prompts=2,
                    device=str(device))
    trainer = DPOTrainer(cfg, copy.deepcopy(policy), tok, task)
    pairs = trainer.pairs
    n_tokens = sum(len(tok(p.prompt + p.chosen)["input_ids"]) + len(tok(p.prompt + p.rejected)["input_ids"]) + 2
                   for p in pairs) / len(pairs)  # tokens per pair (both rows, with eos)
    counter = iter(range(10**9))

    def ours_step():
        return trainer.step(next(counter))

    def summary(times):
        return {"step_s": median(times), "steps_per_s": 1 / median(times), "tokens_per_s": B * n_tokens / median(times),
                "n": len(times)}

    if not machine.have("trl"):
        out["ours"] = summary(ours_alone(ours_step, device, steps)[0][warmup:])
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
        timer = interleaved_timer(ours_step, device)
        trl = TRLTrainer(model=copy.deepcopy(policy).to(device), args=args, processing_class=tok, train_dataset=data,
                         callbacks=[timer])
        trl.train()
    ours_t, trl_t = timer.ours_times[warmup:], timer.trl_times[warmup:]
    out["ours"] = summary(ours_t)
    out["trl"] = {**summary(trl_t), "note": "TRL defaults: reference log-probs recomputed each step"}
    ratios(out, ours_t, trl_t)
    return out

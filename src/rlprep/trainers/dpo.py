"""DPO on the reviews preference pairs, in plain PyTorch, with the graded functions injectable, and a β sweep.

DPO (Rafailov et al. 2023, arXiv 2305.18290, Eq. 7):
``L = −log σ(β·[(log π(y_w|x) − log π_ref(y_w|x)) − (log π(y_l|x) − log π_ref(y_l|x))])``.

One step: pad a batch of (prompt, chosen) and (prompt, rejected) rows (tokenized once, when the trainer is built)
together, one policy forward gives
``sequence_logprobs`` for both; the reference log-probs come from a frozen copy of the SFT policy and are
computed **once per pair** (cached by pair index, so later epochs reuse them: no redundant reference forwards).

Logged per step: ``loss/dpo``, ``reward/implicit_accuracy`` (how often the implicit reward β·log π/π_ref ranks the
chosen above the rejected), ``reward/implicit_margin``, ``logps/chosen``, ``logps/rejected``; every ``eval_every``
steps, on completions **sampled from the policy** for held-out prompts: ``stats/kl_k1_seq`` (KL(π‖π_ref) per
sequence, the mean of Σ_t log π/π_ref over samples) and ``reward/gold``.

:func:`beta_sweep` trains one fresh copy of the SFT policy per β and returns the (KL, gold reward) frontier.

Run: ``python -m rlprep.trainers.dpo --profile cpu [--sweep]``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable, Sequence

import numpy as np
import torch

from rlprep.algos import dpo as algos_dpo
from rlprep.live import History, run_steps
from rlprep.profiles import Profile
from rlprep.trainers.config import TrainerConfig
from rlprep.trainers.sequences import (adamw, completion_logprobs, forward_logits, frozen_copy, held_out_prompts,
                                       pad_id, pad_left, start_policy, tokenize_pairs, unwrap_model)

SWEEP_BETAS = (0.01, 0.05, 0.1, 0.5, 1.0)


@dataclass
class DPOConfig(TrainerConfig):
    """Budget and knobs of one DPO run. ``DPOConfig.for_profile("cpu")`` gives the lab's defaults."""

    steps: int = 20
    """Optimizer steps."""
    batch_size: int = 32
    """Preference pairs per step."""
    lr: float = 1e-4
    """AdamW learning rate (constant)."""
    beta: float = 0.1
    """DPO temperature β: larger keeps the policy closer to the reference (0.1 in the DPO paper's dialogue runs)."""
    n_train_pairs: int = 1000
    """Training pairs from ``preference_pairs(split="train")``, cycled."""
    eval_every: int = 10
    """Sample-based evaluation (KL to the reference, gold reward) every this many steps and at the end."""
    eval_prompts: int = 64
    """Held-out prompts sampled at each evaluation."""
    max_new_tokens: int = 32
    """Completion budget of the evaluation samples."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold."""
    plot_keys: tuple[str, ...] = ("loss/dpo", "reward/implicit_accuracy", "logps/chosen", "logps/rejected", "stats/kl_k1_seq",
                                  "reward/gold")
    """Metrics on the live plot."""

    def checks(self) -> list[tuple[bool, str]]:
        return super().checks() + [
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (self.beta > 0, f"beta must be > 0 (it divides the implicit reward), got {self.beta}"),
            (self.n_train_pairs >= self.batch_size,
             f"n_train_pairs ({self.n_train_pairs}) must be >= batch_size ({self.batch_size})"),
            (self.eval_every >= 1, f"eval_every must be >= 1, got {self.eval_every}"),
            (self.eval_prompts >= 2, f"eval_prompts must be >= 2 (for a standard error), got {self.eval_prompts}"),
            (self.max_new_tokens >= 1, f"max_new_tokens must be >= 1, got {self.max_new_tokens}"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
        ]

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: seconds; cpu: one β in about a minute (the 5-β sweep within the lab's 10 min); gpu: longer."""
        if p.name == "smoke":
            base = dict(steps=12, batch_size=16, lr=3e-4, n_train_pairs=192, eval_every=6, eval_prompts=32)
        elif p.name == "cpu":
            base = dict(steps=80, batch_size=32, lr=1e-4, n_train_pairs=2560, eval_every=20, eval_prompts=96)
        else:
            base = dict(steps=int(100 * p.scale), batch_size=64, lr=5e-5, n_train_pairs=25600, eval_every=50,
                        eval_prompts=512)
        return dict(base, max_new_tokens=min(48, p.n_positions - 24))  # prompt <= 21 chars + completion


class DPOTrainer:
    """Policy, frozen reference, optimizer, cached reference log-probs and the injected functions."""

    def __init__(self, config: DPOConfig, policy=None, tokenizer=None, task=None, *,
                 sequence_logprobs: Callable | None = None, dpo_loss: Callable | None = None):
        from rlprep.tinyworld import get_task, load_policy

        self.config = config
        self.profile, self.device, self.policy, self.tokenizer = start_policy(config, policy, tokenizer,
                                                                                    lambda p: load_policy("reviews", p))
        self.task = task if task is not None else get_task("reviews")
        self.reference = frozen_copy(self.policy)
        self.sequence_logprobs = sequence_logprobs or algos_dpo.sequence_logprobs
        self.dpo_loss = dpo_loss or algos_dpo.dpo_loss
        self.optimizer = adamw(self.policy.parameters(), lr=config.lr)
        self.pairs = self.task.preference_pairs(config.n_train_pairs, split="train", seed=config.seed)
        self.order = np.random.default_rng(config.seed).permutation(len(self.pairs))
        max_length = unwrap_model(self.policy).config.n_positions
        prompts = [p.prompt for p in self.pairs]  # tokenized once here, padded per step (as TRL maps its dataset)
        self.chosen_rows = tokenize_pairs(self.tokenizer, prompts, [p.chosen for p in self.pairs],
                                          max_length=max_length)
        self.rejected_rows = tokenize_pairs(self.tokenizer, prompts, [p.rejected for p in self.pairs],
                                            max_length=max_length)
        self.ref_cache: dict[int, tuple[float, float]] = {}
        self.eval_prompts = held_out_prompts(self.task, config.eval_prompts, seed=config.seed + 1)
        self.ref_forwards = 0  # rows the reference has scored (tests check there is no redundancy)

    def _logps(self, model, input_ids, attention_mask, completion_mask) -> torch.Tensor:
        """``sequence_logprobs`` ``[2B]`` of the completion (+ eos) tokens of each row."""
        n_last = int(completion_mask.sum(-1).max())  # completions sit at the right end (left padding)
        logits = forward_logits(model, input_ids, attention_mask, n_last)  # (2B, C, V)
        labels = input_ids[:, -n_last:]  # (2B, C)
        mask = completion_mask[:, -n_last:]  # (2B, C)
        return self.sequence_logprobs(logits, labels, mask)

    def step(self, step: int) -> dict[str, float]:
        cfg = self.config
        start = (step * cfg.batch_size) % len(self.order)
        idx = np.take(self.order, range(start, start + cfg.batch_size), mode="wrap").tolist()
        B = len(idx)
        (c_rows, c_lens), (r_rows, r_lens) = self.chosen_rows, self.rejected_rows
        rows = [c_rows[i] for i in idx] + [r_rows[i] for i in idx]  # chosen rows, then rejected rows
        ids, attn, comp = pad_left(rows, [c_lens[i] for i in idx] + [r_lens[i] for i in idx], pad_id(self.tokenizer),
                                   self.device)  # (2B, L) each
        missing = [k for k, i in enumerate(idx) if i not in self.ref_cache]
        if missing:  # reference log-probs: once per pair, ever
            rows = missing + [B + k for k in missing]  # chosen rows, then their rejected rows
            with torch.no_grad():
                ref = self._logps(self.reference, ids[rows], attn[rows], comp[rows]).float().cpu()  # (2m,)
            self.ref_forwards += len(rows)
            for j, k in enumerate(missing):
                self.ref_cache[idx[k]] = (float(ref[j]), float(ref[len(missing) + j]))
        ref_c = torch.tensor([self.ref_cache[i][0] for i in idx], device=self.device)  # (B,)
        ref_r = torch.tensor([self.ref_cache[i][1] for i in idx], device=self.device)  # (B,)
        logps = self._logps(self.policy, ids, attn, comp)  # (2B,)
        pi_c, pi_r = logps[:B], logps[B:]  # (B,), (B,)
        loss = self.dpo_loss(pi_c, pi_r, ref_c, ref_r, beta=cfg.beta)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm))
        self.optimizer.step()
        with torch.no_grad():
            reward_c = cfg.beta * (pi_c.detach() - ref_c)  # (B,) implicit rewards
            reward_r = cfg.beta * (pi_r.detach() - ref_r)
            return {"loss/dpo": float(loss.detach()),
                    "reward/implicit_accuracy": float((reward_c > reward_r).float().mean()),
                    "reward/implicit_margin": float((reward_c - reward_r).mean()),
                    "reward/implicit_chosen": float(reward_c.mean()), "reward/implicit_rejected": float(reward_r.mean()),
                    "logps/chosen": float(pi_c.detach().mean()), "logps/rejected": float(pi_r.detach().mean()),
                    "stats/grad_norm": grad_norm}

    @torch.no_grad()
    def evaluate(self, seed: int = 0) -> dict[str, float]:
        """Sample one completion per held-out prompt: ``stats/kl_k1_seq`` = mean over samples of Σ_t log π/π_ref (an
        unbiased estimate of the sequence KL(π‖π_ref), Schulman 2020 k1), and the gold reward of the samples."""
        from rlprep.rollout import generate

        self.policy.eval()
        out = generate(unwrap_model(self.policy), self.tokenizer, self.eval_prompts,
                       max_new_tokens=self.config.max_new_tokens, temperature=1.0, seed=self.config.seed * 7919 + seed)
        self.policy.train()
        C = out.completion_ids.shape[1]
        ids, attn = out.input_ids.to(self.device), out.attention_mask.to(self.device)
        mask = out.completion_mask.to(self.device).float()  # (B, C)
        logp = completion_logprobs(self.policy, ids, attn, C)  # (B, C)
        ref_logp = completion_logprobs(self.reference, ids, attn, C)  # (B, C)
        kl_seq = ((logp - ref_logp) * mask).sum(-1)  # (B,)
        gold = torch.tensor([self.task.gold_score(p, t) for p, t in zip(out.prompts, out.texts)])
        n = len(gold)
        return {"stats/kl_k1_seq": float(kl_seq.mean()), "stats/kl_k1_seq_se": float(kl_seq.std() / math.sqrt(n)),
                "reward/gold": float(gold.mean()), "reward/gold_se": float(gold.std() / math.sqrt(n)),
                "stats/completion_len": float(mask.sum(-1).mean())}


def train_dpo(config: DPOConfig | None = None, *, policy=None, tokenizer=None, task=None,
              sequence_logprobs: Callable | None = None, dpo_loss: Callable | None = None,
              callbacks: Sequence[Callable] = (), live: bool | None = None) -> History:
    """Train ``policy`` (default: the reviews SFT policy of the config's profile) with DPO, in place.

    ``sequence_logprobs`` and ``dpo_loss`` default to the references in ``rlprep.algos.dpo``. The history's
    first row (step 0) holds the evaluation of the SFT start; ``meta`` holds the final ``kl`` and ``gold``.
    """
    config = config or DPOConfig.for_profile()
    trainer = DPOTrainer(config, policy, tokenizer, task, sequence_logprobs=sequence_logprobs, dpo_loss=dpo_loss)
    history = History(meta={"config": asdict(config), "trainer": "dpo"})
    t0 = time.perf_counter()
    history.append({"step": 0, **trainer.evaluate(seed=0)})

    def step_fn(step: int) -> dict:
        metrics = trainer.step(step - 1)
        if step % config.eval_every == 0 or step == config.steps:
            metrics.update(trainer.evaluate(seed=step))
        return metrics

    run_steps(step_fn, config.steps, model=trainer.policy, run_dir=config.run_dir, plot_keys=config.plot_keys,
              plot_every=config.plot_every, callbacks=callbacks, desc=f"dpo beta={config.beta:g}", live=live,
              history=history, start_step=1)
    if "stats/kl_k1_seq" not in history[-1]:
        history[-1].update(trainer.evaluate(seed=len(history)))
    last = history[-1]
    history.meta.update({"kl": last["stats/kl_k1_seq"], "kl_se": last["stats/kl_k1_seq_se"], "gold": last["reward/gold"],
                         "gold_se": last["reward/gold_se"], "gold_start": history[0]["reward/gold"],
                         "ref_forwards": trainer.ref_forwards, "wall_s": time.perf_counter() - t0})
    history.trainer = trainer
    return history


def beta_sweep(betas: Sequence[float] = SWEEP_BETAS, config: DPOConfig | None = None, *, policy=None,
               tokenizer=None, task=None, sequence_logprobs: Callable | None = None,
               dpo_loss: Callable | None = None, live: bool | None = False) -> list[dict]:
    """Train a fresh copy of the SFT policy for each β; returns one row per β with the final ``kl``, ``gold``,
    their standard errors, the last implicit-reward accuracy and the history (for curves).

    Expectation (DPO paper Sec. 4 and Fig. 2): KL(π‖π_ref) falls as β grows.
    """
    import copy

    from rlprep.tinyworld import load_policy

    config = config or DPOConfig.for_profile()
    if policy is None:
        policy, tokenizer = load_policy("reviews", config.profile)
    rows = []
    for beta in betas:
        run_dir = config.run_dir and f"{config.run_dir}/beta={beta:g}"  # one folder per run of the sweep
        history = train_dpo(replace(config, beta=float(beta), run_dir=run_dir), policy=copy.deepcopy(policy),
                            tokenizer=tokenizer, task=task, sequence_logprobs=sequence_logprobs, dpo_loss=dpo_loss,
                            live=live)
        accuracy = history.last("reward/implicit_accuracy")
        rows.append({"beta": float(beta), **{k: history.meta[k] for k in ("kl", "kl_se", "gold", "gold_se")},
                     "gold_start": history.meta["gold_start"], "reward/implicit_accuracy": accuracy,
                     "interrupted": history.interrupted, "history": history})
        if history.interrupted:
            break
    return rows


if __name__ == "__main__":  # the same command as `rlprep train dpo ...` (errors, exit codes)
    import sys

    from rlprep.cli import main

    raise SystemExit(main(["train", "dpo", *sys.argv[1:]]))

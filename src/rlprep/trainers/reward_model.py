"""A GPT-2 reward model trained on the reviews preference pairs with a Bradley–Terry loss, plus best-of-N.

The model (as in InstructGPT, Ouyang et al. 2022, arXiv 2203.02155, Sec. 3.5): the transformer trunk of the
reviews SFT policy, with a scalar linear head read at the **last non-pad token** of ``prompt + completion + eos``.
Training minimises ``bradley_terry_loss(r_chosen, r_rejected)`` = mean −log σ(r_c − r_r)
(Bradley & Terry 1952; InstructGPT Eq. 1). Reported: held-out pairwise accuracy and the Pearson correlation
of RM scores with the task's hidden gold scorer.

:func:`best_of_n` samples N completions per prompt and keeps the one the RM likes best: the RM (proxy) reward
of the pick rises with N by construction, while its gold reward can flatten or fall — the best-of-n
overoptimisation curve of Gao et al. 2022 (arXiv 2210.10760, Fig. 1), and inference-time optimisation (G16).

Run: ``python -m rlprep.trainers.reward_model --profile cpu``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from rlprep.algos import reward_model as algos_reward_model
from rlprep.live import History, atomic_write_bytes, run_steps
from rlprep.profiles import Profile, get_profile
from rlprep.model_inputs import position_ids_from_mask
from rlprep.trainers.config import TrainerConfig
from rlprep.trainers.sequences import autocast, encode_pairs, resolve_device, seed_everything


class RewardModel(nn.Module):
    """GPT-2 trunk + scalar head on the last non-pad token. ``forward(input_ids [B, L], attention_mask [B, L]) -> [B]``."""

    def __init__(self, trunk: nn.Module, hidden_size: int):
        super().__init__()
        self.trunk = trunk
        self.head = nn.Linear(hidden_size, 1)
        self.max_length: int | None = getattr(getattr(trunk, "config", None), "n_positions", None)
        self.meta: dict = {}
        """Summary of the run that trained it (filled by :func:`load_reward_model`)."""
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(hidden_size + 1))
        nn.init.zeros_(self.head.bias)

    @classmethod
    def from_policy(cls, policy) -> "RewardModel":
        """A reward model whose trunk is a copy of ``policy.transformer`` (the SFT policy's GPT2Model)."""
        return cls(copy.deepcopy(policy.transformer), policy.config.n_embd)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        with autocast(input_ids.device):
            hidden = self.trunk(input_ids=input_ids, attention_mask=attention_mask,
                                position_ids=position_ids_from_mask(attention_mask)).last_hidden_state  # (B, L, H)
        L = attention_mask.shape[1]
        last = L - 1 - attention_mask.long().flip(-1).argmax(-1)  # (B,) index of the last non-pad token
        h_last = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]  # (B, H)
        return self.head(h_last.float()).squeeze(-1)  # (B,)

    @torch.no_grad()
    def score(self, tokenizer, prompts: list[str], completions: list[str], batch_size: int = 256) -> torch.Tensor:
        """RM scores ``[B]`` (on CPU) of ``prompt + completion + eos`` rows."""
        device = next(self.parameters()).device
        was_training = self.training
        self.eval()
        out = []
        for start in range(0, len(prompts), batch_size):
            ids, attn, _ = encode_pairs(tokenizer, prompts[start:start + batch_size],
                                        completions[start:start + batch_size], device, max_length=self.max_length)
            out.append(self(ids, attn).float().cpu())
        self.train(was_training)
        return torch.cat(out) if out else torch.zeros(0)


@dataclass
class RewardModelConfig(TrainerConfig):
    """Budget of one reward-model run. ``RewardModelConfig.for_profile("cpu")`` gives the lab's defaults."""

    steps: int = 40
    """Optimizer steps."""
    batch_size: int = 32
    """Preference pairs per step."""
    lr: float = 1e-4
    """AdamW learning rate (trunk and head)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    n_train_pairs: int = 2000
    """Training pairs drawn from ``preference_pairs(split="train")`` (cycled)."""
    n_eval_pairs: int = 400
    """Held-out pairs for accuracy and gold correlation."""
    eval_every: int = 20
    """Held-out evaluation every this many steps (and at the end)."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold."""
    plot_keys: tuple[str, ...] = ("loss/bt", "reward/rm_accuracy", "eval/accuracy", "eval/pearson_gold")
    """Metrics on the live plot."""

    def checks(self) -> list[tuple[bool, str]]:
        return super().checks() + [
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (self.weight_decay >= 0, f"weight_decay must be >= 0, got {self.weight_decay}"),
            (self.n_train_pairs >= self.batch_size,
             f"n_train_pairs ({self.n_train_pairs}) must be >= batch_size ({self.batch_size})"),
            (self.n_eval_pairs >= 2, f"n_eval_pairs must be >= 2 (correlation needs two points), got {self.n_eval_pairs}"),
            (self.eval_every >= 1, f"eval_every must be >= 1, got {self.eval_every}"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
        ]

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: seconds (above chance); cpu: about 83% held-out accuracy in ~2.5 min on 2 cores, against a
        label-noise ceiling of about 86% (:func:`label_ceiling`; docs/benchmarks.md, issue 4); gpu: more pairs
        and steps."""
        if p.name == "smoke":
            base = dict(steps=40, batch_size=32, lr=3e-4, n_train_pairs=1280, n_eval_pairs=200, eval_every=20)
        elif p.name == "cpu":
            base = dict(steps=600, batch_size=32, lr=3e-4, n_train_pairs=19200, n_eval_pairs=500, eval_every=100)
        else:
            base = dict(steps=int(150 * p.scale), batch_size=64, lr=5e-5, n_train_pairs=20000,
                        n_eval_pairs=2000, eval_every=100)
        return base


@torch.no_grad()
def evaluate_reward_model(rm: RewardModel, tokenizer, task, pairs) -> dict[str, float]:
    """Held-out metrics of ``rm`` on annotated ``pairs``.

    - ``eval/accuracy``: how often the RM prefers the annotator's choice (the labels are noisy: see
      :func:`label_ceiling` for the best any scorer can expect), with ``eval/accuracy_se`` = sqrt(a(1-a)/n);
    - ``eval/accuracy_gold``: how often the RM orders a pair like the hidden gold scorer (noise-free; gold ties
      are left out);
    - ``eval/pearson_gold``: Pearson r of RM scores with gold scores over all chosen and rejected completions.
    """
    prompts = [p.prompt for p in pairs]
    r_c = rm.score(tokenizer, prompts, [p.chosen for p in pairs]).numpy()
    r_r = rm.score(tokenizer, prompts, [p.rejected for p in pairs]).numpy()
    g_c = np.array([task.gold_score(p.prompt, p.chosen) for p in pairs])
    g_r = np.array([task.gold_score(p.prompt, p.rejected) for p in pairs])
    scores, gold = np.concatenate([r_c, r_r]), np.concatenate([g_c, g_r])
    pearson = float(np.corrcoef(scores, gold)[0, 1]) if scores.std() > 0 and gold.std() > 0 else float("nan")
    accuracy = float((r_c > r_r).mean())
    untied = g_c != g_r
    gold_order = np.sign(g_c - g_r)[untied] == np.sign(r_c - r_r)[untied]
    return {"eval/accuracy": accuracy, "eval/accuracy_se": math.sqrt(accuracy * (1 - accuracy) / len(pairs)),
            "eval/accuracy_gold": float(gold_order.mean()) if untied.any() else float("nan"),
            "eval/pearson_gold": pearson}


def label_ceiling(task, pairs, beta: float | None = None) -> dict[str, float]:
    """What a perfect reward model can score on noisy annotated ``pairs``: the accuracy ceiling.

    The annotators label with P(a preferred) = σ(β·(gold(a) − gold(b))), so even the gold scorer itself
    disagrees with a label with probability σ(−β|m|) on a pair of gold margin m. Returns
    ``{"ceiling/expected": E[σ(β|m|)] (the Bayes accuracy), "ceiling/gold_on_labels": the gold scorer's
    accuracy on these very labels (ties count 1/2), "ceiling/near_tied": fraction of pairs with |m| < 0.25}``.
    """
    if beta is None:
        from rlprep.tinyworld.tasks.reviews import ANNOTATOR_BETA as beta
    m = np.array([task.gold_score(p.prompt, p.chosen) - task.gold_score(p.prompt, p.rejected) for p in pairs])
    return {"ceiling/expected": float(np.mean(1.0 / (1.0 + np.exp(-beta * np.abs(m))))),
            "ceiling/gold_on_labels": float((m > 0).mean() + 0.5 * (m == 0).mean()),
            "ceiling/near_tied": float((np.abs(m) < 0.25).mean())}


def train_reward_model(config: RewardModelConfig | None = None, *, policy=None, tokenizer=None, task=None,
                       bradley_terry_loss: Callable | None = None, callbacks: Sequence[Callable] = (),
                       live: bool | None = None, desc: str = "reward_model") -> tuple[RewardModel, History]:
    """Train a reward model on the reviews preference pairs; returns ``(reward_model, history)``.

    ``bradley_terry_loss(chosen_rewards [B], rejected_rewards [B]) -> scalar`` defaults to the reference in
    ``rlprep.algos.reward_model``; a lab passes the learner's. ``history.meta`` holds the final
    ``eval/accuracy`` and ``eval/pearson_gold``. ``desc`` labels the progress bar and the live plot.
    """
    from rlprep.tinyworld import get_task, load_policy

    config = config or RewardModelConfig.for_profile()
    profile = get_profile(config.profile)
    device = resolve_device(config.device, profile)
    loss_fn = bradley_terry_loss or algos_reward_model.bradley_terry_loss
    seed_everything(config.seed)
    if policy is None:
        policy, tokenizer = load_policy("reviews", profile)
    task = task or get_task("reviews")
    rm = RewardModel.from_policy(policy).to(device).train()
    train_pairs = task.preference_pairs(config.n_train_pairs, split="train", seed=config.seed)
    eval_pairs = task.preference_pairs(config.n_eval_pairs, split="test", seed=config.seed + 1)
    optimizer = torch.optim.AdamW(rm.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    order = np.random.default_rng(config.seed).permutation(len(train_pairs))
    history = History(meta={"config": asdict(config), "trainer": "reward_model"})
    t0 = time.perf_counter()

    def step_fn(step: int) -> dict:
        start = ((step - 1) * config.batch_size) % len(order)
        idx = np.take(order, range(start, start + config.batch_size), mode="wrap")
        batch = [train_pairs[i] for i in idx]
        prompts = [p.prompt for p in batch] * 2
        completions = [p.chosen for p in batch] + [p.rejected for p in batch]
        ids, attn, _ = encode_pairs(tokenizer, prompts, completions, device,
                                    max_length=rm.max_length)  # (2B, L): chosen rows, then rejected
        rewards = rm(ids, attn)  # (2B,)
        r_c, r_r = rewards[:len(batch)], rewards[len(batch):]  # (B,), (B,)
        loss = loss_fn(r_c, r_r)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(rm.parameters(), config.max_grad_norm))
        optimizer.step()
        r_c, r_r = r_c.detach(), r_r.detach()
        metrics = {"loss/bt": float(loss.detach()), "reward/rm_accuracy": float((r_c > r_r).float().mean()),
                   "reward/rm_margin": float((r_c - r_r).mean()), "stats/grad_norm": grad_norm}
        if step % config.eval_every == 0 or step == config.steps:
            metrics.update(evaluate_reward_model(rm, tokenizer, task, eval_pairs))
        return metrics

    history.append({"step": 0, **evaluate_reward_model(rm, tokenizer, task, eval_pairs)})
    run_steps(step_fn, config.steps, model=rm, run_dir=config.run_dir, plot_keys=config.plot_keys,
              plot_every=config.plot_every, callbacks=callbacks, desc=desc, live=live,
              history=history, start_step=1)
    if "eval/accuracy" not in history[-1]:
        history[-1].update(evaluate_reward_model(rm, tokenizer, task, eval_pairs))
    history.meta.update({"loss_first": history[1]["loss/bt"] if len(history) > 1 else float("nan"),
                         "accuracy": history[-1]["eval/accuracy"], "accuracy_se": history[-1]["eval/accuracy_se"],
                         "accuracy_gold": history[-1]["eval/accuracy_gold"],
                         "pearson_gold": history[-1]["eval/pearson_gold"], **label_ceiling(task, eval_pairs),
                         "accuracy_start": history[0]["eval/accuracy"], "wall_s": time.perf_counter() - t0})
    rm.eval()
    return rm, history


def reward_model_path(profile: Profile, config: RewardModelConfig | None = None) -> Path:
    """Where :func:`load_reward_model` caches the reward model of ``config`` (default: the profile's) for ``profile``:
    the cache key hashes the config."""
    from rlprep.paths import cache_dir

    config = config or RewardModelConfig.for_profile(profile)
    key = hashlib.sha256(json.dumps(asdict(config), sort_keys=True, default=str).encode()).hexdigest()[:12]
    return cache_dir() / f"reward_model-{profile.name}-{key}.pt"


def load_reward_model(profile: str | Profile | None = None, *, policy=None, tokenizer=None,
                      config: RewardModelConfig | None = None, retrain: bool = False) -> RewardModel:
    """The reference-trained reward model for ``profile``, trained once and cached in ``cache_dir()``.

    The cache key hashes the config, so a different budget trains (and caches) a different model. The returned
    model carries ``rm.meta``: the training run's summary (held-out accuracy, Pearson r with gold, ...).
    """
    from rlprep.tinyworld import load_policy

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    config = config or RewardModelConfig.for_profile(p)
    if policy is None:
        policy, tokenizer = load_policy("reviews", p)
    path = reward_model_path(p, config)
    device = resolve_device(config.device, p)
    if path.exists() and not retrain:
        rm = RewardModel.from_policy(policy)
        saved = torch.load(path, map_location="cpu")
        rm.load_state_dict(saved["model"])
        rm.meta = saved.get("meta", {})
        return rm.to(device).eval()
    rm, history = train_reward_model(config, policy=policy, tokenizer=tokenizer, live=False)
    rm.meta = history.meta
    if not history.interrupted:
        import io

        buffer = io.BytesIO()
        torch.save({"model": {k: v.cpu() for k, v in rm.state_dict().items()}, "meta": history.meta}, buffer)
        atomic_write_bytes(path, buffer.getvalue())
    return rm


@torch.no_grad()
def best_of_n(policy, rm: RewardModel, tokenizer, prompts: list[str], ns: Sequence[int] = (1, 2, 4, 8, 16), *,
              task=None, max_new_tokens: int = 40, temperature: float = 1.0, seed: int = 0) -> dict[str, list]:
    """Best-of-N against the RM: for each N, keep the RM's favourite of N samples per prompt and average its
    RM (proxy) and gold reward over prompts.

    ``max(ns)`` completions are sampled once per prompt; best-of-N uses the first N of them (nested subsets, so
    the curves are smooth in N). Returns ``{"n", "reward/rm", "reward/gold", "reward/gold_se", "kl_bound"}``
    where ``kl_bound`` = log N − (N−1)/N is the analytic KL(best-of-N ‖ policy) (Stiennon et al. 2020,
    arXiv 2009.01325, App. G; used by Gao et al. 2022 as the x-axis of Fig. 1).
    """
    from rlprep.rollout import generate
    from rlprep.tinyworld import get_task

    ns = sorted(set(int(n) for n in ns))
    if not ns or ns[0] < 1:
        raise ValueError(f"ns must be positive integers, got {ns}")
    task = task or get_task("reviews")
    n_max = ns[-1]
    repeated = [p for p in prompts for _ in range(n_max)]  # (P*n_max,) consecutive groups
    was_training = policy.training
    policy.eval()
    out = generate(policy, tokenizer, repeated, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
    policy.train(was_training)
    rm_scores = rm.score(tokenizer, repeated, out.texts).view(len(prompts), n_max)  # (P, n_max)
    gold = torch.tensor([task.gold_score(p, t) for p, t in zip(repeated, out.texts)],
                        dtype=torch.float32).view(len(prompts), n_max)  # (P, n_max)
    result: dict[str, list] = {"n": ns, "reward/rm": [], "reward/gold": [], "reward/gold_se": [], "kl_bound": []}
    rows = torch.arange(len(prompts))
    for n in ns:
        best = rm_scores[:, :n].argmax(dim=1)  # (P,)
        gold_pick = gold[rows, best]  # (P,)
        result["reward/rm"].append(float(rm_scores[rows, best].mean()))
        result["reward/gold"].append(float(gold_pick.mean()))
        result["reward/gold_se"].append(float(gold_pick.std(unbiased=True) / math.sqrt(len(prompts)))
                                        if len(prompts) > 1 else float("nan"))
        result["kl_bound"].append(math.log(n) - (n - 1) / n)
    return result


if __name__ == "__main__":  # the same command as `rlprep train reward_model ...` (errors, exit codes)
    import sys

    from rlprep.cli import main

    raise SystemExit(main(["train", "reward_model", *sys.argv[1:]]))

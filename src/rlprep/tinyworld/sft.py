"""Supervised warm start (SFT): teach a fresh GPT-2 the task's format before any RL.

Loss: token-level cross-entropy on the action tokens only (the answer and its eos; in multi-turn transcripts
every action and its eos), never on the prompt or the environment's observations. AdamW with linear warmup
then cosine decay to 10% of the peak. Deterministic for a seed on the CPU: the data come from a
``random.Random(seed)`` and the initial weights from ``torch.manual_seed(seed)``, for a fixed torch thread count and
CPU instruction set (both change the order of float sums; ``checkpoints.build_checkpoint`` pins the thread count).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rlprep.tinyworld.transcript import render_transcript


@dataclass
class SFTConfig:
    """How long and how hard the warm start trains."""

    steps: int
    """Optimizer steps."""
    batch: int
    """Transcripts per step."""
    lr: float
    """Peak AdamW learning rate (reached after ``warmup`` steps)."""
    warmup: int = 100
    """Linear warmup steps (capped at a fifth of ``steps``)."""
    weight_decay: float = 0.01
    """AdamW decoupled weight decay."""
    grad_clip: float = 1.0
    """Max global gradient norm."""
    seed: int = 0
    """Seeds the data stream (the model's init is seeded by its builder)."""
    stop_after: int | None = None
    """Stop after this many steps of the ``steps``-long schedule (a snapshot of a run in progress, with the
    learning rate it had then); None trains the whole schedule. A shorter ``steps`` is a different run: its
    warmup and cosine decay are compressed."""

    def __post_init__(self):
        if self.steps < 1 or self.batch < 1:
            raise ValueError(f"SFTConfig needs steps >= 1 and batch >= 1, got steps={self.steps}, batch={self.batch}")
        if self.stop_after is not None and not 1 <= self.stop_after <= self.steps:
            raise ValueError(f"SFTConfig.stop_after must be None or in 1..steps={self.steps}, got {self.stop_after}")
        if not self.lr > 0:
            raise ValueError(f"SFTConfig.lr must be > 0, got {self.lr}")

    @property
    def warmup_steps(self) -> int:
        return max(1, min(self.warmup, self.steps // 5))


def lr_at(step: int, config: SFTConfig) -> float:
    """Learning rate at optimizer step ``step`` (0-based): linear warmup, then cosine to 0.1 x peak."""
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    return config.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def collate(tokenizer, transcripts) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-pad rendered transcripts: ``input_ids``, ``attention_mask``, ``loss_mask``, each [B, L].

    Right padding keeps each row's positions 0..len-1, the same numbering the left-padded rollouts get
    from their position ids.
    """
    rendered = [render_transcript(tokenizer, turns) for turns in transcripts]
    width = max(len(ids) for ids, _ in rendered)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in rendered])  # (B, L)
    attention_mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in rendered])
    loss_mask = torch.tensor([mask + [0] * (width - len(mask)) for _, mask in rendered])
    return input_ids, attention_mask, loss_mask


def sft_loss(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over positions where ``loss_mask`` is 1 (all [B, L])."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits[:, :-1]  # (B, L-1, V)
    targets = input_ids[:, 1:]  # (B, L-1)
    weights = loss_mask[:, 1:].float()  # (B, L-1): token t+1 is trained when it is an action token
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1), reduction="none")
    return (nll.view_as(weights) * weights).sum() / weights.sum().clamp(min=1.0)


def train_sft(model, tokenizer, task, config: SFTConfig,
              on_step: Callable[[int, float], None] | None = None,
              stop_when: Callable[[int], bool] | None = None) -> dict[str, float]:
    """Train ``model`` in place on ``task.sft_transcript(rng)`` samples; returns ``{"loss/sft_final": ...,
    "sft/steps": steps run}``.

    ``on_step(step, loss)`` is called after every optimizer step (for a progress bar); ``stop_when(step)``
    after it, and training ends early (the schedule is not compressed) the first time it returns True.
    """
    rng = random.Random(f"sft-{task.name}-{config.seed}")
    device = next(model.parameters()).device
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=config.lr, betas=(0.9, 0.95))
    model.train()
    recent: list[float] = []
    for step in range(config.stop_after or config.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, config)
        batch = collate(tokenizer, [task.sft_transcript(rng) for _ in range(config.batch)])
        loss = sft_loss(model, *(t.to(device) for t in batch))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        recent = (recent + [loss.item()])[-20:]
        if on_step is not None:
            on_step(step, recent[-1])
        if stop_when is not None and stop_when(step):
            break
    model.eval()
    return {"loss/sft_final": sum(recent) / len(recent), "sft/steps": step + 1}

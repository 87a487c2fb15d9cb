""""What colour is the <shape>?": a tiny VQA task with a co-occurrence prior, for hallucination (W28),
evaluation-set design (W32) and RL with a verifiable reward (G15).

Each item is a rendered shape plus a question naming its shape. In the *biased* world each shape usually has its
typical colour (circle -> red, square -> green, triangle -> blue, with probability ``typical_prob``), the way real
captions pair "banana" with "yellow". A model that reads the question learns that prior from text alone; when the
image is faint (low ``contrast``) or noisy, the prior wins and the model names the typical colour of a shape that
has another colour: an object-attribute hallucination caused by the language prior (POPE, Li et al. 2023,
arXiv 2305.10355, finds co-occurrence drives object hallucination).

The model is deliberately small (pooled pixels + a question embedding -> MLP -> colour logits) so every
experiment trains in about a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rlprep.live import History
from rlprep.multimodal.shapes import COLOUR_NAMES, SHAPES, render, sample_attributes

TYPICAL_COLOUR: dict[str, str] = {"circle": "red", "square": "green", "triangle": "blue"}
"""The colour each shape usually has in the biased world (the co-occurrence prior)."""


def prior_table(typical_prob: float) -> np.ndarray:
    """[3, 4] colour_given_shape: ``typical_prob`` on the typical colour, the rest spread evenly."""
    if not 0.0 <= typical_prob <= 1.0:
        raise ValueError(f"typical_prob must be in [0, 1], got {typical_prob}")
    table = np.full((len(SHAPES), len(COLOUR_NAMES)), (1 - typical_prob) / (len(COLOUR_NAMES) - 1))
    for s, shape in enumerate(SHAPES):
        table[s, COLOUR_NAMES.index(TYPICAL_COLOUR[shape])] = typical_prob
    return table


@dataclass
class QABatch:
    """Items of the colour question."""

    images: torch.Tensor
    """[N, 3, H, W] float32 in [0, 1]."""
    shape: torch.Tensor
    """[N] int64 index into SHAPES: the shape the question names."""
    colour: torch.Tensor
    """[N] int64 index into COLOUR_NAMES: the true answer."""
    contrast: torch.Tensor
    """[N] float32 contrast each image was rendered with (1 = vivid, 0 = invisible)."""

    @property
    def typical(self) -> torch.Tensor:
        """[N] bool: the item has its shape's typical colour (the prior and the image agree)."""
        return self.colour == typical_index(self.shape)


def typical_index(shape: torch.Tensor) -> torch.Tensor:
    """[N] shape indices -> [N] index of each shape's typical colour."""
    lookup = torch.tensor([COLOUR_NAMES.index(TYPICAL_COLOUR[s]) for s in SHAPES])
    return lookup[shape]


def make_qa(n: int, seed: int, typical_prob: float = 0.85, contrasts=(0.05, 0.1, 0.2, 0.4, 1.0),
            noise_std: float = 0.15, image_size: int = 24, counterfactual_only: bool = False) -> QABatch:
    """``n`` items, split evenly over ``contrasts``; ``counterfactual_only`` keeps only atypical colours."""
    rng = np.random.default_rng(seed)
    table = prior_table(0.0 if counterfactual_only else typical_prob)
    chunks, attrs_all, contrast_all = [], [], []
    for i, contrast in enumerate(contrasts):
        m = n // len(contrasts) + (1 if i < n % len(contrasts) else 0)
        attrs = sample_attributes(m, rng, table)  # (m, 4)
        chunks.append(render(attrs, image_size, contrast, noise_std, rng))
        attrs_all.append(attrs)
        contrast_all.append(np.full(m, contrast, np.float32))
    attrs = np.concatenate(attrs_all)
    return QABatch(torch.from_numpy(np.concatenate(chunks)), torch.from_numpy(attrs[:, 0]),
                   torch.from_numpy(attrs[:, 1]), torch.from_numpy(np.concatenate(contrast_all)))


class ColourQA(nn.Module):
    """Image (average-pooled to ``pooled`` x ``pooled``) + question (shape embedding) -> colour logits [N, 4].

    ``use_image=False`` gives the blind, text-only baseline (the language prior alone).
    """

    def __init__(self, pooled: int = 6, hidden: int = 64, use_image: bool = True):
        super().__init__()
        self.pooled, self.use_image = pooled, use_image
        self.question = nn.Embedding(len(SHAPES), hidden)
        self.vision = nn.Linear(3 * pooled * pooled, hidden) if use_image else None
        self.mlp = nn.Sequential(nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, len(COLOUR_NAMES)))

    def pool(self, images: torch.Tensor) -> torch.Tensor:
        """[N, 3, H, W] -> [N, 3, pooled, pooled] (a no-op on images already pooled, so callers can pool once)."""
        return images if images.shape[-1] == self.pooled else F.adaptive_avg_pool2d(images, self.pooled)

    def forward(self, images: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
        """images [N, 3, H, W] (or already pooled), shape [N] -> logits [N, 4]."""
        h = self.question(shape)  # (N, hidden)
        if self.use_image:
            pooled = self.pool(images).flatten(1)  # (N, 3*pooled*pooled)
            h = h + self.vision(pooled - 0.5)
        return self.mlp(h)


def train_supervised(data: QABatch, use_image: bool = True, steps: int = 300, lr: float = 1e-2, seed: int = 0) -> ColourQA:
    """Full-batch AdamW on cross-entropy; returns the trained model."""
    torch.manual_seed(seed)
    model = ColourQA(use_image=use_image)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-3)
    pooled = model.pool(data.images)  # (N, 3, p, p), once
    for _ in range(steps):
        loss = F.cross_entropy(model(pooled, data.shape), data.colour)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model


@torch.no_grad()
def answer(model: ColourQA, data: QABatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy answers [N] and their probabilities [N]."""
    probs = model(data.images, data.shape).softmax(-1)  # (N, 4)
    conf, pred = probs.max(-1)
    return pred, conf


@torch.no_grad()
def hallucination_by_contrast(model: ColourQA, data: QABatch, abstain_below: float = 0.0) -> dict[float, dict]:
    """Per contrast level, on atypical items: ``hallucination`` (answers the shape's typical colour, which is
    not in the image), ``accuracy``, ``abstained`` (confidence below ``abstain_below``); shares of all items.
    Keys are the contrast levels rounded to 4 decimals."""
    pred, conf = answer(model, data)
    abstain = conf < abstain_below
    atypical = ~data.typical
    out = {}
    for c in sorted(set(data.contrast.tolist())):
        sel = atypical & (data.contrast == c)
        n = max(int(sel.sum()), 1)
        said_typical = (pred == typical_index(data.shape)) & ~abstain
        out[round(c, 4)] = {"hallucination": float((said_typical & sel).sum()) / n,
                  "accuracy": float(((pred == data.colour) & ~abstain & sel).sum()) / n,
                  "abstained": float((abstain & sel).sum()) / n}
    return out


def grpo_train(prompts: QABatch, steps: int = 150, group_size: int = 8, prompts_per_step: int = 64,
               lr: float = 3e-3, seed: int = 0, eval_data: QABatch | None = None) -> tuple[ColourQA, History]:
    """RL with a verifiable reward (1 if the sampled colour is right): GRPO's group-normalized advantages
    (``rlprep.algos.grpo.group_advantages``, DeepSeekMath arXiv 2402.03300) on a one-token answer, one update per
    batch through ``rlprep.trainers.grpo_update.grpo_update`` (``grpo_loss`` on ``[N*G, 1]`` log-probs; the ratio
    is 1, so the clipped objective reduces to the policy gradient), no KL term, no gradient clipping.

    The :class:`~rlprep.live.History` has a row every ``steps // 10`` steps and at the end: ``step``,
    ``eval/accuracy`` and ``eval/counterfactual_accuracy`` (greedy, on ``eval_data`` when given, else on the
    prompts), plus (except the last) ``reward/mean``, ``stats/frac_zero_std_groups`` (share of the step's groups
    whose G rewards are all equal: their advantages are exactly 0, so they add nothing to the gradient) and the
    update's stats (``stats/grad_norm``, ...) of the step taken from there.
    """
    from rlprep.algos.grpo import group_advantages
    from rlprep.algos.pg_losses import pg_clip
    from rlprep.trainers.grpo_update import grpo_update

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = ColourQA()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    eval_data = eval_data or prompts
    pooled = model.pool(prompts.images)  # (N, 3, p, p), once
    log = History(meta={"trainer": "colour_qa_grpo", "steps": steps, "group_size": group_size, "lr": lr})
    for step in range(steps + 1):
        if step % max(steps // 10, 1) == 0 or step == steps:
            pred, _ = answer(model, eval_data)
            correct = pred == eval_data.colour
            log.append({"step": step, "eval/accuracy": float(correct.float().mean()),
                        "eval/counterfactual_accuracy": float(correct[~eval_data.typical].float().mean())})
        if step == steps:
            break
        idx = torch.randint(0, len(prompts.shape), (prompts_per_step,), generator=gen)  # (N,)
        logits = model(pooled[idx], prompts.shape[idx])  # (N, 4)
        dist = torch.distributions.Categorical(logits=logits.repeat_interleave(group_size, 0))  # N*G samples
        actions = dist.sample()  # (N*G,) groups consecutive
        rewards = (actions == prompts.colour[idx].repeat_interleave(group_size)).float()  # (N*G,) verifiable
        adv = group_advantages(rewards, group_size)  # (N*G,)
        logp = dist.log_prob(actions).unsqueeze(1)  # (N*G, 1): a one-token completion
        update = grpo_update(model, opt, logp, logp.detach(), adv, torch.ones_like(logp), aggregation="token",
                             clip=pg_clip("grpo"), max_grad_norm=math.inf)
        grouped = rewards.view(-1, group_size)  # (N, G)
        zero_variance = float((grouped.amax(1) == grouped.amin(1)).float().mean())
        for key, value in {"reward/mean": float(rewards.mean()), "stats/frac_zero_std_groups": zero_variance,
                           **update}.items():
            log[-1].setdefault(key, value)
    return model, log

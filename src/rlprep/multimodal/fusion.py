"""Multi-image fusion for a note with several images (W31): cover only, mean pooling, text-guided attention pooling.

Task ("is there a <colour> <shape>?"): a note holds 1..K images, each one shape; the answer is yes when any image
shows the asked combination. Each image is encoded independently (a shared encoder: intra-image), the note is
pooled into one vector (inter-image), and a head combines it with the question. Attention pooling uses the
question as the query over the image embeddings, with a padding mask for notes with fewer images; its weights show
where the pooled vector's weight went, not by themselves which image the prediction used (near-duplicates split it;
removing or swapping an image tests use). Cf. the core of pooling by multihead attention (Set Transformer, Lee et al.
2019, arXiv 1810.00825).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rlprep.multimodal.shapes import COLOUR_NAMES, SHAPES, render, sample_attributes

POOLINGS = ("cover", "mean", "attention")


@dataclass
class NoteBatch:
    """Notes of up to K images each, padded."""

    images: torch.Tensor
    """[N, K, 3, p, p] float32 images average-pooled to p x p (padding slots are zeros)."""
    mask: torch.Tensor
    """[N, K] bool, True where an image exists (slot 0, the cover, always does)."""
    query: torch.Tensor
    """[N, 2] int64 (shape, colour) asked about."""
    label: torch.Tensor
    """[N] float32 1.0 when some image shows the asked shape in the asked colour."""
    where: torch.Tensor
    """[N] int64 slot of the matching image, -1 when the answer is no."""


def make_notes(n: int, max_images: int, seed: int, image_size: int = 24, pooled: int = 6,
               noise_std: float = 0.05) -> NoteBatch:
    """``n`` notes with 1..max_images images (uniform); half the answers are yes, the match at a random slot."""
    if max_images < 1 or n < 1:
        raise ValueError(f"need n >= 1 and max_images >= 1; got {n}, {max_images}")
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, max_images + 1, n)  # (N,) images per note
    attrs = sample_attributes(n * max_images, rng).reshape(n, max_images, 4)  # (N, K, 4)
    mask = np.arange(max_images)[None, :] < counts[:, None]  # (N, K)
    label = rng.random(n) < 0.5
    where = np.where(label, (rng.random(n) * counts).astype(np.int64), -1)  # (N,)
    query = np.stack([rng.integers(0, len(SHAPES), n), rng.integers(0, len(COLOUR_NAMES), n)], 1)  # (N, 2)
    for i in range(n):  # make the answer true at `where`, false everywhere else
        for k in range(counts[i]):
            hit = (attrs[i, k, 0], attrs[i, k, 1]) == tuple(query[i])
            if k == where[i] and not hit:
                attrs[i, k, :2] = query[i]
            elif k != where[i] and hit:
                attrs[i, k, 1] = (attrs[i, k, 1] + 1 + rng.integers(0, len(COLOUR_NAMES) - 1)) % len(COLOUR_NAMES)
    imgs = render(attrs.reshape(-1, 4), image_size, 1.0, noise_std, rng)  # (N*K, 3, H, W)
    imgs = F.adaptive_avg_pool2d(torch.from_numpy(imgs), pooled).view(n, max_images, 3, pooled, pooled)
    imgs = imgs * torch.from_numpy(mask)[:, :, None, None, None]
    return NoteBatch(imgs, torch.from_numpy(mask), torch.from_numpy(query), torch.from_numpy(label.astype(np.float32)),
                     torch.from_numpy(where))


class NoteClassifier(nn.Module):
    """Per-image encoder -> pooling over images -> head([note vector, question]) -> yes/no logit.

    Args:
        pooling: ``cover`` (first image only), ``mean`` (masked mean) or ``attention`` (question-guided).
        pooled: side of the pooled input images.
        width: embedding width.
    """

    def __init__(self, pooling: str = "attention", pooled: int = 6, width: int = 64):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.pooling, self.width = pooling, width
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * pooled * pooled, width), nn.GELU(), nn.Linear(width, width))
        self.shape_emb, self.colour_emb = nn.Embedding(len(SHAPES), width), nn.Embedding(len(COLOUR_NAMES), width)
        self.w_q, self.w_k = nn.Linear(width, width), nn.Linear(width, width)
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.GELU(), nn.Linear(width, 1))

    def forward(self, notes: NoteBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (logits [N], weights [N, K] over images; zero on padding)."""
        n, k = notes.mask.shape
        emb = self.encoder(notes.images.flatten(0, 1)).view(n, k, self.width)  # (N, K, W) intra-image
        q = self.shape_emb(notes.query[:, 0]) * self.colour_emb(notes.query[:, 1])  # (N, W) the question
        if self.pooling == "cover":
            weights = F.one_hot(torch.zeros(n, dtype=torch.int64), k).float()  # (N, K)
        elif self.pooling == "mean":
            weights = notes.mask.float() / notes.mask.sum(1, keepdim=True)  # (N, K)
        else:
            scores = torch.einsum("nw,nkw->nk", self.w_q(q), self.w_k(emb)) / math.sqrt(self.width)  # (N, K)
            weights = scores.masked_fill(~notes.mask, float("-inf")).softmax(-1)  # (N, K), 0 on padding
        note = torch.einsum("nk,nkw->nw", weights, emb)  # (N, W) inter-image pooling
        return self.head(torch.cat([note, q], -1)).squeeze(-1), weights


def train_notes(pooling: str, train: NoteBatch, steps: int = 300, lr: float = 3e-3, batch_size: int = 256,
                seed: int = 0) -> NoteClassifier:
    """Minibatch AdamW on binary cross-entropy."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = NoteClassifier(pooling)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for _ in range(steps):
        idx = torch.randint(0, len(train.label), (batch_size,), generator=gen)
        part = NoteBatch(train.images[idx], train.mask[idx], train.query[idx], train.label[idx], train.where[idx])
        loss = F.binary_cross_entropy_with_logits(model(part)[0], part.label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model


@torch.no_grad()
def note_accuracy(model: NoteClassifier, notes: NoteBatch) -> float:
    """Share of notes answered correctly."""
    return float(((model(notes)[0] > 0).float() == notes.label).float().mean())

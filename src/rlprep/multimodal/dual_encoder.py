"""A tiny CLIP-style dual encoder on the synthetic shapes (lab07_infonce).

An image encoder (3 strided convolutions + a linear head) and a caption encoder (word + position embeddings, an
MLP) map into one D-dimensional space; training minimises the symmetric InfoNCE loss of CLIP (Radford et al.
2021, arXiv 2103.00020, Fig. 3), injectable so the lab can pass the learner's ``infonce_loss``.
The temperature is fixed, or learned in log space as in CLIP (Sec. 2.5): ``logit_scale = log(1/τ)`` initialised
at ``log(1/0.07)``, clipped so that ``exp(logit_scale) <= 100`` after every step.

Evaluation: ``recall_at_1`` retrieves, for each test image, the best of the 96 distinct captions
(3 shapes x 4 colours x 2 sizes x 4 positions); chance is 1/96.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import product
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from rlprep.multimodal import shapes
from rlprep.profiles import Profile, ProfileConfig


@dataclass
class DualEncoderConfig(ProfileConfig):
    """One dual-encoder training run. ``DualEncoderConfig.for_profile("cpu")`` gives the lab's budget."""

    embed_dim: int = 32
    """D: size of the shared embedding space."""
    steps: int = 150
    """AdamW steps."""
    batch_size: int = 64
    """Image-caption pairs per step (B); the other B - 1 captions of the batch are the negatives."""
    lr: float = 3e-3
    """AdamW learning rate (constant)."""
    temperature: float = 0.07
    """τ of the loss when it is fixed; the initial τ when ``learnable_temperature``."""
    learnable_temperature: bool = False
    """Learn log(1/τ) as a parameter (CLIP), starting from ``temperature``."""
    max_logit_scale: float = 100.0
    """Cap on 1/τ when it is learned (CLIP clips the logit scale at 100)."""
    n_train: int = 2048
    """Training images (rendered once)."""
    n_test: int = 512
    """Held-out images for recall@1."""
    image_size: int = 32
    """Side of the square images, in pixels."""
    noise_std: float = 0.05
    """Pixel noise of the rendered images (0-1 scale)."""
    seed: int = 0
    """Seeds data, initialisation and batch order."""

    def checks(self) -> list[tuple[bool, str]]:
        return [
            (self.embed_dim >= 2, f"embed_dim must be >= 2, got {self.embed_dim}"),
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (2 <= self.batch_size <= self.n_train, f"batch_size must be in [2, n_train], got {self.batch_size}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (self.temperature > 0, f"temperature must be > 0, got {self.temperature}"),
            (self.max_logit_scale >= 1, f"max_logit_scale must be >= 1, got {self.max_logit_scale}"),
            (not self.learnable_temperature or self.temperature * self.max_logit_scale >= 1,
             f"the initial 1/temperature exceeds max_logit_scale {self.max_logit_scale}: start at a temperature "
             f">= {1 / self.max_logit_scale:.3g}"),
            (self.n_test >= 1, f"n_test must be >= 1, got {self.n_test}"),
            (self.image_size >= 16, f"image_size must be >= 16 pixels (three stride-2 convolutions), "
                                    f"got {self.image_size}"),
        ]

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: a second or two per run (CI); cpu: the lab's runs on 2 cores; gpu: longer."""
        if p.name == "smoke":
            base = dict(steps=120, n_train=1024, n_test=256)
        elif p.name == "cpu":
            base = dict(steps=600, n_train=4096, n_test=1024)
        else:
            base = dict(steps=2000, n_train=16384, n_test=2048, batch_size=256)
        return base


class ImageEncoder(nn.Module):
    """[N, 3, S, S] images -> [N, D] embeddings (unnormalised). Flattening keeps where the shape is."""

    def __init__(self, embed_dim: int, image_size: int = 32, width: int = 16):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
        )
        side = math.ceil(image_size / 8)
        self.head = nn.Linear(2 * width * side * side, embed_dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        feats = self.convs(images)  # (N, 2w, S/8, S/8)
        return self.head(feats.flatten(1))  # (N, D)


class TextEncoder(nn.Module):
    """[N, L] caption token ids -> [N, D]: word + position embeddings, flattened, a 2-layer MLP."""

    def __init__(self, embed_dim: int, length: int = shapes.CAPTION_LEN, vocab: int = len(shapes.VOCAB),
                 width: int = 32):
        super().__init__()
        self.words = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.zeros(length, width))
        self.mlp = nn.Sequential(nn.Linear(length * width, 128), nn.ReLU(), nn.Linear(128, embed_dim))

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        x = self.words(token_ids) + self.positions  # (N, L, width)
        return self.mlp(x.flatten(1))  # (N, D)


class DualEncoder(nn.Module):
    """The two towers plus ``logit_scale`` = log(1/τ) (a parameter only when the temperature is learned)."""

    def __init__(self, config: DualEncoderConfig):
        super().__init__()
        self.config = config
        self.image_encoder = ImageEncoder(config.embed_dim, config.image_size)
        self.text_encoder = TextEncoder(config.embed_dim)
        scale = torch.tensor(math.log(1.0 / config.temperature))
        if config.learnable_temperature:
            self.logit_scale = nn.Parameter(scale)
        else:
            self.register_buffer("logit_scale", scale)

    def temperature(self) -> torch.Tensor:
        """τ = 1 / exp(logit_scale), a scalar tensor (differentiable when learned)."""
        return torch.exp(-self.logit_scale)

    def clamp_logit_scale(self) -> None:
        """CLIP's cap: exp(logit_scale) <= max_logit_scale (applied after each optimizer step)."""
        with torch.no_grad():
            self.logit_scale.clamp_(max=math.log(self.config.max_logit_scale))

    def forward(self, images: torch.Tensor, token_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.image_encoder(images), self.text_encoder(token_ids)


def all_captions() -> tuple[list[str], torch.Tensor]:
    """The 96 distinct captions and their token ids [96, L], in attribute order."""
    attrs = list(product(*(range(k) for k in shapes.N_VALUES)))
    captions = [shapes.caption_of(a) for a in attrs]
    ids = torch.tensor([shapes.encode(c) for c in captions], dtype=torch.long)  # (96, L)
    return captions, ids


@torch.no_grad()
def recall_at_1(model: DualEncoder, batch: shapes.ShapeBatch) -> float:
    """Fraction of ``batch`` images whose nearest caption (cosine, among all 96) is their own caption."""
    model.eval()
    captions, ids = all_captions()
    img = F.normalize(model.image_encoder(torch.from_numpy(batch.images)), dim=-1)  # (N, D)
    txt = F.normalize(model.text_encoder(ids), dim=-1)  # (96, D)
    best = (img @ txt.T).argmax(dim=1)  # (N,)
    index = {c: i for i, c in enumerate(captions)}
    truth = torch.tensor([index[c] for c in batch.captions])  # (N,)
    model.train()
    return float((best == truth).float().mean())


def train_dual_encoder(config: DualEncoderConfig, loss_fn: Callable | None = None,
                       data: tuple[shapes.ShapeBatch, shapes.ShapeBatch] | None = None,
                       eval_every: int = 0) -> tuple[DualEncoder, dict[str, list[float]]]:
    """Train a dual encoder with ``loss_fn(image_emb, text_emb, temperature)`` (default: the reference InfoNCE).

    Returns the model and a flat history: ``loss`` and ``temperature`` per step, ``recall@1`` (test) at the end
    and every ``eval_every`` steps (with ``eval_step``), and ``wall_s``.
    ``data = (train, test)`` reuses rendered shapes across runs (rendering is the slow part).
    """
    if loss_fn is None:
        from rlprep.algos.infonce import infonce_loss as loss_fn
    torch.manual_seed(config.seed)
    start = time.perf_counter()
    train, test = data or make_data(config)
    model = DualEncoder(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)
    images, tokens = torch.from_numpy(train.images), torch.from_numpy(train.token_ids)
    gen = torch.Generator().manual_seed(config.seed)
    history: dict[str, list[float]] = {"loss": [], "temperature": [], "eval_step": [], "recall@1": []}
    for step in range(config.steps):
        idx = torch.randperm(len(train), generator=gen)[:config.batch_size]  # (B,)
        image_emb, text_emb = model(images[idx], tokens[idx])  # (B, D) each
        tau = model.temperature() if config.learnable_temperature else config.temperature
        loss = loss_fn(image_emb, text_emb, tau)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if config.learnable_temperature:
            model.clamp_logit_scale()
        history["loss"].append(float(loss.detach()))
        history["temperature"].append(float(model.temperature().detach()))
        if eval_every and (step + 1) % eval_every == 0 and step + 1 < config.steps:
            history["eval_step"].append(step + 1)
            history["recall@1"].append(recall_at_1(model, test))
    history["eval_step"].append(config.steps)
    history["recall@1"].append(recall_at_1(model, test))
    history["wall_s"] = [time.perf_counter() - start]
    return model, history


def make_data(config: DualEncoderConfig) -> tuple[shapes.ShapeBatch, shapes.ShapeBatch]:
    """(train, test) shapes for ``config`` (different seeds, same rendering knobs)."""
    train = shapes.make_shapes(config.n_train, config.image_size, seed=config.seed, noise_std=config.noise_std)
    test = shapes.make_shapes(config.n_test, config.image_size, seed=config.seed + 1, noise_std=config.noise_std)
    return train, test


def gradient_profile(image_emb: torch.Tensor, text_emb: torch.Tensor, temperatures, loss_fn: Callable | None = None
                     ) -> dict[str, list[float]]:
    """How the InfoNCE gradient changes with τ, on fixed embeddings ``[B, D]`` (e.g. of a trained model).

    For each τ: ``loss``; ``grad_norm`` = ||∂loss/∂image_emb|| (Frobenius); ``p_positive`` = mean softmax
    probability of the matching caption (row-wise, image->text); ``hardest_share`` = mean over rows of the
    largest negative probability divided by the total negative probability (1 = all the push goes to one
    negative, 1/(B-1) = spread evenly); ``effective_negatives`` = mean exp(entropy) of the negatives'
    renormalised softmax (how many negatives get pushed).
    """
    if loss_fn is None:
        from rlprep.algos.infonce import infonce_loss as loss_fn
    out: dict[str, list[float]] = {k: [] for k in ("temperature", "loss", "grad_norm", "p_positive",
                                                   "hardest_share", "effective_negatives")}
    B = image_emb.shape[0]
    off_diag = ~torch.eye(B, dtype=torch.bool)  # (B, B)
    for tau in temperatures:
        img = image_emb.detach().clone().requires_grad_(True)
        loss = loss_fn(img, text_emb.detach(), float(tau))
        (grad,) = torch.autograd.grad(loss, img)
        with torch.no_grad():
            u, v = F.normalize(image_emb.double(), dim=-1), F.normalize(text_emb.double(), dim=-1)  # (B, D)
            logits = u @ v.T / tau  # (B, B)
            probs = logits.softmax(dim=1)  # (B, B) image -> text
            neg_logp = logits[off_diag].view(B, B - 1).log_softmax(dim=1)  # (B, B-1) over the negatives only
            neg_norm = neg_logp.exp()  # (B, B-1)
            entropy = -(neg_norm * neg_logp).sum(dim=1)  # (B,)
        out["temperature"].append(float(tau))
        out["loss"].append(float(loss.detach()))
        out["grad_norm"].append(float(grad.norm()))
        out["p_positive"].append(float(probs.diagonal().mean()))
        out["hardest_share"].append(float(neg_norm.max(dim=1).values.mean()))
        out["effective_negatives"].append(float(entropy.exp().mean()))
    return out

"""A tiny captioning VLM: the test bed that compares connectors on the shapes data (W26, W27).

``TinyVLM`` is the LLaVA recipe at toy scale: a patch encoder (stand-in for the ViT), a connector from
``rlprep.multimodal.connectors``, and a small causal transformer that reads ``[visual tokens; <bos>; caption]``
as one sequence (input-level fusion) and is trained by next-token cross-entropy on the caption. Evaluation asks
two things: does it name the right words (size, colour, shape, position), and does the true caption get a higher
likelihood than captions with one attribute changed (matching by likelihood, which needs binding, not a bag of
words)?
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rlprep.multimodal.connectors import CONNECTORS, MLPProjector, PerceiverResampler, QFormer
from rlprep.multimodal.shapes import (BOS_ID, CAPTION_LEN, VOCAB, ShapeBatch, caption_of, encode, make_shapes,
                                      perturb_one_attribute)


class PatchEncoder(nn.Module):
    """A ViT in miniature: non-overlapping patches, a linear embedding, position embeddings, transformer layers.

    images [B, 3, H, W] -> features [B, P, D_v] with P = (H / patch)².
    """

    def __init__(self, image_size: int = 32, patch: int = 4, d_vision: int = 64, n_layers: int = 1, n_heads: int = 4):
        super().__init__()
        if image_size % patch:
            raise ValueError(f"patch={patch} must divide image_size={image_size}")
        self.patch = patch
        self.n_patches = (image_size // patch) ** 2
        self.embed = nn.Linear(3 * patch * patch, d_vision)
        self.pos = nn.Parameter(0.02 * torch.randn(self.n_patches, d_vision))  # (P, D_v)
        layer = nn.TransformerEncoderLayer(d_vision, n_heads, 4 * d_vision, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False) if n_layers else nn.Identity()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        b, c, _, _ = images.shape
        p = self.patch
        patches = images.unfold(2, p, p).unfold(3, p, p)  # (B, C, H/p, W/p, p, p)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)  # (B, P, C*p*p)
        return self.blocks(self.embed(patches) + self.pos)  # (B, P, D_v)


class TinyVLM(nn.Module):
    """Patch encoder -> connector -> causal LM over [visual tokens; <bos>; caption] -> next-token logits.

    Trained like LLaVA: next-token cross-entropy on the caption tokens only, the image entering as a prefix of
    visual tokens in the same sequence (input-level fusion).

    Args:
        connector: ``"mlp"``, ``"qformer"`` or ``"resampler"``.
        image_size, patch: image side and patch side in pixels (P = (image_size / patch)² patches).
        d_vision, d_model: widths of the vision features and of the LM.
        n_lm_layers, n_heads: LM depth and heads.
        n_queries: queries (Q-Former) or latents (resampler); ignored by the MLP (one token per patch).
        n_vision_layers: transformer layers of the patch encoder (0: patch embedding only).
    """

    def __init__(self, connector: str = "mlp", image_size: int = 24, patch: int = 6, d_vision: int = 32,
                 d_model: int = 32, n_lm_layers: int = 2, n_heads: int = 4, n_queries: int = 4,
                 n_vision_layers: int = 1):
        super().__init__()
        if connector not in CONNECTORS:
            raise ValueError(f"connector must be one of {sorted(CONNECTORS)}, got {connector!r}")
        self.image_size = image_size
        self.vision = PatchEncoder(image_size, patch, d_vision, n_vision_layers, n_heads)
        if connector == "mlp":
            self.connector = MLPProjector(d_vision, d_model)
        elif connector == "qformer":
            self.connector = QFormer(d_vision, d_model, n_queries=n_queries, d_hidden=d_model, n_layers=1,
                                     n_heads=n_heads)
        else:
            self.connector = PerceiverResampler(d_vision, d_model, n_latents=n_queries, n_layers=1, n_heads=n_heads)
        self.n_visual = self.connector.num_tokens(self.vision.n_patches)
        seq_len = self.n_visual + 1 + CAPTION_LEN
        self.tok = nn.Embedding(len(VOCAB), d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(seq_len, d_model))  # (L, D)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.lm = nn.TransformerEncoder(layer, n_lm_layers, enable_nested_tensor=False)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(seq_len), persistent=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, len(VOCAB)))

    def forward(self, images: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
        """images [B, 3, H, W], caption token_ids [B, CAPTION_LEN] -> logits [B, CAPTION_LEN, V].

        ``logits[:, t]`` predicts caption token t from the visual tokens and the caption tokens before t.
        """
        visual = self.connector(self.vision(images))  # (B, N_v, D)
        bos = torch.full((token_ids.shape[0], 1), BOS_ID, dtype=token_ids.dtype, device=token_ids.device)
        text = self.tok(torch.cat([bos, token_ids], dim=1))  # (B, 1 + CAPTION_LEN, D)
        h = torch.cat([visual, text], dim=1) + self.pos  # (B, L, D): visual tokens first, as in LLaVA
        h = self.lm(h, mask=self.causal, is_causal=True)  # (B, L, D)
        return self.head(h[:, self.n_visual:-1])  # (B, CAPTION_LEN, V): positions <bos> .. second-to-last word

    def caption_logprob(self, images: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
        """Sum of log p(caption token | image, prefix) over the caption: [B]."""
        logp = self(images, token_ids).log_softmax(-1)  # (B, T, V)
        return logp.gather(-1, token_ids.unsqueeze(-1)).squeeze(-1).sum(-1)  # (B,)


CONTENT_POSITIONS = (1, 2, 3, 6, 7)
"""Caption positions of the words that depend on the image: size, colour, shape, top/bottom, left/right
(``"a {size} {colour} {shape} at the {vertical} {horizontal}"``)."""


def caption_loss(logits: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy over every caption token: logits [B, T, V], token_ids [B, T] -> scalar."""
    return F.cross_entropy(logits.flatten(0, 1), token_ids.flatten())


@torch.no_grad()
def evaluate(model: TinyVLM, batch: ShapeBatch, n_distractors: int = 3, seed: int = 0) -> dict:
    """Held-out metrics (flat dict): ``eval/word_accuracy`` (teacher-forced argmax on the five image-dependent
    words, chance 1/2..1/4), ``eval/match_accuracy`` (the true caption scores the highest log-likelihood among
    itself and ``n_distractors`` captions with one attribute changed; chance 1/(n_distractors + 1))."""
    was_training = model.training
    model.eval()
    images, ids = torch.from_numpy(batch.images), torch.from_numpy(batch.token_ids)
    pred = model(images, ids).argmax(-1)  # (B, T)
    cols = list(CONTENT_POSITIONS)
    word_acc = float((pred[:, cols] == ids[:, cols]).float().mean())
    rng = np.random.default_rng(seed)
    scores = [model.caption_logprob(images, ids)]  # true caption first
    for _ in range(n_distractors):
        wrong = perturb_one_attribute(batch.attributes, rng)  # (B, 4)
        wrong_ids = torch.tensor(np.array([encode(caption_of(a)) for a in wrong]), dtype=torch.int64)
        scores.append(model.caption_logprob(images, wrong_ids))
    match_acc = float((torch.stack(scores, 1).argmax(1) == 0).float().mean())  # (B,) true caption wins
    model.train(was_training)
    return {"eval/word_accuracy": word_acc, "eval/match_accuracy": match_acc}


@dataclass
class MatchConfig:
    """Budget and model of one captioning run (the connector comparison of notebook 11)."""

    connector: str = "mlp"
    """``mlp``, ``qformer`` or ``resampler``."""
    steps: int = 300
    """AdamW steps."""
    batch_size: int = 32
    """Images per step, drawn from a fixed training pool."""
    lr: float = 1e-3
    """AdamW learning rate (constant; 3e-3 left the compressing connectors at chance for 600 steps)."""
    n_queries: int = 8
    """Queries / latents of the compressing connectors (the MLP keeps one token per patch)."""
    train_pool: int = 2048
    """Distinct training images (rendered once)."""
    eval_size: int = 256
    """Held-out images (a disjoint seed)."""
    eval_every: int = 50
    """Evaluate every this many steps (and at the end)."""
    seed: int = 0
    """Seeds the model init, the pool and the batch order."""

    def __post_init__(self):
        if self.connector not in CONNECTORS:
            raise ValueError(f"connector must be one of {sorted(CONNECTORS)}, got {self.connector!r}")
        if min(self.steps, self.batch_size, self.train_pool, self.eval_size, self.eval_every, self.n_queries) < 1 \
                or not self.lr > 0:
            raise ValueError("steps, batch_size, train_pool, eval_size, eval_every and n_queries must be >= 1, lr > 0")


def train_captioner(cfg: MatchConfig) -> tuple[TinyVLM, list[dict]]:
    """Train a TinyVLM on the shapes captions; returns the model and a log of flat dicts
    (``step``, ``loss/caption`` averaged since the last entry, and the ``evaluate`` metrics)."""
    torch.manual_seed(cfg.seed)
    model = TinyVLM(cfg.connector, n_queries=cfg.n_queries)
    pool = make_shapes(cfg.train_pool, image_size=model.image_size, seed=cfg.seed)
    held_out = make_shapes(cfg.eval_size, image_size=model.image_size, seed=10_000 + cfg.seed)
    images, ids = torch.from_numpy(pool.images), torch.from_numpy(pool.token_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(cfg.seed)
    log = [{"step": 0, "loss/caption": float("nan"), **evaluate(model, held_out)}]
    losses = []
    for step in range(1, cfg.steps + 1):
        idx = torch.randint(0, len(pool), (cfg.batch_size,), generator=gen)  # (B,)
        loss = caption_loss(model(images[idx], ids[idx]), ids[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % cfg.eval_every == 0 or step == cfg.steps:
            log.append({"step": step, "loss/caption": float(np.mean(losses)), **evaluate(model, held_out)})
            losses = []
    return model, log

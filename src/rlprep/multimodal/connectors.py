"""Vision-language connectors: how a vision encoder's patch features become tokens a language model can read.

Three families, small enough to train on a CPU (W26, W27):
- ``MLPProjector``: LLaVA-1.5 (Liu et al. 2023, arXiv 2310.03744, Sec. 3.2): a 2-layer MLP with GELU applied to
  every patch feature; one visual token per patch. LLaVA (arXiv 2304.08485, Eq. 1: H_v = W · Z_v) used one
  linear layer (``n_layers=1`` here).
- ``QFormer``: BLIP-2 (Li et al. 2023, arXiv 2301.12597, Sec. 3.1): learnable queries that self-attend and
  cross-attend to frozen image features, then a linear layer into the LLM's embedding space; the output token
  count is the number of queries (32 in the paper), whatever the number of patches. (The paper's Q-Former also
  shares its self-attention with text in stage 1 and inserts cross-attention every other block; this one
  cross-attends in every block and has no text branch.)
- ``PerceiverResampler``: Flamingo (Alayrac et al. 2022, arXiv 2204.14198, Sec. 2.1 and Fig. 5 pseudocode):
  learnable latents attend to the concatenation of the (time-embedded) visual features and themselves; the
  output is a fixed number of tokens (64 in the paper) for any number of images or frames.
- ``GatedCrossAttention``: Flamingo's GATED XATTN-DENSE block (Fig. 4): text tokens cross-attend to visual
  tokens inside the LM, scaled by tanh(alpha) with alpha = 0 at initialization, so the block starts as identity.

Shapes: B batch, P patches per image, T images (frames), D_v vision width, D model (LM) width, Q queries / latents.
"""

from __future__ import annotations

import torch
from torch import nn


def count_parameters(module: nn.Module) -> int:
    """Number of trainable parameters of ``module``."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


class MLPProjector(nn.Module):
    """Per-patch projection into the LM embedding space (LLaVA-1.5: Linear -> GELU -> Linear).

    Args:
        d_vision: width D_v of the vision features.
        d_model: width D of the LM embeddings.
        n_layers: 2 for LLaVA-1.5's MLP, 1 for the original LLaVA's linear map.
        d_hidden: hidden width of the MLP (default ``d_model``, as in LLaVA-1.5).
    """

    def __init__(self, d_vision: int, d_model: int, n_layers: int = 2, d_hidden: int | None = None):
        super().__init__()
        if n_layers not in (1, 2):
            raise ValueError(f"n_layers must be 1 (LLaVA linear) or 2 (LLaVA-1.5 MLP), got {n_layers}")
        d_hidden = d_hidden or d_model
        self.net = nn.Linear(d_vision, d_model) if n_layers == 1 else nn.Sequential(
            nn.Linear(d_vision, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_model))

    def num_tokens(self, n_patches: int, n_images: int = 1) -> int:
        """Visual tokens handed to the LM: one per patch per image."""
        return n_patches * n_images

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """feats: [B, P, D_v] (or [B, T, P, D_v], flattened to T*P tokens) -> [B, P (or T*P), D]."""
        if feats.ndim == 4:
            feats = feats.flatten(1, 2)  # (B, T*P, D_v)
        return self.net(feats)  # (B, P, D)


class _FeedForward(nn.Sequential):
    def __init__(self, width: int, mult: int = 4):
        super().__init__(nn.LayerNorm(width), nn.Linear(width, mult * width), nn.GELU(), nn.Linear(mult * width, width))


class _QFormerLayer(nn.Module):
    """Self-attention among the queries, cross-attention from the queries to the image features, FFN (pre-LN)."""

    def __init__(self, d_hidden: int, d_vision: int, n_heads: int):
        super().__init__()
        self.ln_self, self.ln_cross = nn.LayerNorm(d_hidden), nn.LayerNorm(d_hidden)
        self.self_attn = nn.MultiheadAttention(d_hidden, n_heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_hidden, n_heads, kdim=d_vision, vdim=d_vision, batch_first=True)
        self.ffn = _FeedForward(d_hidden)

    def forward(self, q: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        h = self.ln_self(q)
        q = q + self.self_attn(h, h, h, need_weights=False)[0]  # (B, Q, H)
        q = q + self.cross_attn(self.ln_cross(q), feats, feats, need_weights=False)[0]  # (B, Q, H)
        return q + self.ffn(q)


class QFormer(nn.Module):
    """BLIP-2-style querying transformer: ``n_queries`` learnable queries read the image by cross-attention.

    Args:
        d_vision: width D_v of the (frozen) image features.
        d_model: width D of the LM embeddings (the final linear projection's output).
        n_queries: number of learnable queries = visual tokens out (BLIP-2: 32).
        d_hidden: width of the queries inside the Q-Former (BLIP-2: 768, BERT-base).
        n_layers: transformer layers (BLIP-2 initializes its Q-Former from BERT-base).
        n_heads: attention heads (must divide ``d_hidden``).
    """

    def __init__(self, d_vision: int, d_model: int, n_queries: int = 32, d_hidden: int = 768, n_layers: int = 2,
                 n_heads: int = 4):
        super().__init__()
        if n_queries < 1 or d_hidden % n_heads:
            raise ValueError(f"need n_queries >= 1 and n_heads dividing d_hidden; got {n_queries}, {d_hidden}, {n_heads}")
        self.queries = nn.Parameter(0.02 * torch.randn(n_queries, d_hidden))  # (Q, H)
        self.ln_feats = nn.LayerNorm(d_vision)
        self.layers = nn.ModuleList(_QFormerLayer(d_hidden, d_vision, n_heads) for _ in range(n_layers))
        self.ln_out = nn.LayerNorm(d_hidden)
        self.proj = nn.Linear(d_hidden, d_model)  # BLIP-2's fully-connected layer into the LLM's input space

    def num_tokens(self, n_patches: int, n_images: int = 1) -> int:
        """Visual tokens handed to the LM: the number of queries, whatever the number of patches or images."""
        return self.queries.shape[0]

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """feats: [B, P, D_v] (or [B, T, P, D_v], flattened) -> [B, Q, D]."""
        if feats.ndim == 4:
            feats = feats.flatten(1, 2)  # (B, T*P, D_v)
        feats = self.ln_feats(feats)
        q = self.queries.unsqueeze(0).expand(feats.shape[0], -1, -1)  # (B, Q, H)
        for layer in self.layers:
            q = layer(q, feats)
        return self.proj(self.ln_out(q))  # (B, Q, D)


class _PerceiverLayer(nn.Module):
    """Latents attend to concat(visual features, latents) (Flamingo Fig. 5), then a feed-forward block."""

    def __init__(self, d_vision: int, n_heads: int):
        super().__init__()
        self.ln_feats, self.ln_latents = nn.LayerNorm(d_vision), nn.LayerNorm(d_vision)
        self.attn = nn.MultiheadAttention(d_vision, n_heads, batch_first=True)
        self.ffn = _FeedForward(d_vision)

    def forward(self, latents: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        h = self.ln_latents(latents)  # (B, Q, D_v)
        kv = torch.cat([self.ln_feats(feats), h], dim=1)  # (B, T*P + Q, D_v)
        latents = latents + self.attn(h, kv, kv, need_weights=False)[0]  # (B, Q, D_v)
        return latents + self.ffn(latents)


class PerceiverResampler(nn.Module):
    """Flamingo's Perceiver Resampler: ``n_latents`` learnable latents summarize any number of images/frames.

    Args:
        d_vision: width D_v of the vision features (the latents live in this width, as in Flamingo).
        d_model: width D of the LM embeddings (a final linear map; Flamingo instead feeds the latents to its
            gated cross-attention layers, see ``GatedCrossAttention``).
        n_latents: number of latents = visual tokens out (Flamingo: 64).
        n_layers: resampler layers.
        n_heads: attention heads (must divide ``d_vision``).
        max_frames: number of learned time embeddings (images or frames per example).
    """

    def __init__(self, d_vision: int, d_model: int, n_latents: int = 64, n_layers: int = 2, n_heads: int = 4,
                 max_frames: int = 8):
        super().__init__()
        if n_latents < 1 or d_vision % n_heads:
            raise ValueError(f"need n_latents >= 1 and n_heads dividing d_vision; got {n_latents}, {d_vision}, {n_heads}")
        self.latents = nn.Parameter(0.02 * torch.randn(n_latents, d_vision))  # (Q, D_v)
        self.time_emb = nn.Parameter(torch.zeros(max_frames, 1, d_vision))  # (T_max, 1, D_v)
        self.layers = nn.ModuleList(_PerceiverLayer(d_vision, n_heads) for _ in range(n_layers))
        self.ln_out = nn.LayerNorm(d_vision)
        self.proj = nn.Linear(d_vision, d_model)

    def num_tokens(self, n_patches: int, n_images: int = 1) -> int:
        """Visual tokens handed to the LM: the number of latents, for any number of patches or images."""
        return self.latents.shape[0]

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """feats: [B, P, D_v] (one image) or [B, T, P, D_v] (T images/frames) -> [B, Q, D]."""
        if feats.ndim == 3:
            feats = feats.unsqueeze(1)  # (B, 1, P, D_v)
        if feats.shape[1] > self.time_emb.shape[0]:
            raise ValueError(f"{feats.shape[1]} frames but max_frames={self.time_emb.shape[0]}; raise max_frames")
        feats = (feats + self.time_emb[: feats.shape[1]]).flatten(1, 2)  # (B, T*P, D_v)
        latents = self.latents.unsqueeze(0).expand(feats.shape[0], -1, -1)  # (B, Q, D_v)
        for layer in self.layers:
            latents = layer(latents, feats)
        return self.proj(self.ln_out(latents))  # (B, Q, D)


class GatedCrossAttention(nn.Module):
    """Flamingo's GATED XATTN-DENSE block, inserted before a (frozen) LM layer.

    y = x + tanh(alpha_xattn) * CrossAttn(x, visual);  y = y + tanh(alpha_dense) * FFW(y)
    (Alayrac et al. 2022, arXiv 2204.14198, Fig. 4). Both alphas start at 0, so at initialization the block is
    the identity and the LM's text-only behaviour is untouched.

    Args:
        d_model: width D of the text hidden states.
        d_visual: width of the visual tokens (e.g. the resampler's latents).
        n_heads: attention heads (must divide ``d_model``).
    """

    def __init__(self, d_model: int, d_visual: int, n_heads: int = 4):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, kdim=d_visual, vdim=d_visual, batch_first=True)
        self.ffn = _FeedForward(d_model)
        self.alpha_xattn = nn.Parameter(torch.zeros(()))
        self.alpha_dense = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor, visual: torch.Tensor) -> torch.Tensor:
        """x: [B, L, D] text hidden states; visual: [B, Q, D_visual] -> [B, L, D]."""
        x = x + torch.tanh(self.alpha_xattn) * self.attn(self.ln(x), visual, visual, need_weights=False)[0]
        return x + torch.tanh(self.alpha_dense) * self.ffn(x)


CONNECTORS = {"mlp": MLPProjector, "qformer": QFormer, "resampler": PerceiverResampler}
"""Name -> connector class, for the experiments and the notebook."""

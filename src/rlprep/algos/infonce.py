"""Contrastive image-text loss for lab07_infonce (CLIP's symmetric InfoNCE)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def infonce_loss(image_emb: torch.Tensor, text_emb: torch.Tensor, temperature: float = 0.07) -> torch.Tensor:
    """Symmetric InfoNCE: mean of the image->text and text->image cross-entropies with targets arange(B).

    CLIP (Radford et al. 2021, arXiv 2103.00020), Figure 3 pseudocode: L2-normalize both embeddings,
    logits = img @ txt^T / tau, loss = (CE(logits, labels) + CE(logits^T, labels)) / 2; InfoNCE itself is
    van den Oord et al. 2018 (arXiv 1807.03748), Eq. 4. Row i of each input is one matched pair.

    Args:
        image_emb: [B, D] image embeddings (any scale: normalized here).
        text_emb: [B, D] text embeddings of the captions of the same B images, same order.
        temperature: tau > 0; the logit scale is 1 / tau.

    Returns:
        Scalar tensor.
    """
    if image_emb.ndim != 2 or image_emb.shape != text_emb.shape:
        raise ValueError(f"image_emb and text_emb must both be [B, D]; got {tuple(image_emb.shape)} and "
                         f"{tuple(text_emb.shape)}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if torch.isnan(image_emb).any() or torch.isnan(text_emb).any():
        raise ValueError("embeddings contain NaN: check the encoders")
    image_n = F.normalize(image_emb, dim=-1)  # (B, D), unit rows
    text_n = F.normalize(text_emb, dim=-1)  # (B, D)
    logits = image_n @ text_n.T / temperature  # (B, B): logits[i, j] = sim(image i, text j) / tau
    targets = torch.arange(logits.shape[0], device=logits.device)  # (B,) the diagonal is the positive
    return 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.T, targets))

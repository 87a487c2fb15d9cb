"""Honest variants of infonce_loss."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("log_softmax_diagonals", "the diagonals of row- and column-wise log_softmax", source='''
        import torch


        def infonce_loss(image_emb, text_emb, temperature=0.07):
            if image_emb.shape != text_emb.shape or image_emb.dim() != 2:
                raise ValueError("both embeddings must be [B, D]")
            if temperature <= 0:
                raise ValueError("temperature must be > 0")
            if torch.isnan(image_emb).any() or torch.isnan(text_emb).any():
                raise ValueError("NaN")
            a = image_emb / image_emb.norm(dim=1, keepdim=True)
            b = text_emb / text_emb.norm(dim=1, keepdim=True)
            s = a @ b.T / temperature
            i2t = -torch.log_softmax(s, dim=1).diagonal().mean()
            t2i = -torch.log_softmax(s, dim=0).diagonal().mean()
            return (i2t + t2i) / 2
        '''),
    Edit("cosine_similarity", "F.cosine_similarity on broadcast pairs", source='''
        import torch
        import torch.nn.functional as F


        def infonce_loss(image_emb, text_emb, temperature=0.07):
            if image_emb.ndim != 2 or image_emb.shape != text_emb.shape:
                raise ValueError("shapes")
            if not temperature > 0:
                raise ValueError("temperature")
            if image_emb.isnan().any() or text_emb.isnan().any():
                raise ValueError("nan")
            sim = F.cosine_similarity(image_emb[:, None, :], text_emb[None, :, :], dim=-1, eps=0.0) / temperature
            labels = torch.arange(sim.shape[0])
            return (F.cross_entropy(sim, labels) + F.cross_entropy(sim.t(), labels)) * 0.5
        '''),
]

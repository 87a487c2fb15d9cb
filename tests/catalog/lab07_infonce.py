"""Known bugs for lab07_infonce: ``infonce_loss(image_emb, text_emb, temperature=0.07)``."""

import torch
import torch.nn.functional as F


def nce_temperature_before_normalization(image_emb, text_emb, temperature=0.07):
    """Temperature applied to the embeddings before L2 normalization, which then cancels it (tau has no effect)."""
    i = F.normalize(image_emb / temperature, dim=-1)
    t = F.normalize(text_emb / temperature, dim=-1)
    logits = i @ t.T
    y = torch.arange(len(logits))
    return 0.5 * (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y))


def nce_one_direction(image_emb, text_emb, temperature=0.07):
    """Only the image->text cross-entropy."""
    logits = F.normalize(image_emb, dim=-1) @ F.normalize(text_emb, dim=-1).T / temperature
    return F.cross_entropy(logits, torch.arange(len(logits)))


def nce_no_normalization(image_emb, text_emb, temperature=0.07):
    """No L2 normalization: dot products of raw embeddings."""
    logits = image_emb @ text_emb.T / temperature
    y = torch.arange(len(logits))
    return 0.5 * (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y))


def nce_times_temperature(image_emb, text_emb, temperature=0.07):
    """Multiplies by the temperature instead of dividing."""
    logits = F.normalize(image_emb, dim=-1) @ F.normalize(text_emb, dim=-1).T * temperature
    y = torch.arange(len(logits))
    return 0.5 * (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y))


def nce_sum_of_directions(image_emb, text_emb, temperature=0.07):
    """Sums the two directions instead of averaging them."""
    logits = F.normalize(image_emb, dim=-1) @ F.normalize(text_emb, dim=-1).T / temperature
    y = torch.arange(len(logits))
    return F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y)


def nce_normalize_wrong_dim(image_emb, text_emb, temperature=0.07):
    """Normalizes each embedding dimension over the batch (dim=0) instead of each row."""
    logits = F.normalize(image_emb, dim=0) @ F.normalize(text_emb, dim=0).T / temperature
    y = torch.arange(len(logits))
    return 0.5 * (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y))


BUGS = {
    "infonce_loss": [nce_temperature_before_normalization, nce_one_direction, nce_no_normalization,
                     nce_times_temperature, nce_sum_of_directions, nce_normalize_wrong_dim],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_nce_logsumexp(image_emb, text_emb, temperature=0.07):
    """Explicit log-sum-exp over rows and columns of the similarity matrix."""
    i = image_emb / image_emb.norm(dim=1, keepdim=True)
    t = text_emb / text_emb.norm(dim=1, keepdim=True)
    s = i @ t.T / temperature
    diag = s.diagonal()
    i2t = (torch.logsumexp(s, dim=1) - diag).mean()
    t2i = (torch.logsumexp(s, dim=0) - diag).mean()
    return (i2t + t2i) / 2


ALTERNATIVES = {"infonce_loss": [alt_nce_logsumexp]}

"""Catalogued bugs of infonce_loss."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("no_normalisation", "uses raw dot products: the scale of the embeddings leaks into the logits",
         {"image_n = F.normalize(image_emb, dim=-1)  # (B, D), unit rows": "image_n = image_emb",
          "text_n = F.normalize(text_emb, dim=-1)  # (B, D)": "text_n = text_emb"}),
    Edit("one_direction", "only the image-to-text cross-entropy",
         {"0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.T, targets))": "F.cross_entropy(logits, targets)"}),
    Edit("multiplies_temperature", "multiplies by the temperature",
         {"image_n @ text_n.T / temperature": "image_n @ text_n.T * temperature"}),
    Edit("normalises_columns", "normalises over the batch dimension",
         {"image_n = F.normalize(image_emb, dim=-1)": "image_n = F.normalize(image_emb, dim=0)",
          "text_n = F.normalize(text_emb, dim=-1)": "text_n = F.normalize(text_emb, dim=0)"}),
    Edit("second_term_not_transposed", "computes the same direction twice",
         {"F.cross_entropy(logits.T, targets)": "F.cross_entropy(logits, targets)"}),
    Edit("accepts_zero_temperature", "does not check the temperature",
         {"if not temperature > 0:": "if temperature < 0:"}),
]

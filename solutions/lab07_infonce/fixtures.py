"""Hidden cases of lab07 (InfoNCE): seeded embedding batches and the reference ``infonce_loss`` on them.

``main`` is a batch of 5 pairs and its loss at three temperatures; ``rescaled`` is the same batch with very
different row norms (same loss as ``main`` at tau = 0.1); ``grad`` is a batch of 6 pairs with the loss and its
gradients at tau = 0.2. The lab's hidden tests write ``infonce_loss({{ main.image }}, {{ main.text }}, 0.1)``
and compare with ``{{ main.loss_tau01 }}``.
"""

from __future__ import annotations

import torch

from rlprep.algos.infonce import infonce_loss
from rlprep.grading.asserts import value_and_grad


def fixtures() -> dict:
    g = torch.Generator().manual_seed(20261130)

    def draw(*shape, scale=1.0):
        return torch.round(torch.randn(*shape, generator=g, dtype=torch.float64) * scale * 1000) / 1000

    img, txt = draw(5, 4, scale=2.0), draw(5, 4, scale=0.3)  # (5, 4) each
    img6, txt6 = draw(6, 3, scale=5.0), draw(6, 3)  # (6, 3) each
    value, grads = value_and_grad(infonce_loss, wrt=("image_emb", "text_emb"), image_emb=img6, text_emb=txt6,
                                  temperature=0.2)
    return {
        "main": {"image": img, "text": txt, "loss_tau01": float(infonce_loss(img, txt, 0.1)),
                 "loss_tau007": float(infonce_loss(img, txt, 0.07)), "loss_tau1": float(infonce_loss(img, txt, 1.0))},
        "rescaled": {"image": img * 25.0, "text": txt * 0.01},
        "grad": {"image": img6, "text": txt6, "loss": float(value), "grad_image": grads["image_emb"],
                 "grad_text": grads["text_emb"]},
    }

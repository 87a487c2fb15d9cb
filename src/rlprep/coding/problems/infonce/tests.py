"""Hidden properties of infonce_loss, compared with transformers' CLIP loss (image_text_contrastive_loss)."""

import math

import torch
import torch.nn.functional as F
from transformers.models.clip.modeling_clip import image_text_contrastive_loss as clip_loss

from rlprep.coding.testkit import Properties, close, raises, randn, vg

P = Properties()


def _emb(size, salt):
    return randn(size, size["B"], size["D"], salt=salt), randn(size, size["B"], size["D"], salt=salt + 1)


def _clip(img, txt, tau):
    logits_per_text = F.normalize(txt, dim=-1) @ F.normalize(img, dim=-1).T / tau
    return clip_loss(logits_per_text)


def examples(size):
    eye = torch.eye(2)
    return [dict(image_emb=eye, text_emb=eye, temperature=1.0),
            dict(image_emb=torch.tensor([[1.0, 0.0], [1.0, 1.0]]), text_emb=torch.tensor([[2.0, 0.0], [0.0, 3.0]]),
                 temperature=size["tau"])]


@P.prop("matches transformers' CLIP loss (image_text_contrastive_loss)", library="transformers image_text_contrastive_loss")
def _(f, ref, size):
    img, txt = _emb(size, 1)
    close(f(image_emb=img, text_emb=txt, temperature=size["tau"]), _clip(img, txt, size["tau"]), rtol=1e-9,
          atol=1e-12)


@P.prop("is symmetric in images and texts and uses both directions")
def _(f, ref, size):
    img, txt = _emb(size, 2)
    img = img + torch.linspace(0, 2, size["B"], dtype=torch.float64)[:, None]  # an asymmetric similarity matrix
    a = f(image_emb=img, text_emb=txt, temperature=size["tau"])
    close(f(image_emb=txt, text_emb=img, temperature=size["tau"]), a, rtol=1e-9, atol=1e-12)
    close(a, _clip(img, txt, size["tau"]), rtol=1e-9, atol=1e-12)


@P.prop("normalises the embeddings (any scale per row)")
def _(f, ref, size):
    img, txt = _emb(size, 3)
    scales = torch.logspace(-2, 2, size["B"], dtype=torch.float64)[:, None]
    close(f(image_emb=img * scales, text_emb=txt * scales.flip(0), temperature=size["tau"]),
          _clip(img, txt, size["tau"]), rtol=1e-9, atol=1e-12)


@P.prop("divides by the temperature; identical orthogonal pairs give log(1 + (B-1) e^{-1/tau})")
def _(f, ref, size):
    eye = torch.eye(size["B"], size["B"] + 1, dtype=torch.float64)
    for tau in (1.0, 0.5):
        close(f(image_emb=eye, text_emb=eye, temperature=tau), math.log(1 + (size["B"] - 1) * math.exp(-1 / tau)),
              rtol=1e-9, atol=1e-12)


@P.prop("has the CLIP loss's gradient; raises ValueError for temperature <= 0 or mismatched shapes")
def _(f, ref, size):
    img, txt = _emb(size, 4)
    value, grads = vg(f, ["image_emb", "text_emb"], image_emb=img, text_emb=txt, temperature=size["tau"])
    a, b = img.clone().requires_grad_(True), txt.clone().requires_grad_(True)
    _clip(a, b, size["tau"]).backward()
    close(grads, {"image_emb": a.grad, "text_emb": b.grad}, rtol=1e-7, atol=1e-10)
    raises(ValueError, f, image_emb=img, text_emb=txt, temperature=0.0)
    raises(ValueError, f, image_emb=img, text_emb=txt[:-1], temperature=size["tau"])

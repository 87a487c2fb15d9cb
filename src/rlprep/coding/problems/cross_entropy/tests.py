"""Hidden properties of cross_entropy, compared with torch.nn.functional.cross_entropy."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, randint, randn, vg

P = Properties()


def _batch(size, salt, ignore=None, frac=3):
    logits = randn(size, size["N"], size["C"], salt=salt, scale=2.0)
    targets = randint(size, 0, size["C"], size["N"], salt=salt + 1)
    if ignore is not None:
        targets[::frac] = ignore
    return logits, targets


def _torch(logits, targets, ignore, eps=0.0):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore,
                           label_smoothing=eps)


def examples(size):
    logits = torch.tensor([[2.0, 0.5, -1.0], [0.0, 0.0, 0.0], [1.0, 3.0, 0.0]])
    return [dict(logits=logits, targets=torch.tensor([0, 2, 1])),
            dict(logits=logits, targets=torch.tensor([0, size["ignore"], 1]), ignore_index=size["ignore"],
                 label_smoothing=size["eps"])]


@P.prop("matches F.cross_entropy without ignored positions or smoothing", library="torch.nn.functional.cross_entropy")
def _(f, ref, size):
    logits, targets = _batch(size, 1)
    close(f(logits=logits, targets=targets), _torch(logits, targets, -100), rtol=1e-9, atol=1e-12)


@P.prop("leaves ignore_index positions out of the sum and the count (any ignore value)")
def _(f, ref, size):
    for ignore in (size["ignore"], 2):
        logits, targets = _batch(size, 2, ignore=ignore)
        close(f(logits=logits, targets=targets, ignore_index=ignore), _torch(logits, targets, ignore), rtol=1e-9,
              atol=1e-12)


@P.prop("matches F.cross_entropy's label smoothing with ignored positions", library="torch.nn.functional.cross_entropy")
def _(f, ref, size):
    logits, targets = _batch(size, 3, ignore=size["ignore"], frac=2)
    close(f(logits=logits, targets=targets, ignore_index=size["ignore"], label_smoothing=size["eps"]),
          _torch(logits, targets, size["ignore"], size["eps"]), rtol=1e-9, atol=1e-12)


@P.prop("takes [B, T, V] logits with the classes on the last dim")
def _(f, ref, size):
    logits = randn(size, 2, size["N"], size["C"], salt=4)
    targets = randint(size, 0, size["C"], 2, size["N"], salt=5)
    targets[0, -2:] = size["ignore"]
    close(f(logits=logits, targets=targets, ignore_index=size["ignore"]), _torch(logits, targets, size["ignore"]),
          rtol=1e-9, atol=1e-12)


@P.prop("stays finite and exact for logits of size 1e4")
def _(f, ref, size):
    logits, targets = _batch(size, 6)
    logits = (logits * 5e3).float()
    close(f(logits=logits, targets=targets, label_smoothing=size["eps"]),
          _torch(logits.double(), targets, -100, size["eps"]), rtol=1e-4, atol=1e-2)


@P.prop("has torch's gradient with respect to the logits")
def _(f, ref, size):
    logits, targets = _batch(size, 7, ignore=size["ignore"])
    value, grads = vg(f, ["logits"], logits=logits, targets=targets, ignore_index=size["ignore"],
                      label_smoothing=size["eps"])
    x = logits.clone().requires_grad_(True)
    _torch(x, targets, size["ignore"], size["eps"]).backward()
    close(value, _torch(logits, targets, size["ignore"], size["eps"]), rtol=1e-9, atol=1e-12)
    close(grads["logits"], x.grad, rtol=1e-7, atol=1e-10)

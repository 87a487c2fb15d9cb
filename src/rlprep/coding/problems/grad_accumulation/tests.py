"""Hidden properties of accumulated_grad, compared with autograd on the full batch's F.cross_entropy."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, expect, randint, randn

P = Properties()


def _batch(size, salt, ignore=-100, B=None):
    B, T, D, V = B or size["B"], size["T"], size["D"], size["V"]
    weight, hidden = randn(size, V, D, salt=salt), randn(size, B, T, D, salt=salt + 1)
    targets = randint(size, 0, V, B, T, salt=salt + 2)
    for b in range(B):  # prompts of different lengths: uneven valid-token counts
        targets[b, : (2 * b) % T] = ignore
    targets[0, 0] = 1 if ignore != 1 else 2
    return weight, hidden, targets


def _full(weight, hidden, targets, ignore=-100):
    w = weight.clone().requires_grad_(True)
    loss = F.cross_entropy((hidden @ w.T).reshape(-1, w.shape[0]), targets.reshape(-1), ignore_index=ignore)
    loss.backward()
    return w.grad, float(loss.detach())


def _run(f, *args, **kw):
    out = f(*args, **kw)
    expect(isinstance(out, (tuple, list)) and len(out) == 2, "expected (grad, loss)")
    return out[0], float(out[1])


def examples(size):
    w = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    h = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.5, 0.5]]])
    return [dict(weight=w, hidden=h, targets=torch.tensor([[0, 1], [2, -100]]), micro_batch_size=1),
            dict(weight=w, hidden=h, targets=torch.tensor([[-100, 1], [2, 0]]), micro_batch_size=size["mbs"])]


@P.prop("equals the full batch's gradient with uneven token counts", library="torch.nn.functional.cross_entropy")
def _(f, ref, size):
    w, h, t = _batch(size, 1)
    close(_run(f, weight=w, hidden=h, targets=t, micro_batch_size=size["mbs"]), _full(w, h, t), rtol=1e-9,
          atol=1e-12)


@P.prop("any micro-batch size gives the same gradient and loss")
def _(f, ref, size):
    w, h, t = _batch(size, 4)
    want = _full(w, h, t)
    for mbs in (1, size["B"], size["B"] + 3):
        close(_run(f, weight=w, hidden=h, targets=t, micro_batch_size=mbs), want, rtol=1e-9, atol=1e-12)


@P.prop("includes the last, smaller micro-batch")
def _(f, ref, size):
    w, h, t = _batch(size, 7, B=size["B"] + 1)
    close(_run(f, weight=w, hidden=h, targets=t, micro_batch_size=2), _full(w, h, t), rtol=1e-9, atol=1e-12)


@P.prop("counts only the valid tokens, for any ignore_index")
def _(f, ref, size):
    w, h, t = _batch(size, 10, ignore=1)
    close(_run(f, weight=w, hidden=h, targets=t, micro_batch_size=size["mbs"], ignore_index=1), _full(w, h, t, 1),
          rtol=1e-9, atol=1e-12)

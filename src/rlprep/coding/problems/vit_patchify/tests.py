"""Hidden properties of patchify, compared with F.unfold and a Conv2d patch embedding."""

import torch
import torch.nn.functional as F

from rlprep.coding.testkit import Properties, close, raises, randn

P = Properties()


def _img(size, salt):
    return randn(size, size["B"], size["C"], size["H"], size["W"], salt=salt)


def examples(size):
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    return [dict(images=x, patch_size=2), dict(images=torch.arange(24.0).reshape(1, 2, 3, 4)[:, :, :2], patch_size=2)]


@P.prop("matches F.unfold with kernel and stride p", library="torch.nn.functional.unfold")
def _(f, ref, size):
    x, p = _img(size, 1), size["p"]
    close(f(images=x, patch_size=p), F.unfold(x, kernel_size=p, stride=p).transpose(1, 2), rtol=0, atol=0)


@P.prop("a matmul with the flattened weight equals ViT's Conv2d patch embedding", library="torch.nn.Conv2d")
def _(f, ref, size):
    x, p = _img(size, 2), size["p"]
    conv = torch.nn.Conv2d(size["C"], 5, p, stride=p, bias=False).double()
    with torch.no_grad():
        conv.weight.copy_(randn(size, 5, size["C"], p, p, salt=3))
        want = conv(x).flatten(2).transpose(1, 2)
    got = torch.as_tensor(f(images=x, patch_size=p), dtype=torch.float64)
    close(got @ conv.weight.detach().reshape(5, -1).T, want, rtol=1e-9, atol=1e-12)


@P.prop("orders the patches row by row on a non-square image")
def _(f, ref, size):
    x = randn(size, 1, size["C"], 2 * size["p"], 5 * size["p"], salt=4)
    close(f(images=x, patch_size=size["p"]), F.unfold(x, size["p"], stride=size["p"]).transpose(1, 2), rtol=0, atol=0)


@P.prop("patch size 1 and whole-image patches are the edge cases")
def _(f, ref, size):
    x = _img(size, 5)
    close(f(images=x, patch_size=1), x.flatten(2).transpose(1, 2), rtol=0, atol=0)
    sq = randn(size, 2, size["C"], size["H"], size["H"], salt=6)
    close(f(images=sq, patch_size=size["H"]), sq.reshape(2, 1, -1), rtol=0, atol=0)


@P.prop("raises ValueError when p does not divide H or W, and patches a valid image")
def _(f, ref, size):
    x = randn(size, 1, 1, 5, 4, salt=7)
    raises(ValueError, f, images=x, patch_size=2)
    raises(ValueError, f, images=x.transpose(2, 3).contiguous(), patch_size=2)
    close(f(images=x[:, :, :4], patch_size=2), F.unfold(x[:, :, :4], 2, stride=2).transpose(1, 2), rtol=0, atol=0)

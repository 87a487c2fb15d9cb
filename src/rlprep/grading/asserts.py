"""Checks for lab test cells. A failure raises ``PropertyFailed`` whose message names the property.

Messages name what is wrong ("advantages wrong when an episode ends mid-batch") and may give the size of
the error, never the expected values: hidden tests stay hidden even when they fail. Inputs are converted
with numpy inside the grader, whatever the learner's kernel did to its own numpy.
"""

from __future__ import annotations

import numpy as np


class PropertyFailed(AssertionError):
    """A named property of the learner's answer does not hold."""


def _to_numpy(x, prop: str) -> np.ndarray:
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu()
        x = (x.double() if x.is_floating_point() else x).numpy()
    if type(x) not in (np.ndarray, list, tuple, int, float, bool) and not isinstance(x, np.generic):
        raise PropertyFailed(f"{prop}: got a {type(x).__name__}, expected an array or a number")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise PropertyFailed(f"{prop}: could not read it as numbers ({err})") from None
    return arr


def check(condition: bool, prop: str) -> None:
    """Fail with ``prop`` unless ``condition`` is exactly True."""
    if condition is not True and not (isinstance(condition, np.bool_) and bool(condition)):
        raise PropertyFailed(prop)


def assert_close(actual, expected, prop: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """``actual`` matches ``expected`` elementwise within rtol/atol, with the same shape and no NaN."""
    a = _to_numpy(actual, prop)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise PropertyFailed(f"{prop}: wrong shape {tuple(a.shape)}")
    if not np.all(np.isfinite(a)):
        raise PropertyFailed(f"{prop}: contains NaN or inf")
    err = np.abs(a - e)
    if not np.all(err <= atol + rtol * np.abs(e)):
        raise PropertyFailed(f"{prop} (max abs error {float(err.max()):.3g})")


def assert_shape(x, shape: tuple, prop: str) -> None:
    """``x`` is an array (or tensor) of exactly this shape."""
    got = tuple(getattr(x, "shape", ()))
    if got != tuple(shape):
        raise PropertyFailed(f"{prop}: shape {got}, expected {tuple(shape)}")


def assert_float_array(x, prop: str) -> None:
    """``x`` is a numpy array of floating dtype (not an int array, a list or a tensor)."""
    if type(x) is not np.ndarray:
        raise PropertyFailed(f"{prop}: got a {type(x).__name__}, expected a numpy array")
    if x.dtype.kind != "f":
        raise PropertyFailed(f"{prop}: dtype {x.dtype}, expected a float dtype")


def expect_tuple(result, n: int, prop: str) -> tuple:
    """``result`` is a tuple (or list) of ``n`` items; return it as a tuple."""
    if type(result) not in (tuple, list) or len(result) != n:
        raise PropertyFailed(f"{prop}: expected a tuple of {n} items, got {type(result).__name__}")
    return tuple(result)


def value_and_grad(fn, wrt=(), **kwargs):
    """Call ``fn(**kwargs)`` and return ``(value, {name: d value / d kwargs[name]})`` for names in ``wrt``.

    The value must be a scalar tensor (or a tuple whose first item is one). The tensors named in ``wrt``
    are cloned with ``requires_grad=True`` first; an argument the value does not depend on gets a zero
    gradient. When ``fn`` is a graded function seen from the grader (a proxy into the learner's kernel),
    the forward and backward passes both run in that kernel and only values and gradients come back.
    """
    proxied = getattr(fn, "value_and_grad", None)
    if proxied is not None and callable(proxied) and getattr(fn, "is_rlprep_proxy", False):
        return proxied(wrt=tuple(wrt), **kwargs)
    import torch

    kwargs = dict(kwargs)
    leaves = []
    for name in wrt:
        x = kwargs[name]
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise ValueError(f"value_and_grad: argument {name!r} must be a float tensor to take its gradient")
        kwargs[name] = x.detach().clone().requires_grad_(True)
        leaves.append(kwargs[name])
    out = fn(**kwargs)
    value = out[0] if isinstance(out, (tuple, list)) else out
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        raise ValueError("value_and_grad: the function must return a scalar tensor")
    if leaves and value.requires_grad:
        grads = torch.autograd.grad(value.reshape(()), leaves, allow_unused=True)
    else:
        grads = [None] * len(leaves)
    grads = {name: (torch.zeros_like(leaf) if g is None else g.detach())
             for name, g, leaf in zip(wrt, grads, leaves)}
    return value.detach(), grads

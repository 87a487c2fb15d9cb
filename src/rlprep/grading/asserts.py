"""Checks for lab test cells. A failure raises ``PropertyFailed`` whose message names the property.

Messages name what is wrong ("advantages wrong when an episode ends mid-batch") and may give the size of
the error, never the expected values: hidden tests stay hidden even when they fail. Inputs are converted
with numpy inside the grader, whatever the learner's kernel did to its own numpy.

Tolerances follow the precision of the inputs the test gave the learner's functions (``note_inputs``, called for
every call a test cell makes), and are never looser than float32's, the precision the labs ask answers to compute
in: an answer's dtype can loosen a float64 test to float32's tolerance (an honest answer may compute in float32),
no further, so a planted bug cast to bfloat16 gains nothing.
"""

from __future__ import annotations

import os
import sys

import numpy as np


class PropertyFailed(AssertionError):
    """A named property of the learner's answer does not hold.

    ``prop`` is the property alone; the message may add detail (a shape, the size of the error) that a
    hidden test does not show.
    """

    def __init__(self, prop: str, detail: str = ""):
        super().__init__(f"{prop}{detail}")
        self.prop = prop


def _to_numpy(x, prop: str) -> np.ndarray:
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu()
        x = (x.double() if x.is_floating_point() else x).numpy()
    if type(x) not in (np.ndarray, list, tuple, int, float, bool) and not isinstance(x, np.generic):
        raise PropertyFailed(prop, f": got a {type(x).__name__}, expected an array or a number")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise PropertyFailed(prop, f": could not read it as numbers ({err})") from None
    return arr


def check(condition: bool, prop: str) -> None:
    """Fail with ``prop`` unless ``condition`` is exactly True."""
    if condition is not True and not (isinstance(condition, np.bool_) and bool(condition)):
        raise PropertyFailed(prop)


def no_error(prop: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, failing with ``prop`` (and the error's type) if it raises: for inputs every answer
    must accept, such as a non-contiguous view that ``.view()`` refuses."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # any error of the learner's function is the failed property
        raise PropertyFailed(prop, f": it raised {type(err).__name__}") from None


def assert_close(actual, expected, prop: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """``actual`` matches ``expected`` elementwise within rtol/atol, with the same shape and no NaN."""
    a = _to_numpy(actual, prop)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise PropertyFailed(prop, f": wrong shape {tuple(a.shape)}")
    if not np.all(np.isfinite(a)):
        raise PropertyFailed(prop, ": contains NaN or inf")
    rtol, atol = precision_tolerance(actual, e, rtol, atol)
    err = np.abs(a - e)
    if not np.all(err <= atol + rtol * np.abs(e)):
        raise PropertyFailed(prop, f" (max abs error {float(err.max()):.3g})")


# The error an honest answer computed in float32 may carry, relative to the largest magnitude involved: 64
# roundings (7.6e-6). No test is looser than this unless it says so itself (its own rtol/atol): the labs ask for
# float32 at least, also from 16-bit inputs (lab04's bfloat16 logits).
_FLOAT32_TOL = 64 * 2.0**-23
_PRECISION_ORDER = ("bfloat16", "float16", "float32", "float64")  # least precise first
_inputs: dict[str, str | None] = {"precision": None}  # the current test cell's least precise call (grader side)


def begin_test(precision: str | None = None) -> None:
    """Forget the inputs of the previous test cell (the grader calls it before each one); ``precision`` (what
    ``noted_precision`` said) resumes a test whose first parts ran earlier."""
    _inputs["precision"] = precision


def noted_precision() -> str | None:
    """The least precise call the current test cell has made so far (None: none with float inputs)."""
    return _inputs["precision"]


def note_inputs(args=(), kwargs=None) -> None:
    """Record the precision of one call's inputs, as the test cell chose them: the most precise float array or
    tensor among them (what numpy and torch promote to; Python floats do not count). The cell's tolerance follows
    its least precise call."""
    found: list[str] = []

    def walk(x, depth=0):
        if depth > 8:
            return
        dtype = getattr(x, "dtype", None) if type(x).__module__.split(".")[0] in ("numpy", "torch") else None
        name = str(dtype).removeprefix("torch.") if dtype is not None else None
        if name in _PRECISION_ORDER:
            found.append(name)
        elif type(x) in (list, tuple):
            for item in x:
                walk(item, depth + 1)
        elif type(x) is dict:
            for item in x.values():
                walk(item, depth + 1)

    walk(list(args) + list((kwargs or {}).values()))
    if found:
        call = max(found, key=_PRECISION_ORDER.index)
        cell = _inputs["precision"]
        _inputs["precision"] = call if cell is None else min(cell, call, key=_PRECISION_ORDER.index)


def precision_tolerance(actual, expected: np.ndarray, rtol: float, atol: float) -> tuple[float, float]:
    """(rtol, atol) for comparing ``actual`` with ``expected``: the test's own when its inputs were float64 and the
    answer is float64; widened to float32's when the test cell gave float32 or 16-bit inputs (``note_inputs``), or
    when the answer is float32 or lower (an honest answer may compute in float32). Never looser than float32's: a
    bfloat16 answer is compared as a float32 one, so a cast hides no error that float32 rounding would not."""
    low_inputs = _inputs["precision"] not in (None, "float64")
    low_answer = str(getattr(actual, "dtype", "float64")).removeprefix("torch.") in _PRECISION_ORDER[:-1]
    if not (low_inputs or low_answer):
        return rtol, atol
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    return max(rtol, _FLOAT32_TOL), max(atol, _FLOAT32_TOL * scale)


def assert_shape(x, shape: tuple, prop: str) -> None:
    """``x`` is an array (or tensor) of exactly this shape."""
    got = tuple(getattr(x, "shape", ()))
    if got != tuple(shape):
        raise PropertyFailed(prop, f": shape {got}, expected {tuple(shape)}")


def assert_float_array(x, prop: str) -> None:
    """``x`` is a numpy array of floating dtype (not an int array, a list or a tensor)."""
    if type(x) is not np.ndarray:
        raise PropertyFailed(prop, f": got a {type(x).__name__}, expected a numpy array")
    if x.dtype.kind != "f":
        raise PropertyFailed(prop, f": dtype {x.dtype}, expected a float dtype")


def expect_tuple(result, n: int, prop: str) -> tuple:
    """``result`` is a tuple (or list) of ``n`` items; return it as a tuple."""
    if type(result) not in (tuple, list) or len(result) != n:
        raise PropertyFailed(prop, f": expected a tuple of {n} items, got {type(result).__name__}")
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


_GRADING_DIR = os.path.dirname(os.path.abspath(__file__))


def _without_grader_frames(shell, etype, value, tb, tb_offset=None):
    """IPython's display of a :class:`PropertyFailed` in a notebook: the traceback cut before the first frame of the
    grading helpers (this package), so a learner sees the line of the test cell and the property, not the helper
    that raised it (issue 38; IPython never hides the frame that raised, whatever ``__tracebackhide__`` says)."""
    prev, here = None, tb
    while here is not None and os.path.dirname(os.path.abspath(here.tb_frame.f_code.co_filename)) != _GRADING_DIR:
        prev, here = here, here.tb_next
    if prev is not None and here is not None:
        prev.tb_next = None
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def _install_in_ipython() -> None:
    """In an IPython kernel (a learner running a lab's test cell), show PropertyFailed without grader frames; the
    grader itself, which has no IPython shell, is untouched."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((PropertyFailed,), _without_grader_frames)


_install_in_ipython()

"""What a problem's ``tests.py`` is written with, and what the grader's test cells call.

A property is a function ``(f, ref, size)``: ``f`` is the learner's function (a proxy into the sandboxed kernel
while grading, or a plain function in-process), ``ref`` the reference, ``size`` the problem's sizes (or a
retest's). It computes what the answer must be from the reference (or the library), in this process, and checks
``f``'s answer with :func:`close`, :func:`expect` or :func:`raises`::

    P = Properties()

    @P.prop("matches torch.softmax on random logits", library="torch.softmax")
    def _(f, ref, size):
        x = randn(size, size["B"], size["V"])
        close(f(x=x), torch.softmax(x, -1))

Every check is anchored to absolute values, so a constant, an echoed argument, ``None`` or ``raise`` fails it.
:func:`run_property` turns any failure into ``PropertyFailed(<property name>)``: a hidden test shows the name, never
a value (the detail is kept for in-process debugging only).
"""

from __future__ import annotations

import copy
import functools

import numpy as np

from rlprep.grading.asserts import PropertyFailed
from rlprep.grading.asserts import value_and_grad as _value_and_grad
from rlprep.grading.wire import LearnerCallError, WireError, learner_error

EXAMPLES = "visible examples"


class Properties:
    """The hidden properties of one problem, in order: {name: (function, library it compares with or None)}."""

    def __init__(self):
        self.items: dict[str, tuple] = {}

    def prop(self, name: str, library: str | None = None):
        def register(fn):
            if name in self.items:
                raise ValueError(f"property {name!r} is registered twice")
            self.items[name] = (fn, library)
            return fn

        return register


# -- checks ---------------------------------------------------------------------------------------------------------
def _as_array(x):
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu()
        if x.is_floating_point():
            x = x.double()
        return x.numpy()
    if isinstance(x, (np.ndarray, np.generic, int, float, bool)) and not isinstance(x, str):
        return np.asarray(x)
    raise AssertionError(f"got a {type(x).__name__}, expected a number, an array or a tensor")


def close(actual, expected, rtol: float = 1e-5, atol: float = 1e-6, what: str = "value") -> None:
    """``actual`` equals ``expected`` (numbers, arrays, tensors, or tuples/lists/dicts of them): integer and bool
    leaves exactly, float leaves within rtol/atol (each test sets them for the precision of the inputs it gives,
    never from the dtype an answer returns), same shapes, NaN and inf where the answer has them."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise AssertionError(f"{what}: expected a sequence of {len(expected)} items, got {type(actual).__name__}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            close(a, e, rtol, atol, f"{what}[{i}]")
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise AssertionError(f"{what}: expected a dict with keys {sorted(expected)}")
        for k in expected:
            close(actual[k], expected[k], rtol, atol, f"{what}[{k!r}]")
        return
    if expected is None:
        if actual is not None:
            raise AssertionError(f"{what}: expected None")
        return
    if isinstance(expected, str):
        if actual != expected:
            raise AssertionError(f"{what}: the wrong string or a value where a string belongs")
        return
    if actual is None or isinstance(actual, (str, tuple, list, dict)):
        raise AssertionError(f"{what}: got {type(actual).__name__}, expected {type(expected).__name__}")
    a, e = _as_array(actual), _as_array(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {tuple(a.shape)}, expected {tuple(e.shape)}")
    if e.dtype.kind in "biu":
        if a.dtype.kind not in "biu" and not (a.dtype.kind == "f" and np.all(a == np.round(a))):
            raise AssertionError(f"{what}: expected integers")
        if not np.array_equal(a.astype(np.int64), e.astype(np.int64)):
            raise AssertionError(f"{what}: wrong at {int(np.sum(a.astype(np.int64) != e.astype(np.int64)))} "
                                 "position(s)")
        return
    a, e = a.astype(np.float64), e.astype(np.float64)
    finite = np.isfinite(e)
    if not np.array_equal(np.isfinite(a), finite) or not np.array_equal(a[~finite], e[~finite]):
        raise AssertionError(f"{what}: NaN/inf where the answer has none, or the wrong infinities")
    err = np.abs(a[finite] - e[finite])
    if err.size and not np.all(err <= atol + rtol * np.abs(e[finite])):
        raise AssertionError(f"{what}: max abs error {float(err.max()):.3g}")


def expect(condition, detail: str = "") -> None:
    """Fail unless ``condition`` is exactly true."""
    if condition is not True and not (isinstance(condition, np.bool_) and bool(condition)):
        raise AssertionError(detail or "a required condition does not hold")


def raises(exc_type: type, fn, *args, **kwargs) -> None:
    """``fn(*args, **kwargs)`` must raise ``exc_type`` (a learner's subclass of it counts)."""
    try:
        fn(*args, **kwargs)
    except exc_type:
        return
    except Exception as err:  # the wrong error is the failure
        raise AssertionError(f"raised {type(err).__name__}, expected {exc_type.__name__}") from None
    raise AssertionError(f"returned instead of raising {exc_type.__name__}")


def vg(fn, wrt, **kwargs):
    """(value, {name: gradient}) of ``fn(**kwargs)`` w.r.t. the keyword tensors in ``wrt`` (in the learner's
    kernel when ``fn`` is a proxy: ``rlprep.grading.asserts.value_and_grad``)."""
    return _value_and_grad(fn, wrt=tuple(wrt), **kwargs)


# -- the functions a property receives ---------------------------------------------------------------------------
def copy_args(value):
    """A copy, so an answer that writes into its inputs cannot change the test's own (as in the sandbox, where
    every call gets fresh copies). Tensors are cloned, which keeps a gradient flowing back to the original."""
    if type(value).__module__.startswith("torch") and hasattr(value, "clone"):
        return value.clone()
    if type(value) in (list, tuple):
        return type(value)(copy_args(v) for v in value)
    if type(value) is dict:
        return {k: copy_args(v) for k, v in value.items()}
    return copy.deepcopy(value)


class InProcess:
    """The learner's function called in this process: inputs copied, errors raised as the grader's
    ``LearnerCallError`` (an instance of the builtin type the learner raised, as across the wire)."""

    def __init__(self, fn, name: str):
        self._fn, self.__name__ = fn, name

    def __call__(self, *args, **kwargs):
        args, kwargs = copy_args(args), copy_args(kwargs)
        try:
            return self._fn(*args, **kwargs)
        except LearnerCallError:
            raise
        except BaseException as err:  # SystemExit included, as in the kernel
            from rlprep.grading.wire import _builtin_base

            raise learner_error(self.__name__, {"type": type(err).__name__, "builtin": _builtin_base(err),
                                                "message": str(err)[:2000]}) from None


def namespace_of(problem, source: str) -> dict:
    """Run ``source`` (and the problem's driver) in a fresh module namespace; return it."""
    ns: dict = {"__name__": f"submission_{problem.slug}"}
    exec(compile(source, f"{problem.slug}.py", "exec"), ns)  # in-process scoring of trusted files
    if problem.call:
        exec(compile(problem.module("tests").DRIVER, "<driver>", "exec"), ns)
    return ns


def reference_callable(problem):
    """The reference as the tests call it (its driver bound to the reference class for class problems)."""
    return _reference_callable(problem.slug)


@functools.lru_cache(maxsize=None)
def _reference_callable(slug: str):
    from rlprep.coding.bank import get_problem

    problem = get_problem(slug)
    module = problem.module("reference")
    if not problem.call:
        return getattr(module, problem.entry)
    ns = dict(vars(module))
    exec(compile(problem.module("tests").DRIVER, "<driver>", "exec"), ns)  # the problem's own driver
    return ns[problem.call]


def _learner(f, problem):
    return f if getattr(f, "is_rlprep_proxy", False) or isinstance(f, InProcess) else InProcess(f, problem.call_name)


def _failed(name: str, err: BaseException) -> BaseException:
    if isinstance(err, PropertyFailed):
        return PropertyFailed(name, f": {err}")
    if isinstance(err, LearnerCallError):
        return LearnerCallError(f"{name}: {err}")
    if isinstance(err, WireError):
        return PropertyFailed(name, f": the return value cannot be read ({err})")
    return PropertyFailed(name, f": {type(err).__name__}: {err}")


def run_property(slug: str, name: str, f, retest: str | None = None) -> None:
    """Check one hidden property of ``f``; raise ``PropertyFailed(name)`` (or the learner's own error, prefixed by
    the property) when it does not hold. Called by the grader's test cells."""
    from rlprep.coding.bank import get_problem

    problem = get_problem(slug)
    props = problem.module("tests").P.items
    if name not in props:
        raise PropertyFailed(name, ": this property is not in the problem's tests (a stale notebook?)")
    fn, _ = props[name]
    try:
        fn(_learner(f, problem), reference_callable(problem), problem.sizes_for(retest))
    except Exception as err:  # every failure names the property
        raise _failed(name, err) from None


def run_examples(slug: str, f, retest: str | None = None) -> None:
    """Run the visible examples; a mismatch shows the call, the expected and the returned value (visible)."""
    from rlprep.coding.bank import get_problem
    from rlprep.coding.display import call_text, show_value

    problem = get_problem(slug)
    ref = reference_callable(problem)
    learner = _learner(f, problem)
    for i, kwargs in enumerate(problem.module("tests").examples(problem.sizes_for(retest)), 1):
        expected = ref(**copy_args(kwargs))
        try:
            got = learner(**copy_args(kwargs))
        except LearnerCallError as err:
            raise LearnerCallError(f"example {i}: {call_text(problem.call_name, kwargs)}\n  raised: {err}") from None
        try:
            close(got, expected, what=f"example {i}")
        except AssertionError as err:
            try:
                shown = show_value(got)
            except Exception:  # an unprintable answer
                shown = f"<{type(got).__name__}>"
            raise PropertyFailed(EXAMPLES, f": {err}\n  {call_text(problem.call_name, kwargs)}\n  expected: {show_value(expected)}\n  got:      "
                                           f"{shown}") from None


# -- inputs -------------------------------------------------------------------------------------------------------
def gen(size, salt: int = 0):
    """A torch Generator seeded from ``size['seed']`` (and a salt, so two inputs differ)."""
    import torch

    return torch.Generator().manual_seed(1000 * int(size.get("seed", 0)) + salt)


def randn(size, *shape, salt: int = 0, scale: float = 1.0, dtype=None):
    import torch

    return scale * torch.randn(*shape, generator=gen(size, salt), dtype=dtype or torch.float64)


def rand(size, *shape, salt: int = 0, dtype=None):
    import torch

    return torch.rand(*shape, generator=gen(size, salt), dtype=dtype or torch.float64)


def randint(size, low: int, high: int, *shape, salt: int = 0):
    import torch

    return torch.randint(low, high, shape, generator=gen(size, salt))

"""How values are shown to a learner: short reprs of tensors, arrays and calls (starter files, example failures)."""

from __future__ import annotations


def show_value(value, precision: int = 4) -> str:
    """A value the way a learner would print it, short: tensors and arrays rounded to ``precision`` digits."""
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        with _torch_print(precision):
            return repr(value.detach())
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=precision, separator=", ")
    if isinstance(value, float):
        return f"{value:.{precision}g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(show_value(v, precision) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(show_value(v, precision) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {show_value(v, precision)}" for k, v in value.items()) + "}"
    return repr(value)


class _torch_print:
    def __init__(self, precision: int):
        self.precision = precision

    def __enter__(self):
        import torch

        self.saved = torch._tensor_str.PRINT_OPTS.precision
        torch.set_printoptions(precision=self.precision)

    def __exit__(self, *exc):
        import torch

        torch.set_printoptions(precision=self.saved)


def call_text(name: str, kwargs: dict) -> str:
    return f"{name}(" + ", ".join(f"{k}={show_value(v)}" for k, v in kwargs.items()) + ")"

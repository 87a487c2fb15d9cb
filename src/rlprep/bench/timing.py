"""Wall-clock timing shared by the sections: one timed call (CUDA synchronised) and the median of repeats."""

from __future__ import annotations

import statistics
import time


def median(xs) -> float:
    """The median of the timed repeats as a float (NaN when nothing was timed)."""
    return float(statistics.median(xs)) if xs else float("nan")


def timed(fn, device):
    """``(seconds, fn())``; on CUDA the clock stops after the queued kernels finish, not when they are queued."""
    t0 = time.perf_counter()
    result = fn()
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize()
    return time.perf_counter() - t0, result

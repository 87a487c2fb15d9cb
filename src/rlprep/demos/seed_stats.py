"""Statistics over training seeds, shared by the recorded sweeps (lab 1's λ, lab 3's ε and kl_coef, lab 4's β).

A sweep trains each setting once per seed; these helpers check the seeds, take a mean with its 95% Student-t
interval over seeds (1.96 standard errors of the evaluation when there is one seed), average logged curves over
seeds, and say in words what a paired interval between two settings allows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from rlprep.errors import RlprepError

# Two-sided 95% quantiles of Student's t, t_{0.975, df}, for df = 1..10 (any statistics table).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """``(mean, half-width)`` of the 95% Student-t interval of the mean of ``values`` (n >= 2, n <= 11)."""
    n = len(values)
    if not 2 <= n <= len(T_975) + 1:
        raise ValueError(f"a t-interval needs 2 to {len(T_975) + 1} values, got {n}")
    return statistics.fmean(values), T_975[n - 2] * statistics.stdev(values) / math.sqrt(n)


def check_seeds(seeds, setting: str = "λ") -> tuple:
    """``seeds`` as a tuple, or an error/fix if it is empty, repeats a seed or is longer than the t table covers."""
    seeds = tuple(seeds)
    if not 1 <= len(seeds) <= len(T_975) + 1 or len(set(seeds)) < len(seeds):
        raise RlprepError(f"seeds={seeds!r}: the sweep needs 1 to {len(T_975) + 1} different seeds",
                          f"pass e.g. seeds=(0,) for one run per {setting} or seeds=(0, 1, 2) for intervals over "
                          "seeds")
    return seeds


def runs_by_seed(runs: Mapping) -> dict:
    """``{setting: {seed: History}}`` from ``{setting: History}`` (a lone run: its config's seed) or the nested form."""
    return {key: dict(r) if isinstance(r, Mapping) else {r.meta.get("config", {}).get("seed", 0): r}
            for key, r in runs.items()}


def mean_series(histories, key: str) -> tuple[list, list[float]]:
    """``(steps, values)``: the mean of ``key`` over ``histories`` at the steps every one of them logged."""
    points = [dict(zip(*h.series(key))) for h in histories]
    steps = sorted(set.intersection(*(set(p) for p in points))) if points else []
    return steps, [statistics.fmean(p[s] for p in points) for s in steps]


def interval(values: list[float], se: float) -> tuple[float, float]:
    """``(mean, 95% half-width)``: Student t over ``values`` (one per seed); for one value, 1.96 ``se``."""
    return mean_ci95(values) if len(values) > 1 else (values[0], 1.96 * se)


def reading(gap: float, half: float, a: float, b: float, n_seeds: int, *, setting: str = "λ",
            quantity: str = "") -> str:
    """What the paired interval ``gap ± half`` of q(setting = a) − q(setting = b) allows one to say, in words;
    q is the held-out gold reward unless ``quantity`` names another (e.g. "RM reward")."""
    on = f" on {quantity}" if quantity else ""
    if abs(gap) <= half:
        return (f"the interval contains 0: {n_seeds} seed{'s' if n_seeds > 1 else ''} do not rank {setting} = {a:g} "
                f"and {setting} = {b:g}{on} at this budget")
    side, order = ("above", "higher") if gap > 0 else ("below", "lower")
    spread = "the spread between seeds" if n_seeds > 1 else "the spread of the held-out prompts (one seed)"
    return (f"the interval lies {side} 0: {setting} = {a:g} ends {order}{on} than {setting} = {b:g} at this budget, "
            f"beyond {spread}")

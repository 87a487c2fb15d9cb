"""Lab 8's demos: the learner's ``diff_bbox`` timed at 4K, and both functions on a gradual difference (W33).

Each lab cell is one call with the learner's functions as arguments:

- :func:`benchmark` times the classic answers (``rlprep.bench.image_diff``: naive loop, whole-image numpy,
  OpenCV, early exit, the one-read floor) and the learner's ``diff_bbox`` on the same pairs, and plots each
  against the floor;
- :func:`show_gradual` draws the boxes of ``diff_bbox`` (two thresholds) and ``diff_bbox_robust`` on a noisy,
  drifted scene with a soft blob (``rlprep.demos.image_diff_scenes``).

``python -m rlprep.demos.image_diff --record`` runs the benchmark in the cpu profile (3840 × 2160 × 3) with the
reference ``diff_bbox`` and writes ``records/lab08_image_diff.json``, the figures the lab's text quotes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from rlprep.demos.image_diff_scenes import robust_pair, target_box
from rlprep.profiles import Profile, get_profile

RECORD = "lab08_image_diff"
COMMAND = "RLPREP_PROFILE=cpu OMP_NUM_THREADS=1 python -m rlprep.demos.image_diff --record"
GRADUAL_BLOB = (64, 96, 22, 30.0)
"""(cy, cx, radius px, amplitude grey levels) of the gradual-difference scene."""

SCOPE = {
    "smoke": "smoke profile: a {w} x {h} pair (not 4K), few repeats, seconds. Too small to reproduce the text's "
             "4K figures (they come from the cpu profile); the ratios still show who reads the image how often.",
    "cpu": "cpu profile: the full {w} x {h} pair, about a minute: the pair the text's figures were measured on.",
    "gpu": "gpu profile: the full {w} x {h} pair on this machine's CPU (the benchmark does not use the GPU).",
}


def bench_size(profile: Profile) -> tuple[int, int, int, int]:
    """(height, width, repeats, slow repeats) of the benchmark for ``profile``."""
    return (540, 960, 5, 2) if profile.name == "smoke" else (2160, 3840, 21, 5)


def time_learner(diff_bbox: Callable, scenarios: dict, repeats: int = 5) -> dict:
    """``{scenario: (median ms, box correct)}`` for the learner's ``diff_bbox`` on the benchmark's pairs."""
    out = {}
    for name, (a, b, threshold, expected) in scenarios.items():
        got = diff_bbox(a, b, threshold)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            diff_bbox(a, b, threshold)
            times.append(1e3 * (time.perf_counter() - start))
        out[name] = (statistics.median(times), got == expected)
    return out


def benchmark(diff_bbox: Callable, *, profile=None, show: bool = True) -> dict:
    """Time the classic answers and ``diff_bbox`` (yours) on the profile's pair; print the table and plot
    each method's median time over the floor. Returns ``run_benchmark``'s dict plus ``"yours"``."""
    import matplotlib.pyplot as plt

    from rlprep.bench.image_diff import format_table, run_benchmark, scenarios

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    height, width, repeats, slow = bench_size(p)
    print(SCOPE[p.name].format(w=width, h=height))
    figures = run_benchmark(height, width, 3, repeats=repeats, slow_repeats=slow)
    print(format_table(figures, "timings_ms"))
    figures["yours"] = time_learner(diff_bbox, scenarios(height, width, 3))
    print("\nyour diff_bbox (median ms):")
    for name, (ms, ok) in figures["yours"].items():
        floor_ms = figures["timings_ms"][name]["floor"]
        print(f"  {name:<18} {ms:8.2f} ms  ({ms / floor_ms:5.1f}x the floor)  box {'ok' if ok else 'WRONG'}")
    methods = ["naive_loop_extrapolated", "numpy_vectorized", "opencv_pipeline", "early_exit", "yours"]
    fig, ax = plt.subplots(figsize=(11, 4))
    names = list(figures["timings_ms"])
    width_bar = 0.8 / len(methods)
    for i, method in enumerate(methods):
        over_floor = [(figures["yours"][n][0] if method == "yours" else figures["timings_ms"][n][method])
                      / figures["timings_ms"][n]["floor"] for n in names]
        ax.bar(np.arange(len(names)) + i * width_bar, over_floor, width_bar, label=method)
    ax.axhline(1.0, color="black", lw=1, ls="--", label="floor (one read of both images)")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(names)) + 0.4 - width_bar / 2, names)
    ax.set_xlabel("scenario")
    ax.set_ylabel("median time / floor (ratio, log scale)")
    ax.set_title(f"diff_bbox on a {width} × {height} × 3 uint8 pair ({p.name} profile)")
    ax.legend(fontsize=7, ncols=2)
    fig.tight_layout()
    if show:
        plt.show()
    return figures


def show_gradual(diff_bbox: Callable, diff_bbox_robust: Callable, *, blob=GRADUAL_BLOB, seed: int = 5,
                 offset: float = 10.0, show: bool = True) -> dict:
    """Two shots of one scene (noise, a global drift of ``offset``, a soft blob); draw each function's box
    on the signed difference. Returns ``{"boxes": {name: box}, "target": the blob's 25% box, "img_a", "img_b"}``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    img_a, img_b = robust_pair(seed, offset=offset, blob=blob)
    boxes = {"diff_bbox, threshold 0": (diff_bbox(img_a, img_b, 0), "red"),
             "diff_bbox, threshold 30": (diff_bbox(img_a, img_b, 30), "orange"),
             "diff_bbox_robust": (diff_bbox_robust(img_a, img_b), "lime")}
    signed = img_b.astype(np.float32).mean(axis=2) - img_a.astype(np.float32).mean(axis=2)  # (H, W)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].imshow(img_a)
    axes[0].set_title("img_a")
    axes[1].imshow(img_b)
    axes[1].set_title(f"img_b ({offset:+g} drift, soft blob)")
    im = axes[2].imshow(signed, cmap="coolwarm", vmin=-40, vmax=40)
    axes[2].set_title("b − a (channel mean, grey levels)")
    fig.colorbar(im, ax=axes[2], label="grey levels")
    target = target_box(blob)
    for name, (box, colour) in [*boxes.items(), ("blob 25% box (target)", (target, "black"))]:
        print(f"{name:<26} {box}")
        if box is not None:
            x0, y0, x1, y1 = box
            axes[2].add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0 + 1, y1 - y0 + 1, fill=False, edgecolor=colour,
                                        lw=2, ls="--" if colour == "black" else "-", label=name))
    axes[2].legend(loc="lower left", fontsize=7)
    for ax in axes:
        ax.set_xlabel("x (column, px)")
        ax.set_ylabel("y (row, px)")
    fig.tight_layout()
    if show:
        plt.show()
    return {"boxes": {name: box for name, (box, _) in boxes.items()}, "target": target, "img_a": img_a,
            "img_b": img_b}


def experiment(profile: str | Profile | None = "cpu") -> dict:
    """The benchmark with the reference ``diff_bbox``; returns the values :func:`main` records."""
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.algos.image_diff import diff_bbox

    figures = benchmark(diff_bbox, profile=profile, show=False)
    t = figures["timings_ms"]
    small, whole = t["small_centre_t0"], t["whole_image_t0"]
    height, width, _ = figures["shape"]
    return {"height": height, "width": width, "repeats": figures["repeats"],
            "naive_over_floor": small["naive_loop_extrapolated"] / small["floor"],
            "numpy_over_floor": small["numpy_vectorized"] / small["floor"],
            "opencv_over_floor": small["opencv_pipeline"] / small["floor"],
            "early_over_floor_small": small["early_exit"] / small["floor"],
            "early_over_floor_whole": whole["early_exit"] / whole["floor"],
            "floor_ms": small["floor"], "timings_ms": t}


def main(argv: list[str] | None = None) -> int:
    from rlprep.demos.recorded import run_and_record

    return run_and_record(experiment, RECORD, COMMAND, argv, "Lab 8's 4K benchmark with the reference diff_bbox.")


if __name__ == "__main__":
    sys.exit(main())

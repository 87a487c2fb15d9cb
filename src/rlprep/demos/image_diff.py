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


RUNS = 3
"""Whole benchmark runs behind each recorded figure: the median over runs, and their min and max as the spread."""

RATIOS = {  # recorded key -> (scenario, method over the floor) of one benchmark run
    "naive_over_floor": ("small_centre_t0", "naive_loop_extrapolated"),
    "numpy_over_floor": ("small_centre_t0", "numpy_vectorized"),
    "opencv_over_floor": ("small_centre_t0", "opencv_pipeline"),
    "early_over_floor_small": ("small_centre_t0", "early_exit"),
    "early_over_floor_whole": ("whole_image_t0", "early_exit"),
}
THREADS = ("norm_default_threads", "norm_1_thread", "norm_cached", "scan_1_thread", "scan_2_threads", "read_gbs",
           "cached_gbs")
"""The keys of ``rlprep.bench.image_diff.threads_and_bandwidth`` the record keeps per run."""


def spread(per_run: dict[str, list[float]]) -> dict[str, float]:
    """``{key: median, key_min: min, key_max: max}`` over the runs of each key."""
    out = {}
    for key, values in per_run.items():
        out.update({key: statistics.median(values), f"{key}_min": min(values), f"{key}_max": max(values)})
    return out


def experiment(profile: str | Profile | None = "cpu", runs: int = RUNS) -> dict:
    """``runs`` runs of the benchmark and of the thread/bandwidth check with the reference ``diff_bbox``, one after
    the other; returns the values :func:`main` records: each ratio as its median over runs with min and max, the
    1-minute load average before and after each run (a quiet machine reads near 0 on top of this job), and the
    median timings per method and scenario."""
    import os

    from rlprep.bench.image_diff import run_benchmark, threads_and_bandwidth

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    height, width, repeats, slow = bench_size(p)
    per_run: dict[str, list[float]] = {key: [] for key in [*RATIOS, "floor_ms", *THREADS]}
    timings, load = [], [os.getloadavg()[0]]
    for _ in range(runs):
        t = run_benchmark(height, width, 3, repeats=repeats, slow_repeats=slow)["timings_ms"]
        for key, (scenario, method) in RATIOS.items():
            per_run[key].append(t[scenario][method] / t[scenario]["floor"])
        per_run["floor_ms"].append(t["small_centre_t0"]["floor"])
        checks = threads_and_bandwidth(height, width, 3, repeats=repeats)
        for key in THREADS:
            per_run[key].append(checks[key])
        timings.append(t)
        load.append(os.getloadavg()[0])
    for key, (num, den) in {"norm_1_over_default": ("norm_1_thread", "norm_default_threads"),
                            "two_threads_over_one": ("scan_2_threads", "scan_1_thread"),
                            "cached_over_read": ("cached_gbs", "read_gbs")}.items():
        per_run[key] = [n / d for n, d in zip(per_run[num], per_run[den])]
    median_ms = {s: {m: statistics.median(run[s][m] for run in timings) for m in timings[0][s]} for s in timings[0]}
    return {"height": height, "width": width, "repeats": repeats, "runs": runs,
            "opencv_threads": checks["opencv_threads"], "load_avg_1min": load, **spread(per_run),
            "timings_ms": median_ms}


def quoted(values: dict, key: str, fmt: str = ".2f") -> str:
    """``values[key]`` with its spread over runs: ``"0.62 (0.55-0.70)"``."""
    return f"{values[key]:{fmt}} ({values[key + '_min']:{fmt}}–{values[key + '_max']:{fmt}})"


def threads_evidence(record: dict | None = None) -> str:
    """Markdown for notebook 12's timing evidence: the recorded thread/bandwidth check and the 4K benchmark as
    multiples of the floor. Every figure comes from the record (``records/lab08_image_diff.json``: medians over its
    runs, min-max in brackets), and each verdict follows from the ratios over all runs (a ratio whose runs all stay
    within 1.1 is "no change"), so a record that contradicts a claim changes the text. The run's date, machine and
    load are :func:`recorded_conditions`, printed in the notebook's Reproducibility note, not here."""
    from rlprep import records

    v = (record or records.load(RECORD))["values"]
    norm = f"{quoted(v, 'norm_1_over_default')}× the default's time"
    if v["norm_1_over_default_max"] <= 1.1:
        norm += (": OpenCV's threads do not speed this call up (its CPU path is one sequential SIMD loop), so a "
                 "second core has to come from row bands of your own")
    elif v["norm_1_over_default_min"] > 1.1:
        norm += ": OpenCV's threads sped this call up in every run"
    else:
        norm += ": within the noise of the runs"
    if v["cached_over_read_min"] >= 10.0:
        read = "faster, an order of magnitude: the arithmetic is cheap, and a full pass is bound by the bytes it fetches"
    elif v["cached_over_read_min"] > 1.2:
        read = ("faster, but not by an order of magnitude: on the recording machine memory fed one core within a "
                "small factor of its cache's rate")
    else:
        read = "not clearly faster: this check does not separate memory from arithmetic"
    cores, two_med = v["opencv_threads"], v["two_threads_over_one"]
    if v["two_threads_over_one_max"] < 0.9:
        two = "faster in every run: a second core added bandwidth one core could not draw alone"
    elif two_med < 0.9:
        two = "faster in the median run, not in every run"
    else:
        two = ("slower in every run" if v["two_threads_over_one_min"] > 1.1 else
               "slower in the median run" if two_med > 1.1 else "no faster in the median run")
        if v["two_threads_over_one_min"] < 0.9:
            two += ", faster in one run: no reliable gain"
        two += (f". With {cores} cores, a second band did not add bandwidth here: the counter-case to a many-core "
                "server, where bandwidth grows with threads (step 5)")
    return (
        f"Recorded with the reference on the {v['width']} × {v['height']} × 3 pair: {v['runs']} runs of "
        f"{v['repeats']} calls, medians over the runs, min–max in brackets.\n\n"
        f"- `cv2.norm(a, b, NORM_INF)` over the pair: {quoted(v, 'norm_default_threads')} ms with OpenCV's default "
        f"{v['opencv_threads']} threads, {quoted(v, 'norm_1_thread')} ms with `cv2.setNumThreads(1)`, {norm}.\n"
        f"- That pass reads the pair at {quoted(v, 'read_gbs', '.1f')} GB/s; on a 256 KiB block that stays in cache "
        f"the same call reads {quoted(v, 'cached_gbs', '.1f')} GB/s, {quoted(v, 'cached_over_read', '.1f')}× {read}.\n"
        f"- The scan on two row bands in two threads: {quoted(v, 'scan_2_threads')} ms against "
        f"{quoted(v, 'scan_1_thread')} ms on one, {quoted(v, 'two_threads_over_one')}×: {two}.\n"
        f"- Small change in the centre, as multiples of the floor ({quoted(v, 'floor_ms', '.1f')} ms): numpy "
        f"{quoted(v, 'numpy_over_floor', '.1f')}×, the OpenCV pipeline {quoted(v, 'opencv_over_floor', '.1f')}×, "
        f"early exit {quoted(v, 'early_over_floor_small')}×, the naive loop {quoted(v, 'naive_over_floor', ',.0f')}×; "
        f"whole image changed: early exit {quoted(v, 'early_over_floor_whole', '.3f')}×.")


def recorded_conditions(record: dict | None = None) -> str:
    """One line for a Reproducibility note: the command, date, machine and 1-minute load average of the record."""
    from rlprep import records

    rec = record or records.load(RECORD)
    v = rec["values"]
    return (f"`{records.command_line(rec)}`: {rec['profile']} profile, {rec['date']}, {rec['machine']}, {v['runs']} runs; "
            f"1-minute load average {', '.join(f'{x:.1f}' for x in v['load_avg_1min'])} (before the first run and after each).")


def main(argv: list[str] | None = None) -> int:
    from rlprep.demos.recorded import run_and_record

    return run_and_record(experiment, RECORD, COMMAND, argv, "Lab 8's 4K benchmark with the reference diff_bbox.")


if __name__ == "__main__":
    sys.exit(main())


# W33 depth: small runnable checks behind notebook 12's follow-ups -------------------------------------------------
def _mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """Inclusive (x_min, y_min, x_max, y_max) of a [H, W] boolean mask, or None when it is empty."""
    ys, xs = np.nonzero(mask)
    return None if ys.size == 0 else (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max()))


def hysteresis_rim(seed: int = 7, blob: tuple = (60, 80, 26, 30.0), low: float = 3.0, high: float = 8.0,
                   sigma: float = 1.0) -> dict:
    """A blob whose rim fades into the noise, on grey images [H, W] (noise std 3 per shot, no drift).

    The difference is Gaussian-smoothed (``sigma``); three masks: ``|d| > high`` (no noise survives, the rim is
    cut off), ``|d| > low`` (the rim and noise specks all over), and hysteresis: the connected regions of the low
    mask that contain a pixel of the high one (the step that ends the Canny edge detector). Returns each mask's
    box, the blob's boxes at the ``low`` and ``high`` levels (``target_low``, ``target_high``) and
    ``specks_low``, the low mask's 8-connected regions that touch no high pixel."""
    import cv2

    from rlprep.demos.image_diff_scenes import soft_blob

    img_a, img_b = (img[..., 1] for img in robust_pair(seed, blob=blob))  # (H, W) grey
    d = cv2.GaussianBlur(img_b.astype(np.float32) - img_a.astype(np.float32), (0, 0), sigma)  # (H, W)
    strong, weak = np.abs(d) > high, np.abs(d) > low
    n, labels = cv2.connectedComponents(weak.astype(np.uint8), connectivity=8)  # (H, W) region ids, 0 = none
    seeded = np.unique(labels[strong])
    seeded = seeded[seeded > 0]
    true_blob = np.abs(soft_blob(*img_a.shape, *blob))  # (H, W)
    return {"high": _mask_box(strong), "low": _mask_box(weak), "hysteresis": _mask_box(np.isin(labels, seeded)),
            "target_low": _mask_box(true_blob > low), "target_high": _mask_box(true_blob > high),
            "specks_low": int(n - 1 - seeded.size)}


COLOUR_PAIRS = {  # name -> (RGB before, RGB after): each moves one channel by 20 grey levels
    "navy, blue +20": ((0, 0, 60), (0, 0, 80)),
    "green, green +20": ((60, 160, 60), (60, 180, 60)),
    "yellow, blue +20": ((230, 230, 100), (230, 230, 120)),
    "grey, red +20": ((128, 128, 128), (148, 128, 128)),
}


def delta_e76(rgb_a, rgb_b) -> float:
    """CIE76 colour difference: the Euclidean distance of two sRGB uint8 colours in CIE L*a*b* (L* in [0, 100]),
    through OpenCV's float conversion (RGB scaled to [0, 1])."""
    import cv2

    lab = cv2.cvtColor(np.array([[rgb_a, rgb_b]], np.float32) / 255.0, cv2.COLOR_RGB2Lab)  # (1, 2, 3)
    return float(np.linalg.norm(lab[0, 0] - lab[0, 1]))


def colour_distance_check(pairs: dict = COLOUR_PAIRS) -> dict:
    """``{name: (per-channel max |a - b|, Delta E76)}``: the same byte-level change is a different visible change."""
    return {name: (int(np.abs(np.subtract(b, a)).max()), delta_e76(a, b)) for name, (a, b) in pairs.items()}


def rows_differ_uint64(img_a: np.ndarray, img_b: np.ndarray) -> np.ndarray:
    """[H] bool: which rows differ at threshold 0, comparing 8 bytes per operation. Each row of a C-ordered copy
    is zero-padded to a multiple of 8 bytes and viewed as uint64 words: a word differs iff one of its bytes does,
    so this is exact for "any byte changed" and says nothing about |a - b| > t for t > 0."""
    height = img_a.shape[0]
    a = np.ascontiguousarray(img_a).reshape(height, -1)  # (H, W*C) uint8, C order whatever the input layout
    b = np.ascontiguousarray(img_b).reshape(height, -1)
    pad = (-a.shape[1]) % 8
    if pad:
        a, b = np.pad(a, ((0, 0), (0, pad))), np.pad(b, ((0, 0), (0, pad)))  # (H, 8k)
    return (a.view(np.uint64) != b.view(np.uint64)).any(axis=1)  # (H, k) words -> (H,)


def uint64_rows_check(seed: int = 0, cases: int = 300) -> dict:
    """``rows_differ_uint64`` against the plain ``(a != b)`` rows on random small images, views included (a
    transposed grey image, a column slice, a column-major copy); returns ``{"agree": n, "cases": cases}``."""
    rng = np.random.default_rng(seed)
    agree = 0
    for case in range(cases):
        h, w = (int(v) for v in rng.integers(1, 20, 2))
        a = rng.integers(0, 256, (h, w, 3) if case % 2 else (h, w), dtype=np.uint8)
        b = a.copy()
        for _ in range(int(rng.integers(0, 3))):
            b[tuple(int(rng.integers(0, s)) for s in b.shape)] ^= np.uint8(1 << int(rng.integers(0, 8)))
        view = [lambda x: x, lambda x: x.T if x.ndim == 2 else x[:, ::-1], lambda x: np.asfortranarray(x),
                lambda x: x[:, 1:] if x.shape[1] > 1 else x][case % 4]
        va, vb = view(a), view(b)
        want = (va != vb).reshape(va.shape[0], -1).any(axis=1)  # (H,)
        agree += bool(np.array_equal(rows_differ_uint64(va, vb), want))
    return {"agree": agree, "cases": cases}


def pooling_check(seed: int = 11, factor: int = 4, blob: tuple = (120, 160, 48, 14.0), noise_std: float = 8.0) -> dict:
    """Average-pool downsampling (``cv2.resize(..., INTER_AREA)`` by ``factor``), two ways:

    - the exact box: a one-pixel change of 40 averages to 40 / factor**2 in its block, under threshold 8, so
      ``diff_bbox`` on the pooled pair misses it (``exact_pooled`` is None), while a max over each block keeps it
      at block resolution (``max_pooled_box``: the pixels of the one block that differs);
    - a gradual change (a wide, faint blob under noise std ``noise_std``): the pooled difference's noise std falls
      by about ``factor`` (``noise_ratio``) while the blob keeps its amplitude, and ``diff_bbox_robust`` on the
      pooled pair, scaled back by ``factor`` (``pooled_box``), lands near the full-resolution box (``full_box``)
      and the blob's 25% box (``target``) on factor**2 fewer pixels."""
    import cv2

    from rlprep.algos.image_diff import diff_bbox, diff_bbox_robust
    from rlprep.demos.image_diff_scenes import target_box

    def pool(img):  # (H, W[, C]) -> (H / factor, W / factor[, C]) block means
        return cv2.resize(img, (img.shape[1] // factor, img.shape[0] // factor), interpolation=cv2.INTER_AREA)

    a = np.random.default_rng(seed).integers(60, 190, (64, 96, 3), dtype=np.uint8)
    b = a.copy()
    b[21, 37, 1] += 40  # one pixel, one channel
    d = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)  # (H, W)
    block_max = d.reshape(64 // factor, factor, 96 // factor, factor).max(axis=(1, 3))  # (H/f, W/f)
    coarse = _mask_box(block_max > 8)
    height, width = 240, 320
    img_a, img_b = robust_pair(seed, height, width, blob=blob, noise_std=noise_std)
    noise_a, noise_b = robust_pair(seed + 1, height, width, noise_std=noise_std)
    full_noise = float((noise_b.astype(np.float32) - noise_a).std())
    pooled_noise = float((pool(noise_b).astype(np.float32) - pool(noise_a)).std())
    pooled = diff_bbox_robust(pool(img_a), pool(img_b))
    return {"exact": diff_bbox(a, b, 8), "exact_pooled": diff_bbox(pool(a), pool(b), 8),
            "max_pooled_box": None if coarse is None else (
                coarse[0] * factor, coarse[1] * factor, coarse[2] * factor + factor - 1, coarse[3] * factor + factor - 1),
            "noise_ratio": full_noise / pooled_noise,
            "full_box": diff_bbox_robust(img_a, img_b),
            "pooled_box": None if pooled is None else tuple(v * factor + (factor - 1) * (i >= 2)
                                                            for i, v in enumerate(pooled)),
            "target": target_box(blob, height, width)}

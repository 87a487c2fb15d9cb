"""diff_bbox against a plain-loop oracle on many seeded small images, 4K edge cases, and the benchmark harness."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rlprep.algos.image_diff import diff_bbox, diff_bbox_robust
from rlprep.bench.image_diff import (diff_bbox_bands, format_table, naive_loop, numpy_vectorized, opencv_pipeline,
                                    run_benchmark)


def test_matches_loop_oracle_on_random_small_images():
    rng = np.random.default_rng(0)
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 45, 2))  # one block, then line by line
        shape = [(h, w), (h, w, 1), (h, w, 2), (h, w, 3), (h, w, 4), (h, w, 5)][rng.integers(0, 6)]
        a = rng.integers(0, 256, shape, dtype=np.uint8)
        b = a.copy()
        for _ in range(rng.integers(0, 4)):
            idx = tuple(int(rng.integers(0, s)) for s in shape)
            b[idx] = rng.integers(0, 256)
        threshold = int(rng.integers(0, 30))
        assert diff_bbox(a, b, threshold) == naive_loop(a, b, threshold), (shape, threshold)


def test_matches_numpy_oracle_where_blocks_span_several_lines():
    """Rows of 24-90 KB: a 512 KiB block is 5-21 rows, and a hit block is rescanned at 1/8 of that, then by lines;
    a thin band's columns fit one block and are rescanned the same way. Changes sit at block edges too."""
    rng = np.random.default_rng(5)
    for case in range(40):
        h, w, c = int(rng.integers(1, 70)), int(rng.integers(8_000, 30_000)), int(rng.choice([1, 3]))
        a = rng.integers(0, 256, (h, w, c) if c > 1 else (h, w), dtype=np.uint8)
        b = a.copy()
        for _ in range(rng.integers(0, 4)):
            idx = tuple(int(rng.integers(0, s)) for s in a.shape)
            b[idx] = rng.integers(0, 256)
        threshold = int(rng.integers(0, 30))
        assert diff_bbox(a, b, threshold) == numpy_vectorized(a, b, threshold), (case, a.shape, threshold)


def test_non_contiguous_views_and_threshold_edges():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
    b = a.copy()
    b[10, 20, 1] = a[10, 20, 1] ^ 0x80
    assert diff_bbox(a[:, ::-1], b[:, ::-1]) == (29, 10, 29, 10)  # a mirrored, negatively strided view
    assert diff_bbox(a[5:30, 10:], b[5:30, 10:]) == (10, 5, 10, 5)
    assert diff_bbox(a, b, threshold=255) is None
    assert diff_bbox(a, b, threshold=127.5) == (20, 10, 20, 10)  # diff is exactly 128 > 127.5
    assert diff_bbox(a, b, threshold=128) is None


@pytest.mark.parametrize("bad", [
    (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 3), np.int16)),
    (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 3, 3), np.uint8)),
    (np.zeros((2, 4, 4, 3), np.uint8), np.zeros((2, 4, 4, 3), np.uint8)),
    (np.zeros((0, 4), np.uint8), np.zeros((0, 4), np.uint8)),
    ([[0]], [[0]]),
])
def test_bad_images_raise_value_error(bad):
    with pytest.raises(ValueError):
        diff_bbox(*bad)
    with pytest.raises(ValueError):
        diff_bbox_robust(*bad)


def test_negative_threshold_raises():
    with pytest.raises(ValueError):
        diff_bbox(np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8), threshold=-1)


def test_4k_pair_centre_corners_and_whole_image():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (2160, 3840, 3), dtype=np.uint8)
    b = a.copy()
    b[1080, 1920, 2] ^= 1
    assert diff_bbox(a, b) == (1920, 1080, 1920, 1080)
    b[0, 3839, 0] ^= 0x40
    b[2159, 0, 1] ^= 0x40
    assert diff_bbox(a, b) == (0, 0, 3839, 2159)
    assert diff_bbox(a, b, threshold=8) == (0, 0, 3839, 2159)
    assert diff_bbox(a, a.copy()) is None


def test_banded_threads_variant_matches_the_reference():
    rng = np.random.default_rng(4)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for _ in range(100):
            h, w = (int(v) for v in rng.integers(1, 40, 2))
            a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            b = a.copy()
            for _ in range(rng.integers(0, 3)):
                b[int(rng.integers(0, h)), int(rng.integers(0, w)), int(rng.integers(0, 3))] ^= 0x11
            for n_bands in (1, 2, 3):
                assert diff_bbox_bands(a, b, 8, pool=pool, n_bands=n_bands) == diff_bbox(a, b, 8)


def test_baselines_agree_with_the_reference():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    b = a.copy()
    b[3:9, 40:44, 0] ^= 0x21
    for threshold in (0, 8, 40):
        want = diff_bbox(a, b, threshold)
        assert numpy_vectorized(a, b, threshold) == want and opencv_pipeline(a, b, threshold) == want


def test_benchmark_harness_returns_every_method_and_scenario():
    result = run_benchmark(height=64, width=96, channels=3, repeats=1, slow_repeats=1)
    assert set(result["timings_ms"]) == {"small_centre_t0", "small_centre_t8", "whole_image_t0", "identical_t0"}
    for row in result["timings_ms"].values():
        assert set(row) == {"naive_loop_extrapolated", "numpy_vectorized", "early_exit", "early_exit_2_threads",
                            "opencv_pipeline", "floor"}
        assert all(v > 0 for v in row.values())
    assert set(result["best_ms"]) == set(result["timings_ms"])
    assert "| small_centre_t0 |" in format_table(result) and "best ms" in format_table(result, "best_ms")


# diff_bbox_robust ----------------------------------------------------------------------------------------------
def test_robust_finds_a_colour_only_change_that_channel_averaging_cancels():
    """R +40 and B -40 on a soft blob: the channel mean of the signed difference is ~0 (issue 24)."""
    from rlprep.demos.image_diff_scenes import robust_pair, target_box

    blob = (50, 90, 18, 40.0)
    a, b = robust_pair(3, blob=blob, colour=(1.0, 0.0, -1.0))
    signed_mean = (b.astype(float) - a.astype(float)).mean(axis=2)[50, 90]
    assert abs(signed_mean) < 3  # what an average over channels sees at the blob's peak
    assert diff_bbox(a, b, threshold=30) is not None  # the exact box at a high threshold finds it
    box = diff_bbox_robust(a, b)
    assert box is not None and max(abs(g - t) for g, t in zip(box, target_box(blob))) <= 3
    a, b = robust_pair(4, offset=-6.0, blob=blob, colour=(0.0, 0.0, 1.0))  # only the blue channel moves
    box = diff_bbox_robust(a, b)
    assert box is not None and max(abs(g - t) for g, t in zip(box, target_box(blob))) <= 3


@pytest.mark.parametrize("x0", [60, 20])
def test_robust_boxes_a_change_over_most_of_the_frame_not_its_complement(x0):
    """A step of +40 over the right 62% (x0 = 60) or 88% (x0 = 20) of the frame: a whole-frame median is the
    change's level, so median drift removal returned the unchanged part, (0, 0, 61, 119) for x0 = 60."""
    from rlprep.demos.image_diff_scenes import robust_pair, step_box

    for offset in (0.0, 8.0):
        box = diff_bbox_robust(*robust_pair(4, offset=offset, step=(x0, 40.0)))
        assert box is not None and max(abs(g - t) for g, t in zip(box, step_box((x0, 40.0)))) <= 3, (offset, box)
    assert diff_bbox_robust(*robust_pair(5, step=(0, 40.0))) == (0, 0, 159, 119)  # the whole frame, 40 > max_drift


def test_robust_stated_tolerance_over_seeds():
    """The docstring's tolerance on 12 random scenes each: grey, colour-only and blue-only blobs, steps, and
    noise or drift alone (None)."""
    from rlprep.demos.image_diff_scenes import robust_pair, step_box, target_box

    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        for colour in ((1, 1, 1), (1, 0, -1), (0, 0, 1)):
            amp, radius = rng.uniform(35, 40) * rng.choice([-1, 1]), rng.uniform(12, 18)
            blob = (rng.uniform(radius, 120 - radius), rng.uniform(radius, 160 - radius), radius, amp)
            box = diff_bbox_robust(*robust_pair(seed, offset=rng.uniform(-12, 12), blob=blob, colour=colour))
            assert box is not None and max(abs(g - t) for g, t in zip(box, target_box(blob))) <= 3, (seed, colour)
        step = (int(rng.integers(5, 155)), 40.0 * rng.choice([-1, 1]))
        box = diff_bbox_robust(*robust_pair(seed, offset=rng.uniform(-12, 12), step=step))
        assert box is not None and max(abs(g - t) for g, t in zip(box, step_box(step))) <= 3, (seed, step)
        assert diff_bbox_robust(*robust_pair(seed)) is None
        assert diff_bbox_robust(*robust_pair(seed, offset=rng.uniform(-12, 12))) is None


def test_robust_grey_images_and_bad_max_drift():
    from rlprep.demos.image_diff_scenes import robust_pair, target_box

    blob = (60, 60, 15, -38.0)
    a, b = (img[..., 1] for img in robust_pair(6, offset=5.0, blob=blob))  # [H, W] grey
    box = diff_bbox_robust(a, b)
    assert box is not None and max(abs(g - t) for g, t in zip(box, target_box(blob))) <= 3
    with pytest.raises(ValueError, match="max_drift"):
        diff_bbox_robust(a, b, max_drift=-1)


def test_threads_and_bandwidth_times_each_variant_and_restores_opencv_threads():
    import cv2

    from rlprep.bench.image_diff import threads_and_bandwidth

    before = cv2.getNumThreads()
    out = threads_and_bandwidth(height=96, width=128, repeats=1)
    assert cv2.getNumThreads() == before == out["opencv_threads"]
    for key in ("norm_default_threads", "norm_1_thread", "norm_cached", "scan_1_thread", "scan_2_threads",
                "read_gbs", "cached_gbs"):
        assert out[key] > 0, key
    pair_gb = 2 * 96 * 128 * 3 / 1e9
    assert out["read_gbs"] == pytest.approx(pair_gb / (out["norm_1_thread"] / 1e3))


@pytest.mark.parametrize("channels", [513, 1024])
def test_more_channels_than_opencv_takes_still_gives_a_box(channels):
    # cv2.norm takes at most 512 channels (CV_CN_MAX); the contract is a box or a ValueError for any uint8 [H, W, C]
    a = np.zeros((6, 7, channels), np.uint8)
    b = a.copy()
    b[2, 3, channels - 1] = 9
    b[4, 1, 0] = 9
    assert diff_bbox(a, b) == naive_loop(a, b, 0) == (1, 2, 3, 4)
    assert diff_bbox(a, b, threshold=9) is None

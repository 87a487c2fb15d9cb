"""rlprep.demos.image_diff (lab08's demo cells): the learner's diff_bbox timed beside the classic answers, and both
functions on a gradual difference; plots labelled, the profile's scope said."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_benchmark_times_the_given_function_and_flags_a_wrong_box(capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos.image_diff import diff_bbox
    from rlprep.demos import image_diff as demo

    calls = []
    figures = demo.benchmark(lambda a, b, t=0: calls.append(t) or diff_bbox(a, b, t), profile="smoke", show=False)
    out = capsys.readouterr().out
    assert "smoke profile" in out and "Too small" in out and out.count("box ok") == 4 and calls
    assert set(figures["yours"]) == set(figures["timings_ms"])
    ax = plt.gcf().axes[0]
    assert ax.get_title() and "ratio" in ax.get_ylabel() and ax.get_xlabel()
    demo.benchmark(lambda a, b, t=0: (0, 0, 0, 0), profile="smoke", show=False)
    assert "WRONG" in capsys.readouterr().out
    plt.close("all")


def test_show_gradual_draws_each_functions_box():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos.image_diff import diff_bbox, diff_bbox_robust
    from rlprep.demos import image_diff as demo

    out = demo.show_gradual(diff_bbox, lambda a, b: (1, 2, 3, 4), show=False)
    h, w = out["img_a"].shape[:2]
    assert out["boxes"]["diff_bbox, threshold 0"] == (0, 0, w - 1, h - 1)
    assert out["boxes"]["diff_bbox_robust"] == (1, 2, 3, 4) and out["target"] == (82, 50, 110, 78)
    real = demo.show_gradual(diff_bbox, diff_bbox_robust, show=False)["boxes"]["diff_bbox_robust"]
    assert max(abs(r - t) for r, t in zip(real, out["target"])) <= 3
    assert all(ax.get_title() for ax in plt.gcf().axes[:3])
    plt.close("all")


def test_experiment_records_each_ratio_as_a_median_over_runs_with_its_spread(monkeypatch):
    from rlprep.bench import image_diff as bench
    from rlprep.demos import image_diff as demo

    floors = iter([1.0, 2.0, 4.0])

    def fake_benchmark(*args, **kwargs):
        floor = next(floors)
        row = {"naive_loop_extrapolated": 1000.0 * floor, "numpy_vectorized": 30.0, "opencv_pipeline": 8.0,
               "early_exit": 2.0, "floor": floor}
        return {"timings_ms": {"small_centre_t0": row, "whole_image_t0": dict(row, early_exit=0.5)}}

    checks = {"norm_default_threads": 10.0, "norm_1_thread": 10.0, "norm_cached": 2.0, "scan_1_thread": 12.0,
              "scan_2_threads": 9.0, "read_gbs": 5.0, "cached_gbs": 25.0, "opencv_threads": 2}
    monkeypatch.setattr(bench, "run_benchmark", fake_benchmark)
    monkeypatch.setattr(bench, "threads_and_bandwidth", lambda *a, **k: checks)
    values = demo.experiment("smoke", runs=3)
    assert values["runs"] == 3 and len(values["load_avg_1min"]) == 4
    assert (values["naive_over_floor"], values["naive_over_floor_min"], values["naive_over_floor_max"]) == \
        (1000.0, 1000.0, 1000.0)
    assert (values["early_over_floor_small"], values["early_over_floor_small_min"],
            values["early_over_floor_small_max"]) == (1.0, 0.5, 2.0)  # 2 ms over floors of 1, 2 and 4 ms
    assert values["floor_ms"] == 2.0 and values["timings_ms"]["small_centre_t0"]["floor"] == 2.0
    assert values["two_threads_over_one"] == 0.75 and values["cached_over_read"] == 5.0


def test_recorded_threads_note_quotes_the_record_and_its_verdict_follows_the_figures():
    from rlprep import records
    from rlprep.demos import image_diff as demo

    rec = records.load(demo.RECORD)
    note = demo.recorded_threads_note(rec)
    v = rec["values"]
    assert f"{v['norm_1_thread']:.2f} ({v['norm_1_thread_min']:.2f}" in note
    assert f"{v['cached_gbs']:.1f}" in note and f"{v['runs']} runs" in note
    # logistics (date, machine, load, sharing) go to the Reproducibility note, not into the evidence (round7f, W33)
    assert rec["date"] not in note and "load average" not in note and rec["machine"] not in note
    assert "shared with other jobs" not in note and "busy with other" not in note
    assert rec["machine"] in demo.recorded_conditions(rec)
    assert rec["date"] in demo.recorded_conditions(rec) and f"{v['load_avg_1min'][0]:.1f}" in demo.recorded_conditions(rec)
    flat = dict(v, norm_1_over_default_min=0.97, norm_1_over_default_max=1.04, two_threads_over_one_min=0.95)
    assert "do not speed this call up" in demo.recorded_threads_note(dict(rec, values=flat))
    assert "no faster on this machine (its load is printed below). That is not a general law" in \
        demo.recorded_threads_note(dict(rec, values=flat))
    assert "one core already draws" not in demo.recorded_threads_note(dict(rec, values=flat))
    helped = dict(flat, norm_1_over_default_min=1.6, norm_1_over_default_max=1.9, two_threads_over_one_min=0.6)
    text = demo.recorded_threads_note(dict(rec, values=helped))
    assert "OpenCV's threads matter" in text and "a second core adds bandwidth" in text


def test_threads_evidence_states_the_general_finding_and_leaves_the_figures_to_the_reproducibility_note():
    import re
    from pathlib import Path

    import nbformat

    from rlprep import records
    from rlprep.demos import image_diff as demo

    rec = records.load(demo.RECORD)
    v = rec["values"]
    finding = demo.threads_finding(rec)
    # no machine figure in the answer section (round9f, W33): no unit, and none of the record's values
    assert not re.search(r"\d\s*(ms|GB/s|×)", finding)
    floats = [x for x in v.values() if isinstance(x, float)]
    assert not any(f"{x:.2f}" in finding or f"{x:.1f}" in finding for x in floats)
    assert "setNumThreads` does not change" in finding and "bound by the bytes it fetches" in finding
    # each sentence follows the record: ratios that say otherwise change the text
    busy = dict(v, norm_1_over_default_min=1.5, norm_1_over_default_max=1.8, cached_over_read_min=1.2)
    other = demo.threads_finding(dict(rec, values=busy))
    assert "sped `cv2.norm(a, b, NORM_INF)` up" in other and "do not show a memory-bound pass" in other
    # the notebook prints the finding in evidence (d) and the machine's figures only in its Reproducibility note
    nb = nbformat.read(Path(__file__).parents[1] / "notebooks" / "12_image_diff.ipynb", as_version=4)
    cells = {c.id: c.source for c in nb.cells}
    assert "threads_finding()" in cells["w33-bench-recorded"] and "recorded_threads_note" not in cells["w33-bench-recorded"]
    assert "recorded_threads_note()" in cells["reproducibility-conditions"]


# W33 depth checks (notebook 12) ---------------------------------------------------------------------------------
def _edge_gap(box, target):
    return max(abs(b - t) for b, t in zip(box, target))


def test_hysteresis_reaches_the_fading_rim_without_the_noise():
    from rlprep.demos.image_diff import hysteresis_rim

    out = hysteresis_rim()
    assert out["low"] == (0, 0, 159, 119) and out["specks_low"] > 20  # low threshold alone: noise everywhere
    assert _edge_gap(out["hysteresis"], out["target_low"]) <= 2  # the rim down to the low level
    assert _edge_gap(out["high"], out["target_high"]) <= 2  # high threshold alone: only down to the high level,
    hx0, hy0, hx1, hy1 = out["hysteresis"]
    x0, y0, x1, y1 = out["high"]
    assert hx0 < x0 and hy0 < y0 and hx1 > x1 and hy1 > y1  # a box strictly inside the hysteresis one


def test_colour_distance_differs_where_the_per_channel_max_is_the_same():
    import cv2

    from rlprep.demos.image_diff import colour_distance_check, delta_e76

    assert delta_e76((255, 255, 255), (0, 0, 0)) == pytest.approx(100.0, abs=0.1)  # L* spans 0..100
    assert delta_e76((10, 200, 30), (10, 200, 30)) == 0.0
    lab = cv2.cvtColor(np.array([[[255, 0, 0]]], np.float32) / 255.0, cv2.COLOR_RGB2Lab)[0, 0]
    assert lab[1] > 50  # red has a large positive a*: the conversion reads the array as RGB
    out = colour_distance_check()
    assert {m for m, _ in out.values()} == {20}
    distances = [e for _, e in out.values()]
    assert max(distances) > 1.7 * min(distances)


def test_uint64_rows_are_exact_for_threshold_zero_on_any_layout():
    from rlprep.demos.image_diff import rows_differ_uint64, uint64_rows_check

    assert uint64_rows_check() == {"agree": 300, "cases": 300}
    a = np.zeros((3, 5), np.uint8)  # rows of 5 bytes: padded to one word
    b = a.copy()
    b[2, 4] = 1
    assert rows_differ_uint64(a, b).tolist() == [False, False, True]
    assert rows_differ_uint64(a.T, b.T).tolist() == [False, False, False, False, True]


def test_average_pooling_loses_the_exact_box_but_helps_a_faint_gradual_change():
    from rlprep.demos.image_diff import pooling_check

    out = pooling_check()
    assert out["exact"] == (37, 21, 37, 21) and out["exact_pooled"] is None
    x0, y0, x1, y1 = out["max_pooled_box"]
    assert (x0, y0, x1 - x0, y1 - y0) == (36, 20, 3, 3)  # one 4 x 4 block, holding the pixel
    assert out["noise_ratio"] == pytest.approx(4.0, rel=0.1)  # averaging 16 pixels: noise std / 4
    assert out["full_box"] is not None and out["pooled_box"] is not None
    assert _edge_gap(out["pooled_box"], out["target"]) < _edge_gap(out["full_box"], out["target"])

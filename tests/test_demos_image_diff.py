"""rlprep.demos.image_diff (lab08's demo cells): the learner's diff_bbox timed beside the classic answers, and both
functions on a gradual difference; plots labelled, the profile's scope said."""

from __future__ import annotations

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


def test_experiment_values_are_ratios_of_the_benchmark(monkeypatch):
    from rlprep.demos import image_diff as demo

    row = {"naive_loop_extrapolated": 1000.0, "numpy_vectorized": 30.0, "opencv_pipeline": 8.0, "early_exit": 2.0,
           "floor": 1.0}
    fake = {"shape": [540, 960, 3], "repeats": 5,
            "timings_ms": {"small_centre_t0": row, "whole_image_t0": dict(row, early_exit=0.5, floor=2.0)}}
    monkeypatch.setattr(demo, "benchmark", lambda fn, profile=None, show=True: fake)
    values = demo.experiment("smoke")
    assert (values["naive_over_floor"], values["early_over_floor_small"], values["early_over_floor_whole"]) == \
        (1000.0, 2.0, 0.25)

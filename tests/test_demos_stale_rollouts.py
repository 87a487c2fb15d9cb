"""lab06's GPT-2 demo (rlprep.demos.stale_rollouts.stale_demo) and the profile note every lab demo prints."""

from __future__ import annotations

import json

import pytest

from rlprep.demos.lab_runs import profile_note


def test_profile_note_says_what_each_profile_shows():
    assert "too small to learn" in profile_note("GRPO", "smoke")
    assert "the text quotes" in profile_note("GRPO", "cpu") and "too small" not in profile_note("GRPO", "cpu")
    assert profile_note("GRPO", "gpu").startswith("GRPO. gpu profile")


def test_stale_demo_uses_the_learners_weights_labels_its_plot_and_records(monkeypatch, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos.importance_sampling import importance_weights
    from rlprep.demos.stale_rollouts import stale_demo

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    calls = []

    def spy(logp_target, logp_behavior, clip=None):
        calls.append(clip)
        return importance_weights(logp_target, logp_behavior, clip=clip)

    runs = stale_demo(spy, "smoke", staleness=(0, 2), steps=3, eval_every=3, eval_size=16, record=True,
                      show=False, progress=False)
    assert set(runs) == {(0, "none"), (2, "none"), (2, "tis")} and 2.0 in calls  # TIS called it with clip=2
    fig = plt.gcf()
    assert "smoke profile" in fig._suptitle.get_text()
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() == "GRPO step" and "(" in ax.get_ylabel()  # a unit
    plt.close("all")
    out = capsys.readouterr().out
    assert "too small to learn" in out and "k=2, TIS (clip 2)" in out and "recorded" in out
    doc = json.loads((tmp_path / "lab06_stale.json").read_text())
    assert doc["profile"] == "smoke" and doc["values"]["steps"] == 3
    assert doc["values"]["k0_none_end"] == pytest.approx(runs[(0, "none")].series("eval/accuracy")[1][-1])
    assert "python -m rlprep.demos.stale_rollouts --record" in doc["command"]

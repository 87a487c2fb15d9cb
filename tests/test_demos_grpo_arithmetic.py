"""lab05's GPT-2 demos (rlprep.demos.grpo_arithmetic): the learner's functions train, the W11 table flags a wrong
diagnosis, every figure is labelled, and --record writes the figures lab05 quotes."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def quiet_plots(monkeypatch, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    yield tmp_path
    for n in plt.get_fignums():
        for ax in plt.figure(n).axes:
            if ax.get_visible() and ax.has_data():
                assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), ax
    plt.close("all")


def test_lab_runs_use_the_given_functions_and_record(quiet_plots, capsys):
    from rlprep.algos.grpo import group_advantages
    from rlprep.demos import grpo_arithmetic

    calls = []
    spy = lambda rewards, G, **kw: calls.append(G) or group_advantages(rewards, G, **kw)  # noqa: E731
    run, runs = grpo_arithmetic.lab_runs("smoke", record=True, progress=False, show=False, group_advantages=spy)
    assert calls and set(runs) == {grpo_arithmetic.BASELINE, *grpo_arithmetic.VARIANTS}
    out = capsys.readouterr().out
    assert out.count("too small to learn") == 2 and "run dynamic sampling:" in out
    doc = json.loads((quiet_plots / "lab05_grpo.json").read_text())
    assert doc["values"]["accuracy_end"] == run.meta["accuracy_end"] and doc["values"]["steps"] == 4
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.grpo_arithmetic --record"


def test_zero_loss_table_marks_a_wrong_diagnosis_and_gspo_spread_plots(quiet_plots, capsys):
    from rlprep.demos import grpo_arithmetic

    table = grpo_arithmetic.zero_loss_table(lambda stats: "expected", "smoke")
    out = capsys.readouterr().out
    assert table["on_policy"][1] == "expected" and "mask_bug" in table
    assert "<- expected no_valid_tokens" in out  # the learner's (wrong) verdict on mask_bug is flagged
    token, seq = grpo_arithmetic.gspo_spread("smoke")
    assert token.numel() > seq.numel() > 0 and "std of log ratio" in capsys.readouterr().out

"""rlprep.demos.reward_model (lab02's demo cells): each function runs the learner's loss, labels its plot and
says what the active profile shows; the record entry point writes what the lab quotes."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def run():
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.algos.reward_model import bradley_terry_loss
    from rlprep.demos import reward_model as demo

    calls = []
    result = demo.train(lambda c, r: calls.append(c.shape) or bradley_terry_loss(c, r), profile="smoke", steps=4,
                        eval_every=2, live=False)
    result.calls = calls
    return result


def labelled(fig):
    return all(ax.get_title() and ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes if ax.has_data())


def test_train_calls_the_given_loss_once_per_step_and_says_what_smoke_shows(run, capsys):
    from rlprep.demos import reward_model as demo

    assert len(run.calls) == 4 and all(shape == run.calls[0] for shape in run.calls)
    meta = run.history.meta
    assert 0 <= meta["accuracy"] <= 1 and meta["config"]["steps"] == 4
    assert "Too small" in demo.SCOPE["smoke"] and "cpu profile" in demo.SCOPE["smoke"]


def test_plots_are_labelled_and_return_their_data(run):
    import matplotlib.pyplot as plt
    import numpy as np

    from rlprep.demos import reward_model as demo

    scatter = demo.plot_rm_vs_gold(run, n_pairs=20, show=False)
    assert labelled(plt.gcf()) and scatter["rm"].shape == scatter["gold"].shape == (40,)
    assert scatter["pearson"] == pytest.approx(np.corrcoef(scatter["rm"], scatter["gold"])[0, 1])
    bon = demo.plot_best_of_n(run, show=False)
    assert labelled(plt.gcf()) and bon["n"] == [1, 2, 4, 8]
    assert bon["reward/rm"][-1] >= bon["reward/rm"][0]  # the RM's favourite of a superset scores at least as high
    plt.close("all")


def test_record_entry_point_writes_the_figures_the_lab_quotes(tmp_path, monkeypatch):
    from rlprep.demos import reward_model as demo

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(demo, "experiment", lambda profile: {"accuracy": 0.5, "profile_asked": profile})
    assert demo.main(["--record", "--profile", "smoke"]) == 0
    doc = json.loads((tmp_path / "lab02_reward_model.json").read_text())
    assert doc["values"] == {"accuracy": 0.5, "profile_asked": "smoke"} and doc["profile"] == "smoke"
    assert "--record" in doc["command"]


def test_record_entry_point_reports_bad_input_without_a_traceback(capsys):
    from rlprep.demos import reward_model as demo

    assert demo.main(["--profile", "tpu"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "fix:" in err and "Traceback" not in err

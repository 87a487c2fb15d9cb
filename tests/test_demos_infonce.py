"""rlprep.demos.infonce (lab07's demo cells): each function trains or evaluates with the learner's loss, labels
its progress and plots, and says what the active profile shows."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def data():
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.demos import infonce as demo

    return demo.show_data(profile="smoke", show=False)


def labelled(fig):
    return all(ax.get_title() and ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes if ax.has_data())


def counting_loss(calls):
    from rlprep.algos.infonce import infonce_loss

    def loss(image_emb, text_emb, temperature=0.07):
        calls.append(float(temperature))
        return infonce_loss(image_emb, text_emb, temperature)

    return loss


def test_show_data_says_what_smoke_shows(data, capsys):
    from rlprep.demos import infonce as demo

    train_set, test_set = demo.show_data(profile="smoke", show=False)
    out = capsys.readouterr().out
    assert "smoke profile" in out and "Too small" in out and f"{len(train_set)} training pairs" in out
    assert len(test_set) == len(data[1])


def test_sweep_trains_one_run_per_tau_with_the_given_loss_and_a_labelled_plot(data, capsys):
    import matplotlib.pyplot as plt

    from rlprep.demos import infonce as demo

    calls = []
    sweep = demo.temperature_sweep(counting_loss(calls), data, taus=(0.05, 0.5), profile="smoke", show=False,
                                   steps=3)
    assert sorted(sweep) == [0.05, 0.5] and calls == [0.05] * 3 + [0.5] * 3
    assert all(len(hist["loss"]) == 3 and 0 <= hist["recall@1"][-1] <= 1 for _, hist in sweep.values())
    assert labelled(plt.gcf()) and "tau=0.5" in capsys.readouterr().out
    plt.close("all")


def test_learnable_temperature_moves_tau_and_gradients_are_profiled(data):
    import matplotlib.pyplot as plt

    from rlprep.demos import infonce as demo

    calls = []
    model, hist = demo.learnable_temperature(counting_loss(calls), data, profile="smoke", show=False, steps=3)
    assert len(calls) == 3 and hist["temperature"][-1] != pytest.approx(0.07) and labelled(plt.gcf())
    prof = demo.plot_gradients(counting_loss(calls), model, data, n_pairs=16, taus=(0.01, 1.0), show=False)
    assert len(calls) == 5 and prof["grad_norm"][0] > prof["grad_norm"][1]  # the gradient carries 1/tau
    assert all(ax.get_title() and ax.get_xlabel() and ax.get_ylabel() for ax in plt.gcf().axes)
    plt.close("all")


def test_progress_bar_names_the_run(monkeypatch):
    import torch

    from rlprep.demos import infonce as demo

    monkeypatch.delenv("RLPREP_NO_BAR", raising=False)
    counted, bar = demo.with_progress(lambda a, b, t: a.sum() * 0, 2, "lab07 dual encoder, τ = 0.1")
    counted(torch.zeros(2, 2), torch.zeros(2, 2), 0.1)
    assert bar.desc == "lab07 dual encoder, τ = 0.1" and bar.n == 1
    bar.close()

"""lab04's GPT-2 demo (rlprep.demos.dpo_beta_sweep.beta_frontier): the learner's functions train, ln 2 is checked,
the frontier is labelled, and --record writes the figures with the command that remakes them."""

from __future__ import annotations

import json
import math


def test_beta_frontier_uses_the_given_functions_and_records(monkeypatch, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos.dpo import dpo_loss
    from rlprep.demos.dpo_beta_sweep import beta_frontier

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    betas = []

    def spy(*args, beta=0.1):
        betas.append(beta)
        return dpo_loss(*args, beta=beta)

    rows = beta_frontier(dpo_loss=spy, profile="smoke", betas=(0.1, 1.0), steps=2, eval_every=2, record=True,
                         show=False, progress=False)
    assert [r["beta"] for r in rows] == [0.1, 1.0] and {0.1, 1.0} <= set(betas)
    assert all(math.isfinite(r["kl"]) and math.isfinite(r["gold"]) for r in rows)
    fig = plt.gcf()
    assert "smoke profile" in fig._suptitle.get_text()
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and "(" in ax.get_ylabel()  # a unit
    plt.close("all")
    out = capsys.readouterr().out
    assert "too small to learn" in out and "ln 2 = 0.693147   ok" in out and "recorded" in out
    doc = json.loads((tmp_path / "lab04_beta_sweep.json").read_text())
    assert doc["values"]["beta_1_kl"] == rows[1]["kl"] and doc["values"]["steps"] == 2
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.dpo_beta_sweep --record"


def test_a_wrong_loss_is_flagged_at_step_0(monkeypatch, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.demos.dpo_beta_sweep import beta_frontier

    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    wrong = lambda pc, pr, rc, rr, beta=0.1: (pc - pr).mean() * 0 + 1.0  # noqa: E731 - a constant loss
    beta_frontier(dpo_loss=wrong, profile="smoke", betas=(), show=False, progress=False)
    assert "WRONG: at step 0 the loss must be ln 2" in capsys.readouterr().out

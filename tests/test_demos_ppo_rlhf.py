"""lab03's GPT-2 demos (rlprep.demos.ppo_rlhf): the learner's functions train, every figure is labelled, the
profile note is printed, and --record writes the figures lab03 quotes with the command that remakes them."""

from __future__ import annotations

import json


def test_lab_demos_use_the_given_functions_and_record(monkeypatch, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos import ppo
    from rlprep.demos import ppo_rlhf

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    clip_args = []

    def spy(*args, **kwargs):
        clip_args.append(kwargs.get("clip_eps", args[4] if len(args) > 4 else None))
        return ppo.ppo_clip_loss(*args, **kwargs)

    out = ppo_rlhf.lab_demos("smoke", record=True, progress=False, show=False, ppo_clip_loss=spy)
    assert {0.1, 0.2, 0.3} <= set(clip_args)  # the sweep ran the given loss at each ε
    for n in plt.get_fignums():
        for ax in plt.figure(n).axes:
            if ax.get_visible() and ax.has_data():
                assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), ax
    plt.close("all")
    printed = capsys.readouterr().out
    assert printed.count("too small to learn") == 3 and "proxy RM: held-out accuracy" in printed
    doc = json.loads((tmp_path / "lab03_ppo.json").read_text())
    values = doc["values"]
    assert values["main_gold_end"] == out["history"].meta["gold_end"] and "eps_0p3_clipfrac" in values
    assert values["kl_0_gold_end"] == out["kl_rows"][0]["gold_end"] and 0 < values["proxy_accuracy"] <= 1
    hack = out["kl_rows"][0]["history"]
    assert values["kl_steps"] == len(hack.series("reward/gold")[1]) == hack.meta["config"]["steps"]
    assert values["kl_0_batch_gold_peak"] == max(hack.series("reward/gold")[1])
    assert values["kl_0_parse_min"] == min(hack.series("text/parse_rate")[1]) and 0 <= values["kl_0_parse_min"] <= 1
    assert values["kl_0p05_parse_min"] <= values["kl_0p05_parse_last10"] <= 1
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.ppo_rlhf --record"

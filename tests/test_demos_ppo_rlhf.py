"""lab03's demo module: ``lab_demos`` runs the three demos with the given functions and records what the lab's text
quotes. The demos' training itself runs once, in the lab's own cells (``test_labs_123``), which also checks the
record those runs make; here the three demos are stand-ins, so only the composition and the record are tested."""

from __future__ import annotations

import json


class _History:
    """The slice of ``History`` that ``summary`` reads: ``meta`` and ``series``."""

    def __init__(self, meta: dict, series: dict):
        self.meta, self._series = meta, series

    def series(self, key):
        values = self._series.get(key, [])
        return list(range(1, len(values) + 1)), values


def _meta(steps: int, kl_coef: float = 0.05) -> dict:
    keys = ("gold_start", "gold_start_se", "gold_end", "gold_end_se", "gold_gain_se", "rm_start", "rm_end", "kl_end")
    return {**{k: float(i) / 10 for i, k in enumerate(keys)}, "config": {"steps": steps, "kl_coef": kl_coef}}


def test_lab_demos_runs_the_three_demos_with_the_given_functions_and_records(monkeypatch, tmp_path, capsys):
    from rlprep.demos import ppo_rlhf

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    seen = []
    main = _History(_meta(3), {})
    runs = {eps: _History(_meta(2), {"stats/clipfrac_two_sided": [eps, eps / 2]}) for eps in (0.1, 0.2, 0.3)}
    hack = _History(_meta(4, 0.0), {"reward/gold": [0.1, 0.5, 0.2, 0.0], "text/parse_rate": [1.0, 0.5, 0.25, 0.5]})
    rows = [{"kl_coef": c, "history": hack, "rm_start": 0.0, "rm_end": 1.0, "gold_start": 0.1, "gold_end": 0.0,
             "gold_end_se": 0.1, "kl_end": 2.0, "proxy_accuracy": 0.7, "proxy_pearson": 0.6} for c in (0.0, 0.05)]

    def stand_in(name, result):
        def demo(profile, show=True, progress=None, **functions):
            seen.append((name, profile.name, sorted(functions)))
            return result
        return demo

    monkeypatch.setattr(ppo_rlhf, "main_run", stand_in("main", main))
    monkeypatch.setattr(ppo_rlhf, "clip_sweep", stand_in("clip", runs))
    monkeypatch.setattr(ppo_rlhf, "kl_sweep", stand_in("kl", rows))
    marker = object()
    out = ppo_rlhf.lab_demos("smoke", record=True, progress=False, show=False, ppo_clip_loss=marker)
    assert [s[0] for s in seen] == ["main", "clip", "kl"] and all(s[2] == ["ppo_clip_loss"] for s in seen)
    assert out == {"history": main, "clip_runs": runs, "kl_rows": rows}
    doc = json.loads((tmp_path / "lab03_ppo.json").read_text())
    values = doc["values"]
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.ppo_rlhf --record"
    assert values["main_steps"] == 3 and values["main_kl_coef"] == 0.05 and values["main_gold_end"] == 0.2
    assert abs(values["eps_0p2_clipfrac"] - 0.15) < 1e-12 and values["kl_steps"] == 4
    assert values["kl_0_batch_gold_peak"] == 0.5 and values["kl_0_parse_min"] == 0.25
    assert values["proxy_accuracy"] == 0.7 and values["proxy_pearson"] == 0.6
    assert "recorded" in capsys.readouterr().out

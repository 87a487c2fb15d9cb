"""lab03's demo module: ``lab_demos`` runs the three demos with the given functions and records what the lab's text
quotes. The demos' training itself runs once, in the lab's own cells (``test_labs_123``), which also checks the
record those runs make; here the three demos are stand-ins, so only the composition and the record are tested."""

from __future__ import annotations

import json
import math

import pytest


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
    rows = [{"kl_coef": c, "seed": 0, "history": hack, "rm_start": 0.0, "rm_end": 1.0, "gold_start": 0.1,
             "gold_end": 0.0, "gold_end_se": 0.1, "kl_end": 2.0, "proxy_accuracy": 0.7, "proxy_pearson": 0.6}
            for c in (0.0, 0.05)]

    def stand_in(name, result):
        def demo(profile, show=True, progress=None, seeds=None, **functions):
            seen.append((name, profile.name, sorted(functions), seeds))
            return result
        return demo

    monkeypatch.setattr(ppo_rlhf, "main_run", stand_in("main", main))
    monkeypatch.setattr(ppo_rlhf, "clip_sweep", stand_in("clip", runs))
    monkeypatch.setattr(ppo_rlhf, "kl_sweep", stand_in("kl", rows))
    marker = object()
    out = ppo_rlhf.lab_demos("smoke", record=True, progress=False, show=False, ppo_clip_loss=marker)
    assert [s[0] for s in seen] == ["main", "clip", "kl"] and all(s[2] == ["ppo_clip_loss"] for s in seen)
    assert [s[3] for s in seen] == [None, (0,), (0,)]  # the lab's default: one seed, the main run never has seeds
    assert out == {"history": main, "clip_runs": runs, "kl_rows": rows}
    doc = json.loads((tmp_path / "lab03_ppo.json").read_text())
    values = doc["values"]
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.ppo_rlhf --record"
    assert values["main_steps"] == 3 and values["main_kl_coef"] == 0.05 and values["main_gold_end"] == 0.2
    assert abs(values["eps_0p2_clipfrac"] - 0.15) < 1e-12 and values["kl_steps"] == 4
    assert values["n_seeds"] == 1 and values["interval"] == "evaluation samples" and values["seeds"] == [0]
    assert "eps_0p2_clipfrac_ci95" not in values  # one seed: no interval for what has no standard error
    assert values["eps_0p2_gold_ci95"] == pytest.approx(1.96 * 0.3)  # one seed: 1.96 standard errors (gold_end_se)
    assert values["klgap_0p05_vs_0_gold_end"] == 0 and "klgap_0p05_vs_0_rm_end" not in values
    assert values["kl_0_batch_gold_peak"] == 0.5 and values["kl_0_parse_min"] == 0.25
    assert values["proxy_accuracy"] == 0.7 and values["proxy_pearson"] == 0.6
    assert "recorded" in capsys.readouterr().out


class _Run(_History):
    """A clip-sweep run of one (ε, seed): gold, KL and a two-step clip fraction."""

    def __init__(self, gold: float, kl: float, clipfrac: float):
        super().__init__({"gold_end": gold, "gold_end_se": 0.05, "kl_end": kl},
                         {"stats/clipfrac_two_sided": [clipfrac - 0.01, clipfrac + 0.01]})


# (ε, seed) -> (gold end, KL end, mean clip fraction); kl_coef -> seed -> (gold end, RM end, KL end, parse rates).
CLIP = {(0.1, 0): (0.40, 3.0, 0.040), (0.1, 1): (0.50, 2.0, 0.050), (0.1, 2): (0.45, 4.0, 0.030),
        (0.2, 0): (0.60, 9.0, 0.025), (0.2, 1): (0.50, 7.0, 0.030), (0.2, 2): (0.58, 8.0, 0.026),
        (0.3, 0): (0.70, 3.0, 0.014), (0.3, 1): (0.30, 5.0, 0.020), (0.3, 2): (0.62, 4.0, 0.010)}
HACK = {0.0: {0: (0.17, 2.5, 9.0, [1.0, 0.5, 0.25]), 1: (-0.05, 2.7, 8.0, [1.0, 0.75, 0.5]),
              2: (0.10, 2.1, 7.0, [0.75, 0.5, 0.5])},
        0.05: {0: (0.45, 2.3, 1.0, [1.0, 1.0, 0.75]), 1: (0.30, 2.2, 1.5, [1.0, 0.75, 1.0]),
               2: (0.40, 2.6, 1.2, [1.0, 1.0, 1.0])}}


def t_interval(values):
    """Mean and 95% Student-t half-width for three values, by hand (t_{0.975, 2} = 4.303)."""
    mean = sum(values) / 3
    return mean, 4.303 * math.sqrt(sum((v - mean) ** 2 for v in values) / 2) / math.sqrt(3)


def _seeded_inputs():
    runs = {eps: {s: _Run(*CLIP[eps, s]) for s in (0, 1, 2)} for eps in (0.1, 0.2, 0.3)}
    rows = []
    for seed in (0, 1, 2):  # seed-major, as kl_sweep returns them
        for c, by_seed in HACK.items():
            gold, rm, kl, parse = by_seed[seed]
            batch = _History(_meta(3, c), {"reward/gold": [0.1, gold + 0.3, gold], "text/parse_rate": parse})
            rows.append({"kl_coef": c, "seed": seed, "history": batch, "rm_start": -0.4, "rm_end": rm,
                         "gold_start": -0.2 + 0.01 * seed, "gold_end": gold, "gold_end_se": 0.07, "kl_end": kl,
                         "proxy_accuracy": 0.7, "proxy_pearson": 0.6})
    return _History(_meta(3), {}), runs, rows


def test_summary_over_seeds_records_means_intervals_per_seed_lists_and_paired_gaps():
    from rlprep.demos.ppo_rlhf import summary

    values = summary(*_seeded_inputs())
    assert values["n_seeds"] == 3 and values["seeds"] == [0, 1, 2] and values["interval"] == "seeds"
    assert values["main_gold_end"] == 0.2 and values["main_seed"] == 0  # the main run: one seed, no interval
    for eps, tag in ((0.1, "eps_0p1"), (0.2, "eps_0p2"), (0.3, "eps_0p3")):
        for i, q in enumerate(("gold", "kl", "clipfrac")):
            per_seed = [CLIP[eps, s][i] for s in (0, 1, 2)]
            mean, half = t_interval(per_seed)
            assert values[f"{tag}_{q}_seeds"] == pytest.approx(per_seed)
            assert values[f"{tag}_{q}"] == pytest.approx(mean) and values[f"{tag}_{q}_ci95"] == pytest.approx(half)
    # ε = 0.1 − 0.2 clip fraction, seed by seed: 0.015, 0.020, 0.004 -> mean 0.013, sd 0.008185, half 0.020335
    assert values["epsgap_0p1_vs_0p2_clipfrac_seeds"] == pytest.approx([0.015, 0.020, 0.004])
    assert values["epsgap_0p1_vs_0p2_clipfrac"] == pytest.approx(0.013)
    assert values["epsgap_0p1_vs_0p2_clipfrac_ci95"] == pytest.approx(0.020335, abs=1e-5)
    assert values["epsgap_0p1_vs_0p2_clipfrac_reading"] == (
        "the interval contains 0: 3 seeds do not rank ε = 0.1 and ε = 0.2 on clip fraction at this budget")
    assert values["epsgap_0p3_vs_0p1_gold_seeds"] == pytest.approx([0.30, -0.20, 0.17])
    for tag, c in (("kl_0", 0.0), ("kl_0p05", 0.05)):
        for i, q in enumerate(("gold_end", "rm_end", "kl_end")):
            mean, half = t_interval([HACK[c][s][i] for s in (0, 1, 2)])
            assert values[f"{tag}_{q}"] == pytest.approx(mean) and values[f"{tag}_{q}_ci95"] == pytest.approx(half)
        assert values[f"{tag}_parse_min"] == pytest.approx(sum(min(HACK[c][s][3]) for s in (0, 1, 2)) / 3)
        assert values[f"{tag}_batch_gold_peak"] == pytest.approx(sum(HACK[c][s][0] + 0.3 for s in (0, 1, 2)) / 3)
    assert values["kl_0_gold_start_seeds"] == pytest.approx([-0.2, -0.19, -0.18])
    assert values["kl_0_parse_last10"] == pytest.approx((1.75 / 3 + 2.25 / 3 + 1.75 / 3) / 3)
    # gold at kl_coef 0.05 − 0, seed by seed: 0.28, 0.35, 0.30 -> mean 0.31, sd 0.036056, half 0.089575
    assert values["klgap_0p05_vs_0_gold_end_seeds"] == pytest.approx([0.28, 0.35, 0.30])
    assert values["klgap_0p05_vs_0_gold_end"] == pytest.approx(0.31)
    assert values["klgap_0p05_vs_0_gold_end_ci95"] == pytest.approx(0.089575, abs=1e-5)
    assert values["klgap_0p05_vs_0_gold_end_reading"] == (
        "the interval lies above 0: kl_coef = 0.05 ends higher on held-out gold reward than kl_coef = 0 at this "
        "budget, beyond the spread between seeds")
    assert values["klgap_0p05_vs_0_rm_end_seeds"] == pytest.approx([-0.2, -0.5, 0.5])
    assert values["klgap_0p05_vs_0_rm_end_reading"].startswith("the interval contains 0")
    assert {"klgap_0p05_vs_0_kl_end", "klgap_0p05_vs_0_parse_last10"} <= set(values)


def test_summary_counts_only_the_seeds_every_setting_finished():
    from rlprep.demos.ppo_rlhf import summary

    history, runs, rows = _seeded_inputs()
    del runs[0.3][2]  # a stop during ε = 0.3, seed 2
    values = summary(history, runs, rows)
    assert values["n_seeds"] == 2 and values["eps_0p3_gold_seeds"] == pytest.approx([0.70, 0.30])
    assert values["epsgap_0p3_vs_0p1_gold_seeds"] == pytest.approx([0.30, -0.20])  # paired over shared seeds


@pytest.mark.parametrize("seeds", [(), (1, 1), tuple(range(12))])
@pytest.mark.parametrize("demo", ["clip_sweep", "kl_sweep", "lab_demos"])
def test_the_demos_refuse_a_seeds_list_they_cannot_summarize_before_training(monkeypatch, demo, seeds):
    from rlprep.demos import ppo_rlhf
    from rlprep.errors import RlprepError

    def no_setup(profile):
        raise AssertionError("loaded models for a refused seeds list")

    monkeypatch.setattr(ppo_rlhf, "_setup", no_setup)
    monkeypatch.setattr(ppo_rlhf, "main_run", no_setup)
    with pytest.raises(RlprepError, match="different seeds") as err:
        getattr(ppo_rlhf, demo)("smoke", show=False, seeds=seeds)
    assert "seeds=(0, 1, 2)" in err.value.fix

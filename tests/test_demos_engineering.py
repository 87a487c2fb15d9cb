"""Notebook 10's helpers: the ZeRO table, the run signature and the gameable proxy task."""

from __future__ import annotations

import math

import pytest

from rlprep.demos.engineering import LengthProxyArithmetic, format_memory_rows, memory_rows, signature
from rlprep.live import History


def test_memory_rows_follow_zero_formulas_for_7b_on_8_gpus():
    rows = {r["stage"]: r for r in memory_rows(7e9, n_gpus=8)}
    assert rows[0]["total"] == pytest.approx(112.0)  # 16 bytes/param (ZeRO, arXiv 1910.02054)
    assert rows[1]["total"] == pytest.approx(28 + 84 / 8)  # 4Ψ + 12Ψ/N
    assert rows[2]["total"] == pytest.approx(14 + 98 / 8)  # 2Ψ + 14Ψ/N
    assert rows[3]["total"] == pytest.approx(112 / 8)  # 16Ψ/N
    assert "ZeRO" in format_memory_rows(list(rows.values()))


def test_signature_averages_the_last_finite_values():
    kl = "stats/kl_k3_token"
    h = History([{"step": 1, kl: 1.0}, {"step": 2, kl: float("nan")}, {"step": 3, kl: 3.0}, {"step": 4, kl: 5.0}])
    s = signature(h, keys=("stats/kl_k3_token", "reward/mean"), tail=2)
    assert s["stats/kl_k3_token"] == pytest.approx(4.0)
    assert math.isnan(s["reward/mean"])


def test_proxy_task_pays_for_length_while_verify_stays_exact():
    task = LengthProxyArithmetic()
    assert task.reward("07+45=", "999") == 1.0 and not task.verify("07+45=", "999")
    assert task.reward("07+45=", "52") == 0.0 and task.verify("07+45=", "52")
    assert len(task.sample(3, "test", seed=0)) == 3

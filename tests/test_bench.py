"""``rlprep bench``: section selection, skip paths (no CUDA / trl / nbgrader), report files, rollout counting."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from rlprep import bench  # noqa: E402
from rlprep.errors import RlprepError  # noqa: E402


def _args(tmp_path, **kw):
    base = dict(gpu=False, quick=True, only=None, profile=None, repeats=None, target_seconds=None,
                target_points=None, out=str(tmp_path))
    base.update(kw)
    return SimpleNamespace(**base)


def test_bench_is_a_cli_command():
    from rlprep.cli import COMMANDS

    assert COMMANDS["bench"].module == "rlprep.bench"


def test_unknown_section_is_a_clear_error(tmp_path):
    with pytest.raises(RlprepError):
        bench.run(_args(tmp_path, only="steps,warp"))
    with pytest.raises(RlprepError):  # the lab runs belong to the GPU half only
        bench.run(_args(tmp_path, only="labs"))


def test_tests_section_writes_both_reports(tmp_path):
    assert bench.run(_args(tmp_path, only="tests")) == 0
    report = json.loads((tmp_path / "benchmarks.json").read_text())
    assert set(report["sections"]) == {"tests"}
    row = report["sections"]["tests"]
    assert ("seconds" in row) != ("skipped" in row)
    md = (tmp_path / "benchmarks.md").read_text()
    assert "## Test suite" in md and report["machine"]["date_utc"] in md


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA fallback")
def test_gpu_mode_without_cuda_skips_labs_with_a_note(tmp_path):
    assert bench.run(_args(tmp_path, gpu=True, only="labs,tests")) == 0
    report = json.loads((tmp_path / "benchmarks-gpu.json").read_text())
    assert "no CUDA" in report["sections"]["labs"]["skipped"]
    assert any("no CUDA" in note for note in report["notes"])
    assert report["machine"]["device"] == "cpu"
    assert "no CUDA" in (tmp_path / "benchmarks-gpu.md").read_text()


def test_missing_tools_are_skipped_not_faked(monkeypatch):
    monkeypatch.setattr(bench, "have", lambda module: False)
    assert "nbgrader" in bench.bench_grading(bench.Path("."))["skipped"]


def test_render_reports_unreached_targets_honestly():
    report = {"command": "python -m rlprep bench", "profile": "smoke", "wall_s": 1.0, "notes": [],
              "machine": {"date_utc": "2026-11-30 04:00 UTC", "cpu_count": 2, "cpu": "x86_64", "device": "cpu",
                          "torch": "2"},
              "sections": {"target": {"start_accuracy": 0.5, "target_accuracy": 0.6, "bound_s": 30.0,
                                      "eval_prompts": 200, "setting": "8x8", "sft_steps": 250,
                                      "ours": {"reached": False, "train_s": 30.4, "steps": 40, "final_accuracy": 0.55},
                                      "trl": {"skipped": "trl is not installed"}}}}
    md = bench.render_markdown(report)
    assert "not reached in 30 s" in md and "trl is not installed" in md


def test_rollout_counts_tokens_of_both_samplers(monkeypatch):
    from rlprep.profiles import get_profile

    out = bench.bench_rollout(get_profile("smoke"), torch.device("cpu"), repeats=1, batch=4, new_tokens=4)
    for name in ("ours", "hf_generate"):
        assert 4 <= out[name]["tokens_per_call"] <= 16  # >= 1 token per row, <= batch x new tokens
        assert out[name]["tokens_per_s"] > 0
    assert out["ours_over_hf"] == pytest.approx(out["ours"]["tokens_per_s"] / out["hf_generate"]["tokens_per_s"])

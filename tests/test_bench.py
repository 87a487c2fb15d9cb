"""``rlprep bench``: section selection, skip paths (no CUDA / trl / nbgrader), report files, rollout counting,
the renderer against the committed report, and the ``python -m rlprep.bench`` entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from rlprep import bench  # noqa: E402
from rlprep.bench import report as bench_report  # noqa: E402
from rlprep.bench.generation import bench_rollout  # noqa: E402
from rlprep.bench.grading import bench_grading  # noqa: E402
from rlprep.bench.labs import LAB_SHARES  # noqa: E402
from rlprep.bench.schedule import GPU_SECTIONS  # noqa: E402
from rlprep.errors import RlprepError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _hide(monkeypatch, *modules):
    """Make ``modules`` unimportable, as on a GPU image without them (``sys.modules[name] = None``)."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _args(tmp_path, **kw):
    base = dict(gpu=False, quick=True, only=None, profile=None, repeats=None, target_seconds=None,
                target_points=None, out=str(tmp_path), budget_seconds=None, dry_run=False, notes_only=False)
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
def test_notes_only_rerenders_the_stored_figures_with_the_edited_notes(tmp_path):
    with pytest.raises(RlprepError, match="make bench"):  # nothing measured yet: say how to measure
        bench.run(_args(tmp_path, notes_only=True))
    assert bench.run(_args(tmp_path, only="tests")) == 0
    figures = json.loads((tmp_path / "benchmarks.json").read_text())["sections"]
    (tmp_path / "benchmarks-notes.md").write_text("## A note written after the run\n\nIt cites the run above.\n")
    assert bench.run(_args(tmp_path, notes_only=True)) == 0
    report = json.loads((tmp_path / "benchmarks.json").read_text())
    assert report["sections"] == figures  # nothing was re-measured
    md = (tmp_path / "benchmarks.md").read_text()
    assert "## A note written after the run" in md and "## Test suite" in md
    (tmp_path / "benchmarks-notes.md").unlink()  # a removed notes file leaves the report too
    assert bench.run(_args(tmp_path, notes_only=True)) == 0
    assert "A note written after the run" not in (tmp_path / "benchmarks.md").read_text()
    with pytest.raises(RlprepError, match="drop --gpu"):
        bench.run(_args(tmp_path, notes_only=True, gpu=True))


def test_gpu_mode_without_cuda_skips_labs_with_a_note(tmp_path):
    assert bench.run(_args(tmp_path, gpu=True, only="labs,tests")) == 0
    report = json.loads((tmp_path / "benchmarks-gpu.json").read_text())
    assert "no CUDA" in report["sections"]["labs"]["skipped"]
    assert any("no CUDA" in note for note in report["notes"])
    assert report["machine"]["device"] == "cpu"
    assert "no CUDA" in (tmp_path / "benchmarks-gpu.md").read_text()


def test_missing_tools_are_skipped_not_faked(monkeypatch):
    from rlprep.bench.classroom import bench_classroom

    _hide(monkeypatch, "nbgrader")
    assert "nbgrader" in bench_grading(Path("."))["skipped"]
    assert bench_classroom()["skipped"] == "nbgrader is not installed"


def test_classroom_section_renders_rates_and_a_grade_that_differs():
    report = {"command": "python -m rlprep bench --only classroom", "profile": "smoke", "wall_s": 1.0, "notes": [],
              "machine": {"date_utc": "2026-12-02 04:00 UTC", "cpu_count": 2, "cpu": "x86_64", "device": "cpu",
                          "torch": "2"},
              "sections": {"classroom": {"students": 4, "lab": "lab01_gae", "sandbox": "bubblewrap",
                                         "gradebook": "SQLite",
                                         "serial": {"per_minute": 6.0, "seconds": 40.0, "mismatches": []},
                                         "jobs": {"1": {"seconds": 40.0, "graded": 4, "per_minute": 6.04,
                                                        "identical_to_serial": True, "differ": []},
                                                  "2": {"seconds": 25.0, "graded": 4, "per_minute": 9.6,
                                                        "identical_to_serial": False, "differ": ["s03 lab01_gae"]}}}}}
    md = bench_report.render_markdown(report)
    assert "4 simulated students x lab01_gae" in md and "every grade as the lab's tests give it" in md
    assert "| 1 | 6.0 | 40.0 | yes |" in md and "| 2 | 9.6 | 25.0 | NO: s03 lab01_gae |" in md


def test_classroom_section_says_what_the_rate_means_for_a_course():
    section = {"students": 12, "lab": "lab01_gae", "sandbox": "bubblewrap", "gradebook": "SQLite",
               "serial": {"per_minute": 30.0, "seconds": 24.0, "mismatches": []}, "cpu_count": 2,
               "loadavg_1m": [5.04, 6.5],
               "jobs": {"1": {"seconds": 20.0, "graded": 12, "per_minute": 36.0, "identical_to_serial": True,
                              "differ": []},
                        "2": {"seconds": 16.0, "graded": 12, "per_minute": 45.0, "identical_to_serial": True,
                              "differ": []}}}
    report = {"command": "python -m rlprep bench --only classroom", "profile": "smoke", "wall_s": 1.0, "notes": [],
              "machine": {"date_utc": "2026-12-06 00:10 UTC", "cpu_count": 2, "cpu": "x86_64", "device": "cpu",
                          "torch": "2"}, "sections": {"classroom": section}}
    md = " ".join(bench_report.render_markdown(report).split())
    assert "on 2 cores with a 1-minute load average of 5.0 at the start and 6.5 at the end" in md
    assert "at best 45.0 submissions/minute (2 process(es)), so 200 students x 9 labs (1,800 submissions) would " \
           "take 40 minutes" in md
    assert "this figure does not claim the target" in md


def test_bench_help_names_the_classroom_section():
    import argparse

    parser = argparse.ArgumentParser()
    bench.configure(parser)
    assert "classroom: submissions/minute" in " ".join(parser.format_help().split())


def test_render_reports_unreached_targets_honestly():
    report = {"command": "python -m rlprep bench", "profile": "smoke", "wall_s": 1.0, "notes": [],
              "machine": {"date_utc": "2026-11-30 04:00 UTC", "cpu_count": 2, "cpu": "x86_64", "device": "cpu",
                          "torch": "2"},
              "sections": {"target": {"start_accuracy": 0.5, "target_accuracy": 0.6, "bound_s": 30.0,
                                      "eval_prompts": 200, "setting": "8x8", "sft_steps": 250,
                                      "ours": {"reached": False, "train_s": 30.4, "steps": 40, "final_accuracy": 0.55},
                                      "trl": {"skipped": "trl is not installed"}}}}
    md = bench_report.render_markdown(report)
    assert "not reached in 30 s" in md and "trl is not installed" in md


def test_rollout_counts_tokens_of_both_samplers(monkeypatch):
    from rlprep.profiles import get_profile

    out = bench_rollout(get_profile("smoke"), torch.device("cpu"), repeats=1, batch=4, new_tokens=4)
    for name in ("ours", "hf_generate"):
        assert 4 <= out[name]["tokens_per_call"] <= 16  # >= 1 token per row, <= batch x new tokens
        assert out[name]["tokens_per_s"] > 0
    assert out["ours_over_hf"] == pytest.approx(out["ours"]["tokens_per_s"] / out["hf_generate"]["tokens_per_s"])


def test_gpu_check_dry_run_end_to_end_without_trl_or_nbgrader(tmp_path, monkeypatch):
    """`make gpu-check`'s code path on the CPU (tiny budgets): every lab trains, every section reports, the report,
    JSON and figure land in $OUT, and the missing tools are skipped with a note, not faked."""
    _hide(monkeypatch, "trl", "nbgrader")
    monkeypatch.setenv("OUT", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    monkeypatch.setenv("RLPREP_HOME", str(tmp_path / "home"))  # a lab stopped at its budget saves its run here
    assert bench.run(_args(None, gpu=True, quick=False, out=None, dry_run=True)) == 0
    report = json.loads((tmp_path / "benchmarks-gpu.json").read_text())
    assert report["dry_run"] is True and report["machine"]["device"] == "cpu"
    assert set(report["sections"]) == set(GPU_SECTIONS)
    labs = report["sections"]["labs"]
    assert set(LAB_SHARES) <= set(labs)
    for lab in LAB_SHARES:
        assert "error" not in labs[lab], f"{lab}: {labs[lab].get('error')}"
        assert labs[lab]["steps"] >= 1 and labs[lab]["curve"]["values"], lab
    for name, section in report["sections"].items():  # every section ran through its module, none failed
        assert "error" not in section, f"{name}: {section['error']}"
    assert "table_median" in report["sections"]["image"] and report["sections"]["rollout"]["ours"]["tokens_per_s"] > 0
    assert report["sections"]["steps"]["grpo"]["trl"] == {"skipped": "trl is not installed"}
    assert report["sections"]["steps"]["grpo"]["ours"]["steps_per_s"] > 0
    assert report["sections"]["grading"]["skipped"] == "nbgrader is not installed"
    md = (tmp_path / "benchmarks-gpu.md").read_text()
    for line in ("skipped: trl is not installed", "skipped: nbgrader is not installed", "DRY RUN",
                 "## Labs in the smoke profile", "| lab05_grpo |", "| lab07_infonce |"):
        assert line in md, line
    assert (tmp_path / report["figure"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dry_run_belongs_to_the_gpu_half(tmp_path):
    with pytest.raises(RlprepError):
        bench.run(_args(tmp_path, dry_run=True))


def test_gpu_section_is_spliced_into_benchmarks_md_once():
    cpu_md = "# Benchmarks\n\n## Test suite\n\n12 s\n"
    gpu_v1 = "# Benchmarks\n\nGenerated on H200.\n\n## Labs in the gpu profile\n\n| lab05_grpo | 80 |\n"
    once = bench_report.splice_gpu_section(cpu_md, gpu_v1)
    assert once.startswith(cpu_md.rstrip()) and "### Labs in the gpu profile" in once
    assert "## GPU: `make gpu-check`" in once and "Generated on H200." in once
    gpu_v2 = gpu_v1.replace("80", "75")
    twice = bench_report.splice_gpu_section(once, gpu_v2)
    assert twice.count(bench_report.GPU_BEGIN) == 1 and "| lab05_grpo | 75 |" in twice and "| 80 |" not in twice


def test_committed_report_renders_from_its_json():
    """docs/benchmarks.md is exactly what the renderer makes of docs/benchmarks.json (figures, notes, GPU section):
    nobody edited a figure by hand, and moving the renderer changed no byte of the report."""
    report = json.loads((ROOT / "docs" / "benchmarks.json").read_text())
    assert bench_report.render_markdown(report) + "\n" == (ROOT / "docs" / "benchmarks.md").read_text()


@pytest.mark.parametrize("argv", [["--only", "steps,warp"], ["--dry-run"], ["--only", "labs"]])
def test_module_entry_point_rejects_bad_options_with_error_and_fix(argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-m", "rlprep.bench", *argv], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr and "fix:" in proc.stderr and "Traceback" not in proc.stderr


def test_module_entry_point_runs_like_the_cli_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-m", "rlprep.bench", "--only", "tests", "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "benchmarks.json").read_text())
    assert report["command"] == f"python -m rlprep bench --only tests --out {tmp_path}"
    assert set(report["sections"]) == {"tests"} and (tmp_path / "benchmarks.md").exists()


def test_time_to_target_counts_the_first_evaluation_at_target_and_the_dip():
    from rlprep.bench.target import spread, summarise

    curve = [[10, 1.0, 0.50], [20, 2.0, 0.41], [30, 3.0, 0.62], [40, 4.0, 0.70], [50, 5.0, 0.75]]
    run = summarise(curve, start=0.48, target=0.70, seconds=60.0)
    assert (run["reached"], run["steps"], run["train_s"]) == (True, 40, 4.0)  # the first hit, not the last row
    assert run["dip"] == pytest.approx(0.41 - 0.48)
    missed = summarise(curve[:3], start=0.48, target=0.70, seconds=3.0)
    assert (missed["reached"], missed["steps"], missed["train_s"]) == (False, 30, 3.0)  # counted at its bound
    both = spread([run, missed, summarise(curve, 0.48, 0.62, 60.0)])
    assert both["reached"] == 2 and both["seeds"] == 3
    assert both["steps"] == {"median": 30, "min": 30, "max": 40}


def test_target_report_gives_medians_spread_and_every_seed():
    run = {"reached": True, "steps": 200, "train_s": 50.0, "dip": -0.02}
    slow = {"reached": False, "steps": 400, "train_s": 240.0, "dip": 0.01}
    stats = {"reached": 1, "seeds": 2, "steps": {"median": 300, "min": 200, "max": 400},
             "train_s": {"median": 145.0, "min": 50.0, "max": 240.0}, "dip": {"median": -0.005, "min": -0.02,
                                                                                "max": 0.01}}
    report = {"command": "python -m rlprep bench", "profile": "smoke", "wall_s": 1.0, "notes": [],
              "machine": {"date_utc": "2026-12-01 04:00 UTC", "cpu_count": 2, "cpu": "x86_64", "device": "cpu",
                          "torch": "2"},
              "sections": {"target": {"start_accuracy": 0.5, "target_accuracy": 0.75, "bound_s": 240.0, "points": 25,
                                      "eval_prompts": 200, "setting": "8x8", "warm_start": "sft_stop_accuracy=0.5",
                                      "ours": {"runs": [run, slow], **stats}, "trl": {"runs": [slow, run], **stats},
                                      "trl_over_ours_train_s": 1.0, "trl_over_ours_steps": 1.0}}}
    md = bench_report.render_markdown(report)
    assert "| ours | 1/2 | 300 (200-400) | 145.0 (50.0-240.0) |" in md
    assert "| 0 | 200 | 50.0 | 400 | not reached in 240 s |" in md and "1.00x" in md


def test_interleaved_timer_times_one_of_our_steps_after_each_trl_step():
    from rlprep.bench.steps import interleaved_timer

    calls = []
    timer = interleaved_timer(lambda: calls.append("ours") or {"n": len(calls)}, torch.device("cpu"))
    for _ in range(3):
        timer.on_step_begin(None, None, None)
        calls.append("trl")
        timer.on_step_end(None, None, None)
    assert calls == ["trl", "ours"] * 3
    assert len(timer.trl_times) == len(timer.ours_times) == 3 and [m["n"] for m in timer.ours_metrics] == [2, 4, 6]


def test_a_run_of_some_sections_keeps_the_others_with_their_date(tmp_path):
    stored = {"machine": {"date_utc": "2026-11-30 08:24 UTC"}, "sections": {"steps": {"old": 1}, "target": {"t": 1}}}
    (tmp_path / "benchmarks.json").write_text(json.dumps(stored))
    report = {"sections": {"steps": {"new": 1}}}
    bench_report.carry_over(report, tmp_path)
    assert report["sections"] == {"steps": {"new": 1}, "target": {"t": 1}}  # the measured one wins
    assert report["carried_over"] == {"target": "2026-11-30 08:24 UTC"}


def test_each_run_that_measured_steps_appends_one_numbered_line(tmp_path):
    from rlprep.bench import report as rep

    report = {"command": "python -m rlprep bench --only steps", "machine": {"cpu_count": 2}}
    rep.log_step_run(report, {"steps": {"grpo": {"ratio": 1.9}}}, tmp_path)
    rep.log_step_run(report, {"steps": {"grpo": {"ratio": 1.8}}, "rollout": {"ours_over_hf": 1.2}}, tmp_path)
    rows = [json.loads(line) for line in (tmp_path / rep.STEP_RUNS).read_text().splitlines()]
    assert [r["run"] for r in rows] == [1, 2]
    assert [r["steps"]["grpo"]["ratio"] for r in rows] == [1.9, 1.8]
    assert "rollout" not in rows[0] and rows[1]["rollout"]["ours_over_hf"] == 1.2


def test_a_run_without_the_steps_section_logs_no_step_run(tmp_path):
    """Sections carried over from an older report are not this run's measurements: nothing is appended."""
    from rlprep.bench import report as rep

    stored = {"machine": {"date_utc": "2026-01-01 00:00 UTC"}, "sections": {"steps": {"grpo": {"ratio": 1.5}}}}
    (tmp_path / "benchmarks.json").write_text(json.dumps(stored))
    assert bench.run(_args(tmp_path, only="tests")) == 0
    assert "steps" in json.loads((tmp_path / "benchmarks.json").read_text())["sections"]  # carried over
    assert not (tmp_path / rep.STEP_RUNS).exists()

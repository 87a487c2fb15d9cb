"""Issue 38, row 1: the first plot of a lab or a walkthrough within a minute of `make lab` in the smoke profile.

A first run used to wait minutes: the notebook kernel built the warm start itself, with two torch threads on a
shared 2-core machine (notebook 06's first plot took 428.8 s here, 48.3 s with one thread). Now `make lab` builds
what the notebooks load (`rlprep models build --task all`, :mod:`rlprep.course_builds`) and kernels get one torch
thread on 2 cores (:mod:`rlprep.lab_env`). These tests start from a fresh cache holding only what that step builds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlprep.bench.first_plot import LAB01, NB06, TARGET_S, time_to_first_plot
from rlprep.lab_env import kernel_environment, kernel_threads

ROOT = Path(__file__).resolve().parents[1]
BOUND_S = 150.0
"""Generous against the 60 s target (`make test` runs 4 workers on 2 cores, and other jobs share the machine), and
well under the 284-428 s of a first run that built its warm start in the kernel."""


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A fresh RLPREP_CACHE holding what `make lab`'s build step leaves: built once in the suite's shared cache (make
    test runs the same step up front, so this only verifies it), then copied."""
    from rlprep.course_builds import build_course_starts, copy_course_builds
    from rlprep.paths import cache_dir
    from rlprep.profiles import get_profile

    build_course_starts("smoke")
    cache = tmp_path_factory.mktemp("first-plot") / "cache"
    copy_course_builds(get_profile("smoke"), cache_dir(), cache)
    return cache


def _kernel_env(tmp_path, cache: Path) -> dict[str, str]:
    return dict(kernel_environment(os.environ), RLPREP_CACHE=str(cache), RLPREP_HOME=str(tmp_path / "home"))


def test_kernels_get_one_torch_thread_on_two_cores(monkeypatch):
    assert [kernel_threads(n) for n in (1, 2, 4, 8, 64)] == [1, 1, 2, 4, 4]
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("rlprep.lab_env.usable_cores", lambda: 2)
    assert kernel_environment({"PATH": "/usr/bin"})["OMP_NUM_THREADS"] == "1"
    assert kernel_environment({"OMP_NUM_THREADS": "3"})["OMP_NUM_THREADS"] == "3"  # the learner's own setting wins


def test_rlprep_lab_gives_its_kernels_that_environment():
    out = subprocess.run([sys.executable, "-m", "rlprep", "lab", "--dry-run"], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}, cwd=ROOT).stdout
    assert f"OMP_NUM_THREADS={kernel_threads()}" in out, out


def test_make_lab_builds_the_warm_starts_before_jupyterlab_starts():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lab:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    build = recipe.index("rlprep models build --task all")
    assert build < recipe.index("rlprep lab"), recipe


def test_what_make_lab_builds_is_all_the_first_cells_load(fresh, monkeypatch):
    """Lab 1's training cell loads the reviews warm start and the reward model, notebook 06 the arithmetic one: from
    the fresh cache nothing is built (no new file appears)."""
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.reward_model import load_reward_model

    monkeypatch.setenv("RLPREP_CACHE", str(fresh))
    before = sorted(p.relative_to(fresh) for p in fresh.rglob("*"))
    smoke = get_profile("smoke")
    policy, tokenizer = load_policy("reviews", smoke)
    load_reward_model(smoke, policy=policy, tokenizer=tokenizer)
    load_policy("arithmetic", smoke)
    assert sorted(p.relative_to(fresh) for p in fresh.rglob("*")) == before


@pytest.mark.parametrize("name", [LAB01, NB06], ids=["lab01", "nb06"])
def test_first_plot_after_make_lab(fresh, tmp_path, name):
    env = _kernel_env(tmp_path, fresh)
    result = time_to_first_plot(ROOT / name, "smoke", env=env)
    assert result["built"] == [], result                     # no cell waited on a build
    assert result["threads"] == int(env["OMP_NUM_THREADS"]), result
    assert result["seconds"] < BOUND_S, result                # the target is TARGET_S; see BOUND_S
    print(f"{name}: first figure after {result['seconds']} s (target {TARGET_S:.0f} s)")


@pytest.mark.slow
def test_from_a_fresh_clone_make_labs_build_then_every_first_plot(tmp_path):
    """The whole path on an empty cache: `rlprep models build --task all` (make lab's step), then lab 1's first figure,
    its training figure and notebook 06's first figure (what `make bench` reports)."""
    from rlprep.bench.first_plot import bench_first_plot

    result = bench_first_plot(ROOT, "smoke", cache=tmp_path / "cache")
    for label, timed in result["timed"].items():
        assert timed["built"] == [] and timed["seconds"] < BOUND_S, (label, timed)

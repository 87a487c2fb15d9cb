"""What every attack test needs: a lab01 submission with the attacker's cells, graded by the real command.

Each attack grades through ``python -m rlprep grade NB --json`` in a child process, as a learner would, so a
grader that hangs, leaks memory or runs planted code shows up as a timeout, a peak RSS or a wrong score rather
than as a broken test process. The child runs under a small wrapper that reports its peak RSS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

import rlprep
from grading_helpers import release, variant

SRC = Path(rlprep.__file__).resolve().parents[1]

# A wrong answer that passes no test honestly (lists, not float arrays; zeros, not the advantages).
ZEROS_GAE = """
def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    return [0.0] * len(rewards), [0.0] * len(rewards)
"""

# Runs the grader as a child and prints its peak RSS (kB) last on stderr.
_WRAPPER = ("import resource, subprocess, sys\n"
            "rc = subprocess.run(sys.argv[1:]).returncode\n"
            "print('peak-rss-kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(rc)\n")


@dataclass
class Graded:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mb: float

    @property
    def report(self) -> dict:
        try:
            return json.loads(self.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise AssertionError(f"no JSON report (exit {self.rc}):\n{self.stdout[-2000:]}\n{self.stderr[-3000:]}")

    @property
    def score(self) -> float:
        return self.report["score"]

    def messages(self) -> dict[str, str]:
        return {c["grade_id"]: c["message"] for c in self.report["cells"]}


def cell(source: str, cell_id: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source.strip("\n"), id=cell_id)


def submission(folder: Path, answer: str, extra_cells=(), drop_tests: bool = False) -> Path:
    """``folder/lab01_gae.ipynb``: the released lab01 with ``answer`` in its answer cell and ``extra_cells``
    (learner cells) right after it; ``drop_tests`` deletes every test cell."""
    nb = variant(answer, base=release(), extra_cells=extra_cells)
    if drop_tests:
        nb.cells = [c for c in nb.cells if not c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lab01_gae.ipynb"
    nbformat.write(nb, path)
    return path


def untouched(folder: Path) -> Path:
    """The released lab01 as a learner first sees it (every answer raises NotImplementedError)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lab01_gae.ipynb"
    nbformat.write(release(), path)
    return path


def start(path: Path, env: dict, *, cwd: Path | None = None, args=(), python: str = sys.executable
          ) -> subprocess.Popen:
    """Start ``python -m rlprep grade PATH --json`` in a child process (its own process group) and return it."""
    cwd = Path(cwd or path.parent)
    full_env = {**os.environ, "PYTHONPATH": str(SRC), "PWD": str(cwd), **env}  # PWD as a shell would set it
    argv = [sys.executable, "-c", _WRAPPER, python, "-m", "rlprep", "grade", str(path), "--json", *args]
    return subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def grade(path: Path, env: dict, *, cwd: Path | None = None, timeout: float = 150, args=(),
          python: str = sys.executable) -> Graded:
    """Grade ``path`` with ``python -m rlprep grade --json`` in a child process; kill it after ``timeout``."""
    t0 = time.monotonic()
    proc = start(path, env, cwd=cwd, args=args, python=python)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        raise AssertionError(f"grading did not finish within {timeout:g} s (the attack hung the grader)") from None
    peak = [line for line in err.splitlines() if line.startswith("peak-rss-kb")]
    rss = int(peak[-1].split()[1]) / 1024 if peak else float("nan")
    return Graded(proc.returncode, out, err, time.monotonic() - t0, rss)

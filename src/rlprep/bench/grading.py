"""The ``grading`` section: seconds of ``rlprep grade`` per ``solutions/*/*.ipynb`` (needs nbgrader)."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rlprep.bench import machine


def bench_grading(root: Path) -> dict:
    """``{lab: {"seconds", "exit_code", "result"}}``: each solution notebook graded in a fresh process."""
    if not machine.have("nbgrader"):
        return {"skipped": "nbgrader is not installed"}
    out = {}
    for nb in sorted(glob.glob(str(root / "solutions" / "*" / "*.ipynb"))):
        lab = Path(nb).stem
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "rlprep", "grade", nb, "--json"], capture_output=True,
                              text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root / "src")})
        seconds = time.perf_counter() - t0
        row = {"seconds": seconds, "exit_code": proc.returncode}
        with contextlib.suppress(ValueError, IndexError):
            row["result"] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
            if not row["result"]:
                row["result"] = json.loads(proc.stdout)
        out[lab] = row
    return out or {"skipped": "no solutions/*/*.ipynb found"}

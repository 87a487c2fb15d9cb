"""The ``classroom`` section: autograde throughput of a small simulated class, in submissions per minute, with 1 and
2 processes (``rlprep classroom autograde --jobs N``), and whether their grades are those of the serial run.

A class of ``students`` x ``lab`` is run once through nbgrader's whole cycle (``rlprep.classroom.simulate``, serial
autograde, SQLite in a temp folder, every grade compared with what the lab's tests give); the collected class is
then autograded again with each ``jobs``, and each run's ``grades.csv`` is compared row for row with the serial
one. The time counted is autograde + feedback (what scales with a class), as in ``make classroom``'s summary.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from rlprep.bench import machine

COLUMNS = ("raw_score", "late_submission_penalty", "score", "max_score")


def bench_classroom(students: int = 4, lab: str = "lab01_gae", jobs: tuple[int, ...] = (1, 2)) -> dict:
    """``{"students", "lab", "serial", "jobs": {n: {"seconds", "per_minute", "identical_to_serial", ...}},
    "cpu_count", "loadavg_1m": [at the start, at the end]}``."""
    if not machine.have("nbgrader"):
        return {"skipped": "nbgrader is not installed"}
    from rlprep.classroom.autograde import autograde_lab
    from rlprep.classroom.cycle import Classroom
    from rlprep.classroom.simulate import read_grades, simulate
    from rlprep.grading import sandbox

    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rlprep-bench-classroom-") as tmp:
        out = Path(tmp) / "run"
        t0 = time.perf_counter()
        report = simulate(students, [lab], out, jobs=1, log=lambda *a: None)
        serial = _rows(read_grades(Path(report.grades_csv)))
        result = {"students": students, "lab": lab, "sandbox": sandbox.probe(), "gradebook": "SQLite",
                  "serial": {"per_minute": report.per_minute, "seconds": report.autograde_seconds,
                             "whole_cycle_s": time.perf_counter() - t0, "mismatches": report.mismatches},
                  "jobs": {}}
        room = Classroom(out)
        for n in jobs:
            run = autograde_lab(room, lab, jobs=n)
            rows = _rows(read_grades(room.export(out / f"grades-jobs{n}.csv")))
            differ = sorted(f"{k[0]} {k[1]}" for k in set(rows) | set(serial) if rows.get(k) != serial.get(k))
            result["jobs"][str(n)] = {"seconds": run.seconds, "graded": len(run.graded),
                                      "per_minute": 60.0 * len(run.graded) / max(run.seconds, 1e-9),
                                      "identical_to_serial": not differ and not run.refused, "differ": differ}
    result["cpu_count"] = len(os.sched_getaffinity(0))
    result["loadavg_1m"] = [load_start, os.getloadavg()[0]]
    return result


def _rows(grades: dict) -> dict:
    return {key: tuple(row[c] for c in COLUMNS) for key, row in grades.items()}

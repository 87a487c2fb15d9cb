"""Attacks on the grader's process: stop it, outlive it, or make it restart the kernel forever."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from harness import ZEROS_GAE, cell, grade, submission


def _processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def test_kernel_cannot_stop_the_grader(tmp_path, env, sandboxed):
    attack = cell("import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)", "attack")
    graded = grade(submission(tmp_path, ZEROS_GAE, [attack]), env, timeout=120)
    assert graded.score == 0, graded.report


def test_no_process_the_kernel_starts_outlives_the_grading(tmp_path, env, sandboxed):
    marker = f"rlprep-attack-{uuid.uuid4().hex}"
    attack = cell(f"""
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""", "attack")
    try:
        graded = grade(submission(tmp_path, ZEROS_GAE, [attack]), env)
        assert graded.score == 0, graded.report
        end = time.monotonic() + 10
        while _processes_with(marker) and time.monotonic() < end:
            time.sleep(0.2)
        assert not _processes_with(marker), "a process started by the learner's code outlived the grading"
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, 9)


def test_exit_on_every_replay_cannot_stretch_the_grading(tmp_path, env):
    # The answer cell runs cleanly once (so it is replayed after a restart) and ends the kernel on every later
    # run; a second cell ends it the first time. Restarts are capped and the deadline covers the replays.
    answer = ZEROS_GAE + """
import os, pathlib
marker = pathlib.Path("replay-marker")
if marker.exists():
    os._exit(1)
marker.write_text("ran once")
"""
    killer = cell("import os\nos._exit(1)", "killer")
    graded = grade(submission(tmp_path, answer, [killer]), env, timeout=100, args=("--deadline", "30"))
    assert graded.score == 0, graded.report
    assert graded.seconds < 90, graded.seconds

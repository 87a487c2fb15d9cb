"""Attacks on the grading machine's disk: the kernel fills its home, its /tmp and the folders it shares with the
grader (the call outbox), and the grader is killed while the files are there."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from harness import ZEROS_GAE, cell, grade, start, submission

MiB = 2**20

# Writes 64 MiB files into a folder until 1 GiB or the first OSError (a full or capped filesystem); the total
# actually on disk is read back from the files, so a short last write counts for what it wrote.
FILL = r'''
import os, pathlib
def fill(folder, total=2**30, chunk=b"x" * 64 * 2**20):
    folder = pathlib.Path(folder)
    try:
        for i in range(total // len(chunk)):
            with open(folder / f"fill-{i}", "wb") as f:
                f.write(chunk)
    except OSError:
        pass
    return sum(p.stat().st_size for p in folder.glob("fill-*"))

def run_folder():
    """The grader's folder for this kernel (the connection file sits in its inbox)."""
    import ipykernel.connect
    return pathlib.Path(ipykernel.connect.get_connection_file()).resolve().parent.parent
'''


def _bytes_under(folder: Path) -> int:
    """Disk blocks (not apparent sizes) used by the regular files under ``folder``."""
    used = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                used += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return used


class DiskWatch:
    """The largest disk use seen under ``folder`` while the block runs (sampled every 0.1 s)."""

    def __init__(self, folder: Path):
        self.folder, self.peak, self._stop = folder, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _bytes_under(self.folder))
            time.sleep(0.1)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _grader_tmp(tmp_path: Path, env: dict) -> tuple[Path, dict]:
    """A private TMPDIR for the grader, so that every folder it makes for the kernel can be watched."""
    folder = tmp_path / "grader-tmp"
    folder.mkdir()
    return folder, {**env, "TMPDIR": str(folder)}


def test_home_and_tmp_are_capped_and_never_reach_the_hosts_disk(tmp_path, env, sandboxed):
    from rlprep.grading.sandbox import SCRATCH_BYTES

    attack = cell(FILL + r'''
import tempfile
written = {"home": fill(os.path.expanduser("~")), "tmp": fill("/tmp"), "tempdir": tempfile.gettempdir()}

def compute_gae(*args, **kwargs):
    raise ValueError(f"wrote {written}")
''', "attack")
    folder, genv = _grader_tmp(tmp_path, env)
    with DiskWatch(folder) as disk:
        graded = grade(submission(tmp_path, ZEROS_GAE, [attack]), genv)
    message = graded.messages()["test_gae_by_hand"]
    assert "raised ValueError: wrote {" in message, graded.report
    written = eval(message.split("wrote ", 1)[1].split("}")[0] + "}")  # our own dict literal
    assert 0 < written["home"] <= SCRATCH_BYTES and 0 < written["tmp"] <= SCRATCH_BYTES, written
    assert written["tempdir"] == "/tmp", written  # tempfile finds the capped /tmp writable
    assert disk.peak < 16 * MiB, f"{disk.peak / MiB:.0f} MiB of the kernel's files reached the grader's disk"


def test_files_do_not_outlive_a_killed_grader(tmp_path, env, sandboxed):
    # 64 MiB in home and in /tmp, then a marker in the outbox (the one folder the test can see), then a long sleep:
    # the grader is killed (SIGKILL) once the marker is there, and nothing the kernel wrote may stay behind.
    attack = cell(FILL + r'''
import tempfile, time
fill(os.path.expanduser("~"), total=64 * 2**20)
fill(tempfile.gettempdir(), total=64 * 2**20)
(run_folder() / "outbox" / "ready").write_text("ready")
time.sleep(120)
''', "attack")
    folder, genv = _grader_tmp(tmp_path, env)
    proc = start(submission(tmp_path, ZEROS_GAE, [attack]), genv, args=("--cell-timeout", "200"))
    try:
        end = time.monotonic() + 120
        while not list(folder.glob("*/outbox/ready")) and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.2)
        assert list(folder.glob("*/outbox/ready")), f"the attack never got to its marker:\n{proc.communicate()}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    time.sleep(1)  # the sandbox dies with its parent
    assert _bytes_under(folder) < MiB, f"{_bytes_under(folder) / MiB:.0f} MiB stayed on disk after the grader died"


def test_the_folders_shared_with_the_grader_are_capped(tmp_path, env):
    from rlprep.grading.sandbox import EXCHANGE_BYTES

    attack = cell(FILL + 'fill(run_folder() / "outbox")\n', "attack")
    folder, genv = _grader_tmp(tmp_path, env)
    with DiskWatch(folder) as disk:
        graded = grade(submission(tmp_path, ZEROS_GAE, [attack]), genv)
    assert disk.peak < EXCHANGE_BYTES + 256 * MiB, f"the kernel wrote {disk.peak / MiB:.0f} MiB to the grader's disk"
    assert graded.score == 0, graded.report
    assert "into the folders it shares with the grader" in graded.messages()["test_gae_by_hand"], graded.report
    assert _bytes_under(folder) == 0

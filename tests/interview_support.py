"""Helpers shared by the tests/test_interview_*.py files: the fixture bank and running `rlprep mock` as a process."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

FIXTURE_BANK = Path(__file__).resolve().parent / "fixtures" / "bank"
SRC = Path(__file__).resolve().parents[1] / "src"


def cli_env(home: Path, bank: Path = FIXTURE_BANK) -> dict[str, str]:
    env = dict(os.environ, RLPREP_HOME=str(home), RLPREP_BANK=str(bank), PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(SRC)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_cli(args: list[str], home: Path, stdin: str | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rlprep", *args], input=stdin, capture_output=True, text=True,
                          env=cli_env(home), timeout=60, **kw)


class LiveProcess:
    """`rlprep mock` with a pipe on stdin, read line by line so a test can act at a given point of the session."""

    def __init__(self, args: list[str], home: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "rlprep", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(home))
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def write(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def wait_for(self, marker: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
                continue
            self.seen.append(line)
            if marker in line:
                return
        raise AssertionError(f"{marker!r} never printed; output so far:\n{''.join(self.seen)}")

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        """Wait for the process to exit; returns (exit status, all stdout, stderr)."""
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._thread.join(timeout=timeout)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code, "".join(self.seen), self.proc.stderr.read()

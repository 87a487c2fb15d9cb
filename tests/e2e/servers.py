"""Servers the e2e tests start: a free port, and a Jupyter server run in its own process group until the test ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def jupyterlab_argv(port: int, token: str, served: Path, work: Path) -> list[str]:
    """JupyterLab serving ``served`` on ``port`` with a fresh workspace and settings under ``work`` (a saved workspace
    would restore earlier tabs, and Run All would run in them), no news and no update check."""
    return [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={served}",
            f"--LabApp.workspaces_dir={work / 'workspaces'}", f"--LabApp.user_settings_dir={work / 'settings'}",
            "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]


@contextlib.contextmanager
def jupyter_server(argv: list[str], base: str, token: str, log_path: Path, what: str, **popen):
    """Run ``argv`` (a Jupyter server listening at ``base``), wait until ``/api/status`` answers (60 s), yield, then
    stop its process group (SIGTERM, SIGKILL after 20 s). ``popen``: ``env``, ``cwd``. Fails the test, naming the
    log, when the server does not answer."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **popen)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            else:
                pytest.fail(f"{what} did not answer /api/status within 60 s; see {log_path}")
            yield proc
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # the server by its process group
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

"""``rlprep lab``: open the course in JupyterLab, in learner mode, on the start page.

Learner mode hides the instructor extensions (nbgrader's formgrader, create-assignment and course list)
and the news popup, serves the repository root, and starts on ``notebooks/00_start_here.ipynb``.
The settings (written by :mod:`rlprep.grading.learner_mode`) live in a course-local Jupyter config dir
(``build/jupyter-learner``) that is put first on ``JUPYTER_CONFIG_PATH``, so the learner's own Jupyter config
is left untouched. ``--instructor`` keeps the instructor extensions and puts an ``nbgrader_config.py`` there that
loads ``autograder/nbgrader_config.py``, so formgrader grades and shows submissions with the course's config (its
sanitised pages included) although the server runs in the repository root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from rlprep.errors import RlprepError
from rlprep.grading import learner_mode
from rlprep.interrupts import exit_status
from rlprep.lab_env import kernel_environment
from rlprep.paths import repo_root

START_PAGE = "notebooks/00_start_here.ipynb"

def _has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def build_command(root: Path, port: int, open_browser: bool) -> list[str]:
    cmd = [sys.executable, "-m", "jupyterlab", START_PAGE,
           f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           # The URL JupyterLab prints (and "/") lead to the start page, not to an empty launcher: without a
           # display nobody opens the file_to_run above, so the printed URL is all a headless learner has.
           f"--LabApp.default_url=/lab/tree/{START_PAGE}",
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if not open_browser:
        cmd.append("--no-browser")
    shell = os.environ.get("SHELL") or shutil.which("sh")
    if os.name != "nt" and shell:
        # Started without a tty (headless, nohup), JupyterLab opens its terminals as login shells, and a login
        # shell's /etc/profile resets PATH, losing .venv/bin (see run). Name the shell so it is not a login one.
        cmd.append(f"--ServerApp.terminado_settings=shell_command={shell}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8888, help="port to serve on (default 8888; the next free one is used)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser; print the URL (automatic without a display)")
    parser.add_argument("--instructor", action="store_true", help="keep nbgrader's instructor extensions (formgrader, create-assignment)")
    parser.add_argument("--dry-run", action="store_true", help="print the command and environment instead of starting JupyterLab")


def run(args: argparse.Namespace) -> int:
    root = repo_root()
    if root is None or not (root / START_PAGE).is_file():
        raise RlprepError(
            "the course notebooks were not found (rlprep lab needs a checkout of the course repository)",
            "clone the repository and run 'make lab' in it",
        )
    config_dir = root / "build" / "jupyter-learner"
    learner_mode.enable(config_dir, undo=args.instructor)
    course_config = root / "autograder" / "nbgrader_config.py"
    if args.instructor and not course_config.is_file():
        raise RlprepError(f"{course_config} is missing, and formgrader needs the course's grading config (it "
                          "sanitises the pages that show a submission)",
                          "restore it from the repository (git checkout autograder/nbgrader_config.py)")
    learner_mode.use_course_config(config_dir, course_config if args.instructor else None)
    # Kernels and terminals inherit this environment: the inline plot backend, .venv/bin first on PATH (`rlprep
    # grade` in a terminal without activating the venv) and the torch threads of a small machine (rlprep.lab_env).
    env = kernel_environment(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in [str(config_dir), env.get("JUPYTER_CONFIG_PATH", "")] if p)
    open_browser = _has_display() and not args.no_browser
    cmd = build_command(root, args.port, open_browser)
    # Two checkouts can share one virtualenv: say which one is served (the one this rlprep was imported from).
    print(f"Serving the course in {root} (rlprep from {Path(__file__).resolve().parent}, Python {sys.executable})")
    if args.dry_run:
        print("JUPYTER_CONFIG_PATH=" + env["JUPYTER_CONFIG_PATH"])
        print("PATH=" + env["PATH"])
        print("OMP_NUM_THREADS=" + env["OMP_NUM_THREADS"])
        print(" ".join(cmd))
        return 0
    if not open_browser:
        print("No display found: JupyterLab runs headless. Open the http://127.0.0.1:PORT/lab/tree/"
              f"{START_PAGE}?token=... URL it prints below in a browser on this machine; Ctrl-C twice stops it.")
    return serve(cmd, cwd=root, env=env)


def serve(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run JupyterLab in the foreground and return its exit status; Ctrl-C belongs to JupyterLab.

    The terminal sends Ctrl-C to JupyterLab too, which asks to confirm and stops on the second one: this process
    keeps waiting meanwhile (rather than killing the server on the first), then exits 130, as every rlprep
    command stopped by Ctrl-C does. SIGTERM and SIGHUP (see :mod:`rlprep.interrupts`) are passed on to it.
    """
    proc = subprocess.Popen(cmd, cwd=cwd, env=env)
    stopped: KeyboardInterrupt | None = None
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt as stop:
            stopped = stop
            if getattr(stop, "signum", signal.SIGINT) != signal.SIGINT:
                proc.send_signal(stop.signum)
    return code if stopped is None else exit_status(stopped)

"""Small promises of single commands: a fast `--help`, `profile --profile gpu`, `models list`, `lab`'s folder and
Ctrl-C convention (exit 128 + signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from rlprep.cli import main

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "nbgrader", "nbformat", "transformers")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def test_grade_help_imports_neither_torch_nor_nbgrader():
    code = textwrap.dedent(f"""
        import sys
        from rlprep.cli import main
        try:
            main(["grade", "--help"])
        except SystemExit as stop:
            assert stop.code == 0
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage: rlprep grade" in proc.stdout and proc.stdout.strip().endswith("[]"), proc.stdout


def test_profile_shows_the_gpu_profile_on_any_machine(capsys):
    assert main(["profile", "--profile", "gpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("profile: gpu (shown with --profile") and "n_embd       384" in out
    assert "device       cuda" in out


def test_models_list_flags_the_active_profiles_missing_warm_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RLPREP_CACHE", str(tmp_path))
    monkeypatch.setenv("RLPREP_PROFILE", "smoke")
    from rlprep.profiles import get_profile
    from rlprep.tinyworld.checkpoints import checkpoint_dir

    checkpoint_dir("arithmetic", get_profile("smoke")).mkdir(parents=True)  # there, though empty (so: corrupt)
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "MISSING  reviews warm start for the active profile (smoke, seed 0)" in out
    assert "rlprep models build --task multiturn" in out and "MISSING  arithmetic" not in out
    assert "CORRUPT" in out


def test_lab_says_which_checkout_it_serves(capsys):
    assert main(["lab", "--dry-run", "--no-browser"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"Serving the course in {ROOT} (rlprep from {ROOT / 'src' / 'rlprep'}")


def test_lab_leaves_ctrl_c_to_jupyterlab_then_exits_130(tmp_path):
    """The server is asked to stop by Ctrl-C (to the whole process group, as a terminal does) and takes two;
    rlprep waits for it instead of killing it on the first, then exits 130."""
    server = tmp_path / "server.py"
    server.write_text(textwrap.dedent("""
        import signal, sys, time
        seen = []
        def on_int(*_):
            seen.append(1)
            print("server: ctrl-c", len(seen), flush=True)
            if len(seen) == 2:
                sys.exit(0)
        signal.signal(signal.SIGINT, on_int)
        print("server: up", flush=True)
        while True:
            time.sleep(0.05)
    """))
    code = f"import sys; from rlprep.lab_cli import serve; sys.exit(serve([sys.executable, {str(server)!r}], '.', None))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env(),
                            start_new_session=True)
    assert proc.stdout.readline().strip() == "server: up"
    for n in (1, 2):
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.stdout.readline().strip() == f"server: ctrl-c {n}"
        time.sleep(0.2)
    assert proc.wait(timeout=20) == 130


def test_signals_stop_as_keyboard_interrupt_with_128_plus_signal_but_nohup_is_respected():
    from rlprep.interrupts import Interrupted, exit_status, signals_interrupt

    assert exit_status(KeyboardInterrupt()) == 130 and exit_status(Interrupted(signal.SIGTERM)) == 143
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)    # as under nohup
    try:
        with signals_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            try:
                signal.raise_signal(signal.SIGTERM)
                time.sleep(0.1)
                raise AssertionError("SIGTERM did not stop the block")
            except Interrupted as stop:
                assert isinstance(stop, KeyboardInterrupt) and stop.signum == signal.SIGTERM
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

"""The learner's kernel K: run cells with a timeout, survive os._exit, call functions across the wire.

Learner code (answer cells and any cell of their own) only ever runs here, never in the grader process.
When K dies (``os._exit``, a segfault) it is restarted and the cells that had run cleanly are replayed,
so later tests still see the learner's functions.
"""

from __future__ import annotations

import os
import queue
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client import KernelManager

from rlprep.grading import wire


@dataclass
class CellRun:
    """What one execution in K produced."""

    outputs: list = field(default_factory=list)  # nbformat output nodes
    status: str = "ok"  # "ok" | "error" | "timeout" | "died"
    ename: str = ""
    evalue: str = ""


class LearnerCallError(Exception):
    """The learner's function failed in K: it raised, timed out, ended the kernel or returned a bad value."""


class LearnerKernel:
    """A jupyter kernel for the learner's code, with per-cell timeouts and restart-and-replay."""

    def __init__(self, cwd: str | None = None, kernel_name: str = "python3", startup_timeout: float = 60,
                 extra_env: dict | None = None):
        self.cwd = cwd or os.getcwd()
        self.kernel_name = kernel_name
        self.startup_timeout = startup_timeout
        self.env = dict(os.environ)
        self.env.update({"RLPREP_PROFILE": "smoke", "MPLBACKEND": "Agg", "NBGRADER_EXECUTION": "autograde"})
        self.env.setdefault("OMP_NUM_THREADS", "1")
        # K imports the same rlprep as the grader (wire, asserts), whatever its working directory
        import rlprep

        paths = [str(Path(rlprep.__file__).resolve().parents[1])]
        paths += [str(Path(p).resolve()) for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        self.env.update(extra_env or {})
        self.replay: list[str] = []  # cells that ran cleanly, replayed after a restart
        self.restarts = 0
        self.km = None
        self.kc = None
        self._tmp = tempfile.TemporaryDirectory(prefix="rlprep-wire-")
        self._calls = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self.km = KernelManager(kernel_name=self.kernel_name)
        # the kernel's own stderr (its startup banner, learner warnings) never reaches the grader's output
        self.km.start_kernel(cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             extra_arguments=["--HistoryManager.hist_file=:memory:"])
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.startup_timeout)

    def shutdown(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001 - a dead kernel may refuse a clean shutdown
                pass
        self.km = self.kc = None
        self._tmp.cleanup()

    def alive(self) -> bool:
        return self.km is not None and self.km.is_alive()

    def restart(self, timeout: float = 30) -> None:
        """Start a fresh K and replay the cells that had run cleanly (each under ``timeout``)."""
        self.restarts += 1
        if self.kc is not None:
            self.kc.stop_channels()
        try:
            self.km.shutdown_kernel(now=True)
        except Exception:  # noqa: BLE001
            pass
        self.start()
        for code in list(self.replay):
            self.execute(code, timeout=timeout, record=False)

    # -- execution -------------------------------------------------------------------------
    def execute(self, code: str, timeout: float, record: bool = True, store_history: bool = True) -> CellRun:
        """Run ``code`` in K; interrupt after ``timeout`` s; restart K (and replay) if it died."""
        run = CellRun()
        msg_id = self.kc.execute(code, store_history=store_history, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        idle = False
        while not idle:
            if time.monotonic() > deadline:
                run.status = "timeout"
                break
            if not self.km.is_alive():
                run.status = "died"
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                out = nbformat.v4.output_from_msg(msg)
                run.outputs.append(out)
                if kind == "error":
                    run.status, run.ename, run.evalue = "error", out.ename, out.evalue
            elif kind == "clear_output":
                run.outputs.clear()
        if run.status == "timeout":
            self._recover_from_timeout()
        elif run.status == "died":
            self.restart()
        if run.status == "ok":
            try:  # the reply says "error" for exceptions that printed no error output (SystemExit)
                reply = self.kc.get_shell_msg(timeout=5)
                while reply["parent_header"].get("msg_id") != msg_id:
                    reply = self.kc.get_shell_msg(timeout=5)
                if reply["content"]["status"] != "ok":
                    run.status = "error"
                    run.ename = reply["content"].get("ename", "Error")
                    run.evalue = reply["content"].get("evalue", "")
            except queue.Empty:
                pass
        if record and run.status == "ok":
            self.replay.append(code)
        return run

    def _recover_from_timeout(self) -> None:
        """Interrupt K; if it does not come back to idle quickly, restart it."""
        try:
            self.km.interrupt_kernel()
        except Exception:  # noqa: BLE001
            pass
        probe = self.kc.execute("pass", store_history=False)
        end = time.monotonic() + 5
        while time.monotonic() < end and self.km.is_alive():
            try:
                msg = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            if (msg.get("parent_header", {}).get("msg_id") == probe and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"):
                return
        self.restart()

    # -- calling learner functions ---------------------------------------------------------
    def call(self, func_name: str, args: tuple, kwargs: dict, timeout: float, mode: str = "call",
             wrt: tuple = ()) -> tuple[object, list]:
        """Call ``func_name`` in K on values shipped in the restricted format; return (result, stdout outputs)."""
        self._calls += 1
        call_dir = Path(self._tmp.name) / f"call-{self._calls}"
        call_dir.mkdir()
        try:
            wire.write(call_dir, "args", [list(args), dict(kwargs)])
        except wire.WireError as err:
            raise ValueError(f"test cell passed an argument the wire cannot carry: {err}") from err
        code = (f"__import__('rlprep.grading.wire', fromlist=['serve']).serve("
                f"globals(), {func_name!r}, {str(call_dir)!r}, {mode!r}, {tuple(wrt)!r})")
        run = self.execute(code, timeout=timeout, record=False, store_history=False)
        stdout = [o for o in run.outputs if o.get("output_type") == "stream" and o.get("name") == "stdout"]
        if run.status == "timeout":
            raise LearnerCallError(f"{func_name} did not return within {timeout:g} s (an infinite loop?)")
        if run.status == "died":
            raise LearnerCallError(f"{func_name} ended the kernel process (os._exit or a crash); "
                                   "the kernel was restarted")
        error = call_dir / "error.json"
        if error.exists():
            import json

            info = json.loads(error.read_text())
            detail = f": {info['message']}" if info.get("message") else ""
            raise LearnerCallError(f"{func_name} raised {info.get('type')}{detail}")
        if not (call_dir / "result.json").exists():
            raise LearnerCallError(f"{func_name} produced no result ({run.ename or 'the call was cut short'})")
        try:
            return wire.read(call_dir, "result"), stdout
        except Exception as err:  # noqa: BLE001 - whatever K wrote, it is not a valid value
            raise LearnerCallError(f"{func_name} returned a value the grader cannot read: {err}") from err

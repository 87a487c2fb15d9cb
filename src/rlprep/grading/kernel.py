"""The learner's kernel K: run cells with a timeout, survive os._exit, call functions across the wire.

Learner code (answer cells and any cell of their own) only ever runs here, never in the grader process.
When K dies (``os._exit``, a segfault) it is restarted and the cells that had run cleanly are replayed,
so later tests still see the learner's functions. A K that fills the folders it shares with the grader (they are
on the grader's disk; ``sandbox.exchange_overflow``) is killed for good, and what it wrote there is deleted.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec

from rlprep.errors import RlprepError
from rlprep.grading import sandbox, wire


SOCKET_PATH_MAX = 107  # bytes of a Unix socket's path (sun_path is 108 with its NUL)
SOCKET_TAIL = "/rk-XXXXXXXX/s/k9-9"  # what a kernel folder adds to the temp folder: name, ``RunDirs.ipc``, socket


def socket_base() -> str:
    """The folder for kernel folders: the temp folder (``TMPDIR``), or ``/tmp`` when a kernel's sockets would not fit
    under it (a deep ``TMPDIR``: nbgrader then failed with a bare traceback). An error names both when neither fits."""
    for base in dict.fromkeys([tempfile.gettempdir(), "/tmp"]):
        if len(os.fsencode(base + SOCKET_TAIL)) <= SOCKET_PATH_MAX and os.access(base, os.W_OK | os.X_OK):
            return base
    raise RlprepError(f"the temp folder {tempfile.gettempdir()!r} is too deep for the grader's kernel sockets (a Unix "
                      f"socket's path holds {SOCKET_PATH_MAX} bytes) and /tmp is not writable",
                      "set TMPDIR to a short writable folder, e.g. export TMPDIR=/var/tmp")


@dataclass
class CellRun:
    """What one execution in K produced."""

    outputs: list = field(default_factory=list)  # nbformat output nodes
    status: str = "ok"  # "ok" | "error" | "timeout" | "died"
    ename: str = ""
    evalue: str = ""


LearnerCallError = wire.LearnerCallError  # raised here, defined beside the value format K also imports


class LearnerKernel:
    """A jupyter kernel for the learner's code, in the sandbox, with per-cell timeouts and restart-and-replay.

    Args:
        max_restarts: how often a dead kernel is started again; after that every later cell and call fails at
            once (an answer that ends the process on every replay cannot stretch the grading).
        max_output: bytes of output kept per cell; the rest is dropped as it arrives, with a note.
    """

    def __init__(self, kernel_name: str = "python3", startup_timeout: float = 60, max_restarts: int = 3,
                 max_output: int = 64 * 1024):
        self.kernel_name = kernel_name
        self.startup_timeout = startup_timeout
        self.max_restarts = max_restarts
        self.max_output = max_output
        self.replay: list[str] = []  # cells that ran cleanly, replayed after a restart
        self.restarts = 0
        self.given_up = False
        self.deadline_at = float("inf")  # monotonic time after which replays stop (set by the runner)
        self.km = None
        self.kc = None
        self._tmp = tempfile.TemporaryDirectory(prefix="rk-", dir=socket_base())
        self.dirs = sandbox.RunDirs(Path(self._tmp.name))
        self.dirs.create(sandbox.SANDBOX_UID if os.geteuid() == 0 else None)
        self.sandbox = sandbox.probe()
        self._calls = 0
        self.stopped = ""  # why the grader stopped K for good (it filled the folders it shares with the grader)
        self.shares_limits_with: list[sandbox.RunDirs] = []  # other kernels' folders counted in the same limits
        self._unwatch = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        command = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                   "--HistoryManager.hist_file=:memory:"]
        argv, self.sandbox = sandbox.launch_argv(self.dirs, command)
        self.km = KernelManager(kernel_name=self.kernel_name, transport="ipc",
                                ip=str(self.dirs.ipc / f"k{self.restarts}"),
                                connection_file=str(self.dirs.inbox / f"kernel-{self.restarts}.json"))
        self.km._kernel_spec = KernelSpec(argv=argv, display_name="rlprep learner (sandboxed)", language="python",
                                          interrupt_mode="message")
        self.km.write_connection_file()
        if os.geteuid() == 0:
            os.chown(self.km.connection_file, sandbox.SANDBOX_UID, sandbox.SANDBOX_UID)
        env = sandbox.kernel_env(self.dirs, str(self.dirs.home))  # bubblewrap replaces it with --clearenv
        # the kernel's own stderr (its startup banner, learner warnings) never reaches the grader's output
        self.km.start_kernel(cwd=str(self.dirs.home), env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        context = zmq.Context()
        context.setsockopt(zmq.MAXMSGSIZE, 16 * self.max_output + 2**20)  # one huge message cannot reach us
        self.kc = self.km.client(context=context)
        self.kc.start_channels()
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="rlprep-exchange-watch", daemon=True)
            self._watcher.start()
        self.kc.wait_for_ready(timeout=self.startup_timeout)

    def shutdown(self) -> None:
        self._unwatch.set()
        self._stop()
        if self._watcher is not None:
            self._watcher.join()
        self._tmp.cleanup()

    def _watch(self) -> None:
        """Every 0.2 s while K lives: past the limits in the shared folders, kill K for good and empty them."""
        while not self._unwatch.wait(0.2):
            why = sandbox.exchange_overflow(self.dirs, *self.shares_limits_with)
            if why:
                self.stopped = self.stopped or why
                self._kill()
                sandbox.empty_exchange(self.dirs)

    def _kill(self) -> None:
        """SIGKILL K's process group (bubblewrap's: the sandbox dies with it); safe from the watch thread."""
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        if process is None:
            return
        try:
            if os.getpgid(process.pid) == process.pid:  # jupyter_client starts K in a session of its own
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        except OSError:  # already gone
            pass

    def _stop(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:  # a dead kernel may refuse a clean shutdown
                pass
        self.km = self.kc = None

    def restart(self, timeout: float = 30) -> None:
        """Start a fresh K and replay the cells that had run cleanly, within the deadline; give up after
        ``max_restarts``."""
        self._stop()
        if self.stopped or self.restarts >= self.max_restarts or time.monotonic() >= self.deadline_at:
            self.given_up = True
            return
        self.restarts += 1
        self.start()
        for code in list(self.replay):
            left = self.deadline_at - time.monotonic()
            if left <= 0 or self.given_up:
                return
            self.execute(code, timeout=min(timeout, left), record=False)

    # -- execution -------------------------------------------------------------------------
    def execute(self, code: str, timeout: float, record: bool = True, store_history: bool = True) -> CellRun:
        """Run ``code`` in K; interrupt after ``timeout`` s; restart K (and replay) if it died."""
        run = CellRun()
        if self.given_up or self.kc is None:
            run.status = "died"
            return run
        msg_id = self.kc.execute(code, store_history=store_history, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        kept, truncated = 0, False
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
                size = len(json.dumps(msg["content"], default=str))
                if kind != "error" and kept + size > self.max_output:
                    if not truncated:  # keep reading (and dropping) so the kernel is never blocked
                        truncated = True
                        run.outputs.append(nbformat.v4.new_output(
                            "stream", name="stdout",
                            text=f"\n[rlprep] output past {self.max_output // 1024} KiB was dropped\n"))
                    continue
                kept += size
                out = nbformat.v4.output_from_msg(msg)
                run.outputs.append(out)
                if kind == "error":
                    run.status, run.ename, run.evalue = "error", out.ename, out.evalue
            elif kind == "clear_output":
                run.outputs.clear()
                kept = 0
        if run.status == "timeout":
            self._recover_from_timeout()
        elif run.status == "died":
            self.restart()
            if self.stopped:
                run.outputs.append(nbformat.v4.new_output("error", ename="ScratchLimit", evalue=self.stopped,
                                                          traceback=[f"ScratchLimit: {self.stopped}"]))
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
        except Exception:
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
        """Call ``func_name`` in K on values shipped in the restricted format; return (result, stdout outputs).

        The grader writes the arguments where K can only read (``inbox``); K writes its answer under a fresh
        random name in ``outbox``, which the grader reads with size limits and without following links.
        """
        if self.given_up:
            why = (f"the grader stopped the kernel: {self.stopped}" if self.stopped else
                   f"the kernel died {self.restarts + 1} times")
            raise LearnerCallError(f"{func_name} was not called: {why}, so grading stopped running your code")
        self._calls += 1
        name = f"call-{self._calls}-{secrets.token_hex(8)}"
        args_dir, out_dir = self.dirs.inbox / name, self.dirs.outbox / name
        args_dir.mkdir(mode=0o755)
        try:
            wire.write(args_dir, "args", [list(args), dict(kwargs)])
        except wire.WireError as err:
            raise ValueError(f"test cell passed an argument the wire cannot carry: {err}") from err
        code = (f"__import__('rlprep.grading.wire', fromlist=['serve']).serve("
                f"globals(), {func_name!r}, {str(args_dir)!r}, {str(out_dir)!r}, {mode!r}, {tuple(wrt)!r})")
        try:
            return self._call_result(func_name, code, out_dir, timeout)
        finally:  # each call's folders go once read: what stays counts against the kernel's limit
            shutil.rmtree(args_dir, ignore_errors=True)
            shutil.rmtree(out_dir, ignore_errors=True)

    def _call_result(self, func_name: str, code: str, out_dir: Path, timeout: float) -> tuple[object, list]:
        """Run the call server ``code`` in K and read what it wrote to ``out_dir`` (see ``call``)."""
        run = self.execute(code, timeout=timeout, record=False, store_history=False)
        stdout = [o for o in run.outputs if o.get("output_type") == "stream" and o.get("name") == "stdout"]
        if run.status == "timeout":
            raise LearnerCallError(f"{func_name} did not return within {timeout:g} s (an infinite loop?)")
        if run.status == "died" and self.stopped:
            raise LearnerCallError(f"{func_name} was stopped by the grader: {self.stopped}; grading stopped "
                                   "running your code")
        if run.status == "died":
            raise LearnerCallError(f"{func_name} ended the kernel process (os._exit or a crash); "
                                   + ("grading stopped running your code" if self.given_up else
                                      "the kernel was restarted"))
        try:
            info = wire.read_json(out_dir / "error.json")
        except FileNotFoundError:
            info = None
        except wire.WireError as err:
            raise LearnerCallError(f"{func_name} failed and its error could not be read: {err}",
                                   f"{func_name} failed and its error could not be read") from None
        if info is not None:
            raise wire.learner_error(func_name, info)
        try:
            return wire.read(out_dir, "result"), stdout
        except FileNotFoundError:
            raise LearnerCallError(f"{func_name} produced no result ({run.ename or 'the call was cut short'})",
                                   f"{func_name} produced no result") from None
        except Exception as err:  # whatever K wrote, it is not a valid value
            raise LearnerCallError(f"{func_name} returned a value the grader cannot read: {err}",
                                   f"{func_name} returned a value the grader cannot read") from None

"""Grade a notebook with the learner's code and the tests in different processes.

nbgrader's own ``Execute`` runs every cell in one kernel, so an answer cell can rewrite
``np.testing.assert_allclose``, ``builtins`` or the assert helpers and pass every test. Here:

- setup cells (locked, from the gradebook) run in the learner's kernel K *and* in a fresh namespace inside
  this grader process;
- answer cells and any other learner cell run only in K (per-cell timeout, interrupt, restart + replay);
- test cells (locked grade cells) run only here, always with the gradebook's source whatever the cell in the
  submission says (deleted, restored with a header, or edited), in a copy of the
  setup namespace where each graded function name is a ``FunctionProxy``: calling it ships the arguments
  to K, runs the learner's function there, and ships the result back in the restricted ``wire`` format;
- ``demo`` cells (training, plots) are skipped, with a note;
- a learner cell that does not compile (SyntaxError, IndentationError) defines nothing: a test that calls a
  function it defines reports the cell's error and line, not "not defined".

Two kernels, so that nothing shown can carry a hidden input out. The learner's code could remember what a hidden
call passed it (in a global, a file in its scratch space) and show it later: in a learner cell placed after a test,
or through a later visible call (its print, its exception message, the shape it returns, all quoted by a visible
part). So pass 1 runs every learner cell, setup cell and visible part of a test in a kernel K1 that never meets a
hidden input, and shows what they print; K1 is shut down (its sandbox and scratch space gone); then pass 2, in K2, a
second kernel in a sandbox of its own, runs the rest of the setup and learner cells (what they print is dropped) and
each test's hidden parts, from where its visible part left off (same namespace, same tolerance). K2 starts alongside
K1 and, meanwhile, runs the cells before the first test with a hidden part (``_Second``). Of pass 2 only the verdict of each hidden part is shown, in its public form: the
property, or the builtin type of what the learner's function raised. A visible part after a hidden one runs in
pass 2 and is shown in that form too.

The outputs are ordinary nbformat outputs, so nbgrader's ``SaveAutoGrades`` scores them as usual: a test
cell with an ``error`` output scores 0. Learner stderr never reaches a test cell's outputs. A failure in a
hidden part of a test names the property only, never the size of the error (no oracle to probe values with); when
the learner's function raised there, the builtin exception type only (no message, no class name of the learner's),
and nothing printed during a hidden part is shown.
K itself runs in a sandbox (``rlprep.grading.sandbox``).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import threading
import time
from dataclasses import dataclass, field

import nbformat
from traitlets import Integer, Unicode

from rlprep.grading.asserts import PropertyFailed, begin_test, note_inputs, noted_precision
from rlprep.grading.cell_errors import COMPILE_ERRORS, AnswerCellError, cell_error, compile_error_message
from rlprep.grading.hidden_parts import (  # noqa: F401 - HIDDEN_*, hidden_code, released_source: read from here too
    HIDDEN_BEGIN, HIDDEN_END, hidden_code, released_source, split_hidden)
from rlprep.grading.in_process import score_in_process  # noqa: F401 - read from here too
from rlprep.grading.kernel import LearnerCallError, LearnerKernel
from rlprep.grading.selfgrade import def_names
from rlprep.grading.wire import UNDEFINED, WireError

DEMO_NOTE = "[rlprep] demo cell: skipped during grading\n"
KERNEL_NOTE_MARK = "[rlprep] checked in the learner's kernel:"  # starts the note of a test that relies on it


def runner_inputs(cells) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """``(graded function names, trusted)`` of a notebook, from ``(grade_id, source, solution, locked, grade)`` per
    code cell: the ``def`` names of its answer cells, and ``{grade_id: (source, "test" or "setup")}`` of its locked
    cells, the only code that runs in the grader. One rule for a notebook (:meth:`IsolatedRunner.trusting`) and
    for a gradebook (``IsolatedExecute``)."""
    names, trusted = [], {}
    for grade_id, source, solution, locked, grade in cells:
        if solution:
            names += def_names(source)
        elif locked:
            trusted[grade_id] = (source, "test" if grade else "setup")
    return names, trusted


def kernel_side_checks(args, kwargs: dict, mode: str) -> set[str]:
    """What a call makes the learner's kernel report about its own computation, beyond the value it returns:
    gradients (``value_and_grad``: autograd runs there), whether a result is detached (an input that requires
    grad: the kernel declares the result's ``requires_grad``), how the function meets non-contiguous inputs (the
    kernel rebuilds their layout). A kernel can fake each of these; a test that relies on one says so."""
    found = {"gradients"} if mode == "value_and_grad" else set()

    def walk(x, depth=0):
        if depth > 8:
            return
        if type(x).__module__.split(".")[0] == "torch" and callable(getattr(x, "is_contiguous", None)):
            if x.requires_grad:
                found.add("whether a result is detached")
            if not x.is_contiguous():
                found.add("non-contiguous inputs")
        elif type(x).__module__ == "numpy" and not getattr(x, "flags", {"C_CONTIGUOUS": True})["C_CONTIGUOUS"]:
            found.add("non-contiguous inputs")
        elif type(x) in (list, tuple, dict):
            for item in (x.values() if type(x) is dict else x):
                walk(item, depth + 1)

    walk([list(args), dict(kwargs)])
    return found


def kernel_note(checks: set[str]) -> str:
    """The line a test's output ends with when it relied on ``kernel_side_checks``."""
    return (f"{KERNEL_NOTE_MARK} {', '.join(sorted(checks))} (the learner's own process could fake them: a "
            "self-check, not a guarantee; docs/grading.md, 'Where each property is checked')\n")


def _error(ename: str, evalue: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


@dataclass
class _TestRun:
    """One test cell across the two passes: its namespace, the parts left for pass 2, and what it shows."""

    ns: dict
    rest: list[str] = field(default_factory=list)  # code of its parts from the first hidden one (pass 2)
    text: str = ""  # what pass 1 printed and forwarded
    checks: set[str] = field(default_factory=set)  # what it relied on the learner's kernel to report
    failure: tuple[str, str] | None = None
    precision: str | None = None  # the tolerance's state where pass 1 stopped (``asserts.noted_precision``)

    def show(self, cell) -> None:
        """The cell's outputs: what pass 1 printed, the kernel note (the report shows it for a test that passed)."""
        if self.text:
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=self.text))
        if self.checks:
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=kernel_note(self.checks)))
        if self.failure:
            cell.outputs.append(_error(*self.failure))


class _Second:
    """K2, started in a thread while K1 starts and runs pass 1, and the setup and learner cells before the first test
    with a hidden part (index ``upto``; their runs in ``runs``) run in it there: nothing hidden has been sent yet. The
    thread lives until ``close``: bubblewrap's ``--die-with-parent`` ends a process when its starting thread ends."""

    def __init__(self, runner: IsolatedRunner, nb, upto: int):
        self.runner, self.nb, self.upto, self.runs = runner, nb, upto, []
        self.kernel: LearnerKernel | None = LearnerKernel(kernel_name=runner.kernel_name)
        self.error: BaseException | None = None
        self.prepared, self.released = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._prepare, name="rlprep-second-kernel", daemon=True)
        self.thread.start()

    def _prepare(self) -> None:
        runner = self.runner
        try:
            self.kernel.start()
            runner._missing_setup(self.nb, None, self.kernel)
            for cell in self.nb.cells[:self.upto]:
                kind = runner.classify(cell)
                if cell.cell_type == "code" and kind in ("setup", "learner") and runner.remaining() > 0:
                    run = runner._kernel_step(self.kernel, cell, kind)
                    if run is not None:
                        self.runs.append((cell, run))
        except BaseException as err:  # raised again by ready(), in the grader's thread
            self.error = err
        finally:
            self.prepared.set()
            self.released.wait()

    def ready(self) -> LearnerKernel:
        """K2, its first cells run; if it failed to start in the thread (so loaded a machine that it did not answer
        in time), a fresh one started here, all its cells left to pass 2 (``upto`` 0)."""
        self.prepared.wait()
        if self.error is not None:
            self.kernel.shutdown()
            self.kernel, self.runs, self.upto = LearnerKernel(kernel_name=self.runner.kernel_name), [], 0
            self.kernel.start()
            self.runner._missing_setup(self.nb, None, self.kernel)
        self.kernel.deadline_at = self.runner._t_end
        return self.kernel

    def close(self) -> None:
        self.prepared.wait()
        try:
            if self.kernel is not None:
                self.kernel.shutdown()
                self.kernel = None
        finally:
            self.released.set()
            self.thread.join()


class FunctionProxy:
    """Stands for the learner's function inside a test cell; every call runs in the learner's kernel."""

    is_rlprep_proxy = True

    def __init__(self, runner: "IsolatedRunner", name: str):
        self._runner = runner
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        note_inputs(args, kwargs)  # the tolerance follows the inputs the test chose
        return self._runner.call(self.__name__, args, kwargs, mode="call")

    def value_and_grad(self, wrt=(), **kwargs):
        note_inputs((), kwargs)
        return self._runner.call(self.__name__, (), kwargs, mode="value_and_grad", wrt=tuple(wrt))

    def __repr__(self):
        return f"<learner function {self.__name__} (runs in the learner's kernel)>"


class IsolatedRunner:
    """Run one notebook: learner cells in K, test cells here. See the module docstring.

    Args:
        graded_names: function names that test cells call (bound to proxies).
        trusted: {grade_id: (source, kind)} with kind "setup" or "test": the only code that runs in the
            grader process. A submitted cell with one of these grade ids runs this source, never its own.
        cell_timeout: seconds for one learner cell in K.
        call_timeout: seconds for one call of a learner function from a test.
        deadline: seconds for the whole run; later cells fail with a message saying so.
    """

    def __init__(self, graded_names, trusted: dict, cell_timeout: float = 30, call_timeout: float = 10,
                 deadline: float = 300, kernel_name: str = "python3"):
        self.graded_names = list(graded_names)
        self.trusted = dict(trusted)
        self.cell_timeout = cell_timeout
        self.call_timeout = call_timeout
        self.deadline = deadline
        self.kernel_name = kernel_name
        self.kernel: LearnerKernel | None = None
        self._t_end = 0.0
        self._forwarded: list[str] = []
        self._hidden = False  # a hidden part of a test is running: what its calls print is not forwarded
        self._kernel_checks: set[str] = set()  # what the running test relies on the kernel to report
        self.uncompiled: dict[str, tuple] = {}  # function name -> AnswerCellError's arguments, of its broken cell

    @classmethod
    def trusting(cls, nb, **kwargs) -> "IsolatedRunner":
        """A runner that trusts the notebook's own locked cells (for an instructor's notebook, or tests)."""
        graded = [(cell, cell.get("metadata", {}).get("nbgrader", {})) for cell in nb.cells if cell.cell_type == "code"]
        names, trusted = runner_inputs((nbg["grade_id"], cell.source, nbg.get("solution"), nbg.get("locked"),
                                        nbg.get("grade")) for cell, nbg in graded if "grade_id" in nbg)
        return cls(names, trusted, **kwargs)

    def classify(self, cell) -> str:
        """"setup" or "test" (by grade id: the gradebook's source runs), "demo", or "learner"."""
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in self.trusted:
            return self.trusted[gid][1]
        if cell.get("metadata", {}).get("rlprep", {}).get("role") == "demo":
            return "demo"
        return "learner"

    def remaining(self) -> float:
        return self._t_end - time.monotonic()

    # -- the run ----------------------------------------------------------------------------
    def run(self, nb):
        """Grade ``nb`` in place: pass 1 in K1 (every learner cell, the visible parts), then, once K1 is gone, pass 2
        in K2 (the hidden parts); see the module docstring. K2 starts while pass 1 runs and runs the cells before the
        first test with a hidden part: no hidden input is sent to it before K1 is shut down."""
        setup_ns: dict = {"__name__": "__rlprep_tests__", "__builtins__": builtins}
        tests: dict[int, _TestRun] = {}
        first = next((i for i, c in enumerate(nb.cells) if self.classify(c) == "test" and c.cell_type == "code"
                      and hidden_code(self.trusted[c.metadata.nbgrader.grade_id][0]).strip()), None)
        self._t_end = time.monotonic() + self.deadline  # moved on once K1 is ready (``_start_kernel``)
        second = _Second(self, nb, first) if first is not None else None
        try:
            try:
                self._start_kernel(second)
                self._pass_one(nb, setup_ns, tests)
            finally:
                if self.kernel is not None:  # K1, its sandbox and scratch space gone before any hidden input is sent
                    self.kernel.shutdown()
            if second is not None and any(t.rest for t in tests.values()):
                self._run_hidden(nb, tests, second)
        finally:
            if second is not None:
                second.close()
        for index, test in tests.items():
            test.show(nb.cells[index])
        return nb

    def _pass_one(self, nb, setup_ns: dict, tests: dict[int, _TestRun]) -> None:
        self._missing_setup(nb, setup_ns, self.kernel)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            cell.execution_count = None
            kind = self.classify(cell)
            if kind == "demo":
                cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=DEMO_NOTE))
                continue
            if self.remaining() <= 0:
                cell.outputs.append(_error("GradingDeadline", f"grading stopped after its {self.deadline:g} s "
                                                              "limit; this cell was not run"))
                continue
            if kind == "setup":
                cell.source = self.trusted[cell.metadata.nbgrader.grade_id][0]
                self._exec_here(cell.source, setup_ns, cell)
                self._run_in_kernel(cell)
            elif kind == "test":
                cell.source = self.trusted[cell.metadata.nbgrader.grade_id][0]
                tests[index] = self._run_visible(cell, setup_ns)
            else:
                self._note_compile_error(cell, self._run_in_kernel(cell))

    def _start_kernel(self, second: _Second | None) -> None:
        """Start K1 in a fresh sandbox; with K2 (``second``), the limits on the folders shared with the grader count
        both. The deadline (both passes) counts from a ready kernel: a slow start on a loaded machine must not eat
        the learner's budget (the start itself is bounded by jupyter_client's own timeout). Replays after a restart
        count."""
        self.kernel = LearnerKernel(kernel_name=self.kernel_name)
        if second is not None:
            self.kernel.shares_limits_with.append(second.kernel.dirs)
            second.kernel.shares_limits_with.append(self.kernel.dirs)
        self.kernel.start()
        self._t_end = time.monotonic() + self.deadline
        self.kernel.deadline_at = self._t_end

    def _missing_setup(self, nb, setup_ns: dict | None, kernel: LearnerKernel) -> None:
        """nbgrader restores deleted test cells but not deleted locked setup cells: run those first (here too,
        unless ``setup_ns`` is None)."""
        present = {(c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), c.source)
                   for c in nb.cells if c.cell_type == "code"}
        for gid, (source, kind) in self.trusted.items():
            if kind == "setup" and (gid, source) not in present:
                if setup_ns is not None:
                    self._exec_here(source, setup_ns, nbformat.v4.new_code_cell(source))
                kernel.execute(source, timeout=max(0.5, min(self.cell_timeout, self.remaining())))

    def _kernel_step(self, kernel: LearnerKernel, cell, kind: str):
        """Run a setup or learner cell in ``kernel`` for pass 2 (its output is dropped); the learner cell's run."""
        source = self.trusted[cell.metadata.nbgrader.grade_id][0] if kind == "setup" else cell.source
        run = kernel.execute(source, timeout=max(0.5, min(self.cell_timeout, self.remaining())))
        return run if kind == "learner" else None

    def _run_hidden(self, nb, tests: dict[int, _TestRun], second: _Second) -> None:
        """Pass 2, in K2 (``second``: started, and the cells before the first hidden test run): the rest of the setup
        and learner cells (their outputs dropped) and the hidden parts of each test, in notebook order, up to the
        last test with a hidden part left."""
        self.kernel = second.ready()
        self.uncompiled = {}
        for cell, run in second.runs:
            self._note_compile_error(cell, run)
        last = max(i for i, t in tests.items() if t.rest)
        for index, cell in enumerate(nb.cells[:last + 1]):
            kind = self.classify(cell)
            if cell.cell_type != "code" or kind == "demo" or (kind != "test" and index < second.upto):
                continue
            if kind == "test" and not tests.get(index, _TestRun({})).rest:
                continue
            if self.remaining() <= 0:
                if kind == "test":
                    why = f"grading stopped after its {self.deadline:g} s limit before this test's hidden part ran"
                    tests[index].failure = ("GradingDeadline", why)
                continue
            if kind == "test":
                self._run_rest(tests[index])
            elif (run := self._kernel_step(self.kernel, cell, kind)) is not None:
                self._note_compile_error(cell, run)

    def _run_in_kernel(self, cell):
        timeout = max(0.5, min(self.cell_timeout, self.remaining()))
        run = self.kernel.execute(cell.source, timeout=timeout)
        cell.outputs = run.outputs
        if run.status == "timeout":
            cell.outputs.append(_error("CellTimeout", f"this cell did not finish within {timeout:g} s and was "
                                                      "interrupted (an infinite loop?)"))
        elif run.status == "died":
            after = ("grading stopped running your code (too many restarts)" if self.kernel.given_up
                     else "the kernel was restarted without it")
            cell.outputs.append(_error("KernelDied", f"this cell ended the kernel process (os._exit or a crash); "
                                                     f"{after}"))
        return run

    def _note_compile_error(self, cell, run) -> None:
        """Remember which functions a learner cell failed to define because it did not compile or stopped early
        (``cell_error``); a later cell that defines one cleanly clears it. Used only when a call then finds the
        function undefined: a cell that stopped after its ``def`` defined it."""
        for name in def_names(cell.source):
            if run.status == "error" and run.ename in COMPILE_ERRORS:
                self.uncompiled[name] = (run.ename, compile_error_message(cell.source, name, run.evalue))
            elif run.status != "ok":
                self.uncompiled[name] = cell_error(name, run)
            else:
                self.uncompiled.pop(name, None)

    @staticmethod
    def _exec_here(source: str, ns: dict, cell) -> None:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, "<setup cell>", "exec"), ns)  # instructor code from the gradebook
        except Exception as err:
            cell.outputs.append(_error("SetupError", f"the setup cell failed in the grader: "
                                                     f"{type(err).__name__}: {err}"))

    def call(self, name, args, kwargs, mode="call", wrt=()):
        self._kernel_checks |= kernel_side_checks(args, kwargs, mode)
        remaining = self.remaining()
        if remaining <= 0:
            raise LearnerCallError(f"grading stopped after its {self.deadline:g} s limit before {name} was called")
        timeout = max(0.5, min(self.call_timeout, remaining))
        try:
            result, stdout = self.kernel.call(name, args, kwargs, timeout=timeout, mode=mode, wrt=wrt)
        except LearnerCallError as err:
            if name in self.uncompiled and f"{name!r} {UNDEFINED}" in str(err):
                raise AnswerCellError(*self.uncompiled[name]) from None
            raise
        if not self._hidden:
            self._forwarded += [o.get("text", "") for o in stdout]
        return result

    def _run_visible(self, cell, setup_ns: dict) -> _TestRun:
        """Pass 1 of a test cell: its parts up to the first hidden one, calling the learner's functions in K1."""
        ns = dict(setup_ns)
        for name in self.graded_names:
            ns[name] = FunctionProxy(self, name)
        self._forwarded = []
        self._kernel_checks = set()
        begin_test()
        out = io.StringIO()
        parts = [(code, hidden) for code, hidden in split_hidden(cell.source) if code.strip()]
        first_hidden = next((k for k, (_, hidden) in enumerate(parts) if hidden), len(parts))
        test = _TestRun(ns)
        for part, _ in parts[:first_hidden]:
            test.failure = self._exec_test_part(part, ns, out, hidden=False)
            if test.failure:
                break
        else:
            test.rest = [code for code, _ in parts[first_hidden:]]
        test.text = "".join(self._forwarded) + out.getvalue()
        test.checks = set(self._kernel_checks)
        test.precision = noted_precision()
        return test

    def _run_rest(self, test: _TestRun) -> None:
        """Pass 2 of a test cell: the rest of its parts, from its first hidden one, in K2; each shows its verdict
        in the hidden form (a visible part after a hidden one too: the kernel answering it has met hidden inputs),
        and nothing it prints."""
        self._kernel_checks = set()
        begin_test(test.precision)
        self._hidden = True
        try:
            for part in test.rest:
                test.failure = self._exec_test_part(part, test.ns, io.StringIO(), hidden=True)
                if test.failure:
                    break
        finally:
            self._hidden = False
        test.checks |= self._kernel_checks

    @staticmethod
    def _exec_test_part(source: str, ns: dict, out, hidden: bool) -> tuple[str, str] | None:
        """Run one part of a test cell; return (name, message) of its failure, or None.

        A hidden part's failure names its property only: no error size, no values, no learner message. When the
        learner's function failed, it names the builtin exception type (``LearnerCallError.public``): never the
        message or a class name of the learner's, which could spell out the hidden inputs.
        """
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, "<test cell>", "exec"), ns)  # instructor code
        except PropertyFailed as err:
            return "PropertyFailed", err.prop if hidden else str(err)
        except LearnerCallError as err:
            return getattr(err, "ename", "LearnerError"), err.public if hidden else str(err)
        except WireError as err:
            return "BadReturnValue", "a hidden check got a value it cannot read" if hidden else str(err)
        except (Exception, SystemExit) as err:
            return type(err).__name__, "a hidden check failed" if hidden else (str(err) or "a check failed")
        return None


try:  # the nbgrader preprocessor; nbgrader is an instructor/grader dependency
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import NbGraderPreprocessor
except ImportError:  # pragma: no cover - plain install without the course extras
    NbGraderPreprocessor = None

if NbGraderPreprocessor is not None:

    class IsolatedExecute(NbGraderPreprocessor):
        """Drop-in for nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors`` (see module docstring)."""

        cell_timeout = Integer(30, help="Seconds for one learner cell in the learner's kernel.").tag(config=True)
        call_timeout = Integer(10, help="Seconds for one call of a learner function from a test.").tag(config=True)
        deadline = Integer(300, help="Seconds for the whole notebook; later cells fail.").tag(config=True)
        kernel_name = Unicode("python3", help="Kernel for the learner's code.").tag(config=True)

        def preprocess(self, nb, resources):
            info = resources["nbgrader"]
            with Gradebook(info["db_url"]) as gb:
                source_nb = gb.find_notebook(info["notebook"], info["assignment"])
                grade_ids = {c.name for c in source_nb.grade_cells}
                solution_ids = {c.name for c in source_nb.solution_cells}
                names, trusted = runner_inputs((sc.name, sc.source, sc.name in solution_ids, sc.locked,
                                                sc.name in grade_ids)
                                               for sc in source_nb.source_cells if sc.cell_type == "code")
            runner = IsolatedRunner(names, trusted, cell_timeout=self.cell_timeout, call_timeout=self.call_timeout,
                                    deadline=self.deadline, kernel_name=self.kernel_name)
            return runner.run(nb), resources

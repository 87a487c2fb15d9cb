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

The outputs are ordinary nbformat outputs, so nbgrader's ``SaveAutoGrades`` scores them as usual: a test
cell with an ``error`` output scores 0. Learner stderr never reaches a test cell's outputs. A failure in a
hidden part of a test names the property only, never the size of the error (no oracle to probe values with); when
the learner's function raised there, the builtin exception type only (no message, no class name of the learner's),
and nothing printed during a hidden part is shown.
K itself runs in a sandbox (``rlprep.grading.sandbox``).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import re
import time

import nbformat
from traitlets import Integer, Unicode

from rlprep.grading.asserts import PropertyFailed, begin_test, note_inputs
from rlprep.grading.kernel import LearnerCallError, LearnerKernel
from rlprep.grading.selfgrade import def_names
from rlprep.grading.wire import UNDEFINED, WireError

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"
DEMO_NOTE = "[rlprep] demo cell: skipped during grading\n"
KERNEL_NOTE_MARK = "[rlprep] checked in the learner's kernel:"  # starts the note of a test that relies on it


def defined_functions(source: str) -> list[str]:
    """Top-level ``def`` names in a cell's source (the graded functions of an answer cell)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]


class AnswerCellError(LearnerCallError):
    """A graded function is missing because the cell that defines it did not compile, or stopped before its
    ``def`` (it raised, timed out, ended the kernel): the test reports the cell's error (``ename``: SyntaxError,
    PermissionError, ...) instead of "not defined"."""

    def __init__(self, ename: str, message: str, public: str | None = None):
        super().__init__(message, public)
        self.ename = ename


COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")
_AT_LINE = re.compile(r"^(?P<msg>.*) \([^()]*, line (?P<line>\d+)\)$", re.S)


def cell_error(name: str, run) -> tuple[str, str, str]:
    """(ename, message, public) of a test calling ``name`` when the learner cell that defines it stopped before
    the ``def`` ran (``run``: its ``CellRun``). A hidden part shows ``public``: no message of the learner's, and a
    builtin exception type only (a class the learner named could spell out what a hidden call passed it)."""
    where = f"the answer cell that defines {name} stopped there, so {name} is not defined"
    if run.status == "timeout":
        return "CellTimeout", f"the answer cell that defines {name} did not finish in time: {name} is not defined", \
            f"the answer cell that defines {name} did not finish in time"
    if run.status == "died":
        return "KernelDied", f"the answer cell that defines {name} ended the kernel: {name} is not defined", \
            f"the answer cell that defines {name} ended the kernel"
    known = getattr(builtins, run.ename, None)
    if isinstance(known, type) and issubclass(known, BaseException):
        return run.ename, f"{run.evalue} ({where})", where
    return "AnswerCellError", f"{run.ename}: {run.evalue} ({where})", where


def compile_error_message(source: str, name: str, evalue: str) -> str:
    """What a test says when ``name``'s cell failed to compile: the kernel's message, the cell and the line.

    ``evalue`` is IPython's, e.g. "invalid syntax (80963178.py, line 2)"; the line number counts from the
    cell's first line, and the line itself is quoted from ``source``.
    """
    found = _AT_LINE.match(evalue.strip())
    if not found:
        return f"{evalue} in the answer cell that defines {name}; {name} was never defined"
    lineno = int(found["line"])
    lines = source.splitlines()
    text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    quoted = f": {text[:120]}" if text else ""
    return (f"{found['msg']}, line {lineno} of the answer cell that defines {name}{quoted} "
            f"(the cell never ran, so {name} is not defined)")


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
        trusted, names = {}, []
        for cell in nb.cells:
            nbg = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type != "code" or "grade_id" not in nbg:
                continue
            if nbg.get("solution"):
                names += defined_functions(cell.source)
            elif nbg.get("locked"):
                trusted[nbg["grade_id"]] = (cell.source, "test" if nbg.get("grade") else "setup")
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
        self.kernel = LearnerKernel(kernel_name=self.kernel_name)
        self.kernel.start()
        # The deadline counts from a ready kernel: a slow start on a loaded machine must not eat the learner's
        # budget (the start itself is bounded by jupyter_client's own timeout). Replays after a restart count.
        self._t_end = time.monotonic() + self.deadline
        self.kernel.deadline_at = self._t_end
        setup_ns: dict = {"__name__": "__rlprep_tests__", "__builtins__": builtins}
        try:
            # nbgrader restores deleted test cells but not deleted locked setup cells: run those first
            present = {(c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), c.source)
                       for c in nb.cells if c.cell_type == "code"}
            for gid, (source, kind) in self.trusted.items():
                if kind == "setup" and (gid, source) not in present:
                    scratch = nbformat.v4.new_code_cell(source)
                    self._exec_here(source, setup_ns, scratch)
                    self.kernel.execute(source, timeout=max(0.5, min(self.cell_timeout, self.remaining())))
            for cell in nb.cells:
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
                    self._run_test(cell, setup_ns)
                else:
                    self._note_compile_error(cell, self._run_in_kernel(cell))
        finally:
            self.kernel.shutdown()
        return nb

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
                exec(compile(source, "<setup cell>", "exec"), ns)  # noqa: S102 - instructor code from the gradebook
        except Exception as err:  # noqa: BLE001
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

    def _run_test(self, cell, setup_ns: dict) -> None:
        ns = dict(setup_ns)
        for name in self.graded_names:
            ns[name] = FunctionProxy(self, name)
        self._forwarded = []
        self._kernel_checks = set()
        begin_test()
        out = io.StringIO()
        failure = None
        for part, hidden in split_hidden(cell.source):
            if not part.strip():
                continue
            self._hidden = hidden
            try:  # a hidden part shows nothing but its failure: not its own prints, not its calls'
                failure = self._exec_test_part(part, ns, io.StringIO() if hidden else out, hidden)
            finally:
                self._hidden = False
            if failure:
                break
        text = "".join(self._forwarded) + out.getvalue()
        if text:
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))
        if self._kernel_checks:  # its own output, last: the report shows it for a test that passed
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=kernel_note(self._kernel_checks)))
        if failure:
            cell.outputs.append(_error(*failure))

    @staticmethod
    def _exec_test_part(source: str, ns: dict, out, hidden: bool) -> tuple[str, str] | None:
        """Run one part of a test cell; return (name, message) of its failure, or None.

        A hidden part's failure names its property only: no error size, no values, no learner message. When the
        learner's function failed, it names the builtin exception type (``LearnerCallError.public``): never the
        message or a class name of the learner's, which could spell out the hidden inputs.
        """
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, "<test cell>", "exec"), ns)  # noqa: S102 - instructor code
        except PropertyFailed as err:
            return "PropertyFailed", err.prop if hidden else str(err)
        except LearnerCallError as err:
            return getattr(err, "ename", "LearnerError"), err.public if hidden else str(err)
        except WireError as err:
            return "BadReturnValue", "a hidden check got a value it cannot read" if hidden else str(err)
        except (Exception, SystemExit) as err:  # noqa: BLE001
            return type(err).__name__, "a hidden check failed" if hidden else (str(err) or "a check failed")
        return None


def _hidden_runs(source: str) -> list[tuple[list[str], bool]]:
    """The lines of a test cell in runs: [(lines, hidden)], visible and hidden alternating, marker lines dropped."""
    runs: list[tuple[list[str], bool]] = [([], False)]
    for line in source.split("\n"):
        lines, hidden = runs[-1]
        if HIDDEN_BEGIN in line or HIDDEN_END in line:  # a marker line is dropped, as nbgrader drops it
            if hidden != (HIDDEN_BEGIN in line):
                runs.append(([], not hidden))
        else:
            lines.append(line)
    return runs


def split_hidden(source: str) -> list[tuple[str, bool]]:
    """[(code, hidden)] of a test cell, in order: the visible part, the hidden block, the rest (one pair more per
    further block). The marker lines (``### BEGIN/END HIDDEN TESTS``) belong to no part, so each part compiles on
    its own. ``hidden_code`` uses it; ``released_source`` reads the same runs line by line (``_hidden_runs``, the one
    splitter of hidden tests in the project)."""
    return [("\n".join(lines), hidden) for lines, hidden in _hidden_runs(source)]


def hidden_code(source: str) -> str:
    """The hidden blocks of a test cell ('' when it has none)."""
    return "\n".join(code for code, hidden in split_hidden(source) if hidden)


def released_source(source: str) -> str:
    """The test cell as a release shows it: hidden blocks and their marker lines removed, line for line what
    nbgrader's ``ClearHiddenTests`` leaves."""
    return "\n".join(line for lines, hidden in _hidden_runs(source) if not hidden for line in lines)


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
            trusted, names = {}, []
            with Gradebook(info["db_url"]) as gb:
                source_nb = gb.find_notebook(info["notebook"], info["assignment"])
                grade_ids = {c.name for c in source_nb.grade_cells}
                solution_ids = {c.name for c in source_nb.solution_cells}
                for sc in source_nb.source_cells:
                    if sc.cell_type != "code":
                        continue
                    if sc.name in solution_ids:
                        names += defined_functions(sc.source)
                    elif sc.locked:
                        trusted[sc.name] = (sc.source, "test" if sc.name in grade_ids else "setup")
            runner = IsolatedRunner(names, trusted, cell_timeout=self.cell_timeout, call_timeout=self.call_timeout,
                                    deadline=self.deadline, kernel_name=self.kernel_name)
            return runner.run(nb), resources


def score_in_process(nb, functions: dict) -> dict[str, tuple[float, float, str]]:
    """Run a solution notebook's test cells (hidden parts included) here, with ``functions`` bound.

    For checking the test code itself (bug catalogs, alternative solutions) without a kernel or nbgrader:
    returns {grade_id: (points, max_points, message)}. Never use it on learner code you do not trust.
    """
    ns: dict = {"__name__": "__rlprep_tests__", "__builtins__": builtins}
    results = {}
    for cell in nb.cells:
        nbg = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not nbg.get("locked"):
            continue
        if not nbg.get("grade"):
            exec(compile(cell.source, "<setup cell>", "exec"), ns)  # noqa: S102
            continue
        test_ns = dict(ns, **{name: _noting_inputs(fn) for name, fn in functions.items()})
        begin_test()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(cell.source, "<test cell>", "exec"), test_ns)  # noqa: S102
            results[nbg["grade_id"]] = (float(nbg["points"]), float(nbg["points"]), "")
        except Exception as err:  # noqa: BLE001
            results[nbg["grade_id"]] = (0.0, float(nbg["points"]), f"{type(err).__name__}: {err}")
    return results


def _noting_inputs(fn):
    """``fn``, recording each call's inputs for the tolerance as ``FunctionProxy`` does in a real grade."""
    def call(*args, **kwargs):
        note_inputs(args, kwargs)
        return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", "function")
    return call

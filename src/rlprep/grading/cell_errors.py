"""What a test says when the learner cell that defines the function it calls failed: it did not compile, or it
stopped before its ``def`` (raised, timed out, ended the kernel). The test reports that cell's error, not "not
defined"; a hidden part of a test shows the public form (a builtin exception type, no message of the learner's).
"""

from __future__ import annotations

import builtins
import re

from rlprep.grading.wire import LearnerCallError


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

"""The one exception type users see: a problem and the fix, never a deep traceback."""

from __future__ import annotations


class RlprepError(Exception):
    """A user-facing error that names the problem and how to fix it.

    The CLI prints ``error: <problem>`` and ``fix: <fix>`` and exits with status 2.
    """

    def __init__(self, problem: str, fix: str | None = None):
        self.problem = problem
        self.fix = fix
        super().__init__(problem if fix is None else f"{problem}\nfix: {fix}")

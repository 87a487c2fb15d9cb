"""The hidden parts of a test cell: the code between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``.

nbgrader removes them from the released notebook (``ClearHiddenTests``); the grader runs them in a kernel that never
answers a visible call (``rlprep.grading.executor``). This is the one splitter of hidden tests in the project.
"""

from __future__ import annotations

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"


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
    its own. ``hidden_code`` uses it; ``released_source`` reads the same runs line by line."""
    return [("\n".join(lines), hidden) for lines, hidden in _hidden_runs(source)]


def hidden_code(source: str) -> str:
    """The hidden blocks of a test cell ('' when it has none)."""
    return "\n".join(code for code, hidden in split_hidden(source) if hidden)


def released_source(source: str) -> str:
    """The test cell as a release shows it: hidden blocks and their marker lines removed, line for line what
    nbgrader's ``ClearHiddenTests`` leaves."""
    return "\n".join(line for lines, hidden in _hidden_runs(source) if not hidden for line in lines)

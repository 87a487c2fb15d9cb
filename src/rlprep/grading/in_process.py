"""Run a solution notebook's test cells in this process, with given functions bound: for checking the test code
itself (bug catalogues, alternative solutions, trivial answers) without a kernel or nbgrader. Never on learner code
you do not trust: ``rlprep.grading.executor`` grades that.
"""

from __future__ import annotations

import builtins
import contextlib
import io

from rlprep.grading.asserts import begin_test, note_inputs


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
            exec(compile(cell.source, "<setup cell>", "exec"), ns)
            continue
        test_ns = dict(ns, **{name: _noting_inputs(fn) for name, fn in functions.items()})
        begin_test()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(cell.source, "<test cell>", "exec"), test_ns)
            results[nbg["grade_id"]] = (float(nbg["points"]), float(nbg["points"]), "")
        except Exception as err:
            results[nbg["grade_id"]] = (0.0, float(nbg["points"]), f"{type(err).__name__}: {err}")
    return results


def _noting_inputs(fn):
    """``fn``, recording each call's inputs for the tolerance as ``FunctionProxy`` does in a real grade."""
    def call(*args, **kwargs):
        note_inputs(args, kwargs)
        return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", "function")
    return call

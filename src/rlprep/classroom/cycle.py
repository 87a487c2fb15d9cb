"""One course folder run through nbgrader's own cycle, with nbgrader's Python API and its file exchange.

Layout under the run's folder ``out``::

    course/    nbgrader's course root: source/<lab>/ (copied from solutions/), release/, submitted/,
               autograded/, feedback/, gradebook.db (SQLite unless a gradebook URL is given)
    exchange/  the exchange root (outbound/, inbound/ per course), as /usr/local/share/nbgrader/exchange on a hub
    students/<id>/  each student's home: fetch writes <lab>/ here, submit reads it
    grades.csv nbgrader's CSV export

The grading configuration is the course's (``rlprep.grading.release.course_config`` ->
``apply_grading_config``, as in ``autograder/nbgrader_config.py``): ``IsolatedExecute`` runs each submission's code
in a sandboxed kernel (``rlprep.grading.sandbox``, bubblewrap) and its tests in the grader from the gradebook's
source; deleted test cells are restored; feedback has the hidden tests cleared. Late submissions score 0
(``LateSubmissionPlugin.penalty_method = "zero"``); the raw score stays in the gradebook.
"""

from __future__ import annotations

import copy
import datetime
import logging
import os
import shutil
import warnings
from pathlib import Path

from rlprep.errors import RlprepError

COURSE_ID = "rlprep"


class Classroom:
    """A course folder, an exchange and student homes under ``out``; one method per nbgrader command."""

    def __init__(self, out: Path, db_url: str | None = None, *, course: Path | None = None,
                 config_file: Path | None = None, cell_timeout: int = 30, call_timeout: int = 10, deadline: int = 300):
        """``config_file``: an instructor's ``nbgrader_config.py`` (``autograder/``'s layout: the course root, source
        folder, course id, gradebook URL and timeouts come from it); else a simulated course under ``out``."""
        self.out = Path(out)
        self.config_file = Path(config_file).resolve() if config_file else None
        self.base = load_config_file(self.config_file) if self.config_file else None
        if self.base is not None:
            course = Path(self.base.CourseDirectory.root)
            db_url = db_url or self.base.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
            self.course_id = self.base.CourseDirectory.get("course_id") or COURSE_ID
        else:
            self.course_id = COURSE_ID
        self.course = Path(course) if course else self.out / "course"
        self.exchange = self.out / "exchange"
        self.homes = self.out / "students"
        # SQLite: writers from several autograde processes wait for the lock instead of failing at once
        self.db_url = sqlite_waits(db_url or f"sqlite:///{self.course / 'gradebook.db'}")
        self.executor = {"cell_timeout": cell_timeout, "call_timeout": call_timeout, "deadline": deadline}
        os.environ["RLPREP_PROFILE"] = "smoke"  # what the learner's kernel trains with, as in `rlprep grade`
        logging.getLogger("traitlets").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", module="nbgrader")

    def spec(self) -> dict:
        """The keyword arguments that rebuild this classroom in another process."""
        return {"out": str(self.out), "db_url": self.db_url, "course": str(self.course),
                "config_file": str(self.config_file) if self.config_file else None, **self.executor}

    # -- configuration ------------------------------------------------------------------------------
    def config(self, student: str | None = None):
        """The instructor's nbgrader config, or a student's (their home as the exchange's assignment dir)."""
        from rlprep.grading.release import course_config, tools_on_path

        tools_on_path()
        if self.base is not None:  # the instructor's file decides everything but the gradebook URL
            c = copy.deepcopy(self.base)
            c.CourseDirectory.db_url = self.db_url
            return c
        c = course_config(self.course, self.db_url, **self.executor)
        c.CourseDirectory.course_id = COURSE_ID
        c.Exchange.root = str(self.exchange)
        c.Exchange.cache = str(self.out / "exchange-cache" / (student or "instructor"))
        c.LateSubmissionPlugin.penalty_method = "zero"
        if student is not None:
            c.CourseDirectory.student_id = student  # what `nbgrader submit --student` / JUPYTERHUB_USER set
            c.Exchange.assignment_dir = str(self.homes / student)
        return c

    def api(self):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        config = self.config()
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @staticmethod
    def _check(result: dict, what: str, fix: str) -> None:
        if not result.get("success"):
            detail = (result.get("error") or result.get("log") or "")[-2000:]
            raise RlprepError(f"nbgrader {what} failed:\n{detail}", fix)

    # -- instructor ---------------------------------------------------------------------------------
    def generate(self, lab: str, solutions: Path | None = None) -> Path:
        """``nbgrader generate_assignment --force``: the lab's source -> course/release/<lab>/ and the gradebook.

        ``solutions`` (a simulated course): ``solutions/<lab>/`` is copied to ``course/source/<lab>/`` first,
        replacing an earlier copy, so a fixed hidden test reaches the gradebook (a new release). With submissions
        in the gradebook nbgrader updates the cells in place (grades, comments and submissions stay) and refuses
        to add or remove graded cells."""
        if solutions is not None:
            source = self.course / "source" / lab
            if source.exists():
                shutil.rmtree(source)
            source.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(solutions / lab, source, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.tmp",
                                                                                 "__pycache__"))
        result = self.api().generate_assignment(lab, force=True, create=True)
        if "because there are submissions associated" in str(result.get("error") or result.get("log")):
            raise RlprepError(f"nbgrader generate_assignment {lab} refused: the new release adds or removes graded "
                              "or locked cells of a lab that has submissions; nothing was changed",
                              "fix the tests inside the existing cells (keep every grade_id), then release again")
        self._check(result, f"generate_assignment {lab}", f"check the nbgrader metadata of {lab}'s source notebook")
        return self.course / "release" / lab / f"{lab}.ipynb"

    def release(self, lab: str) -> None:
        """``nbgrader release_assignment``: the release into the exchange's outbound folder."""
        self.exchange.mkdir(parents=True, exist_ok=True)
        self._check(self.api().release_assignment(lab), f"release_assignment {lab}",
                    f"check that {self.exchange} exists and is writable")

    def set_due(self, lab: str, when: datetime.datetime) -> None:
        """The lab's due date in the gradebook (naive UTC, as nbgrader stores it)."""
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url, self.course_id) as gb:
            gb.update_or_create_assignment(lab, duedate=when)

    def add_roster(self, rows: list[dict]) -> None:
        """The class list into the gradebook (what ``nbgrader db student import roster.csv`` does): each row's
        ``id``, ``first_name``, ``last_name``, ``email``. Idempotent. A name a row leaves out (or None) keeps what
        the gradebook has, and is empty, not None, where the gradebook has none: formgrader shows None as "None"."""
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url, self.course_id) as gb:
            known = {s.id: s for s in gb.students}
            for row in rows:
                fields = {k: v for k, v in row.items() if k != "id" and v is not None}
                for name in ("first_name", "last_name"):
                    if name not in fields and getattr(known.get(row["id"]), name, None) is None:
                        fields[name] = ""
                gb.update_or_create_student(row["id"], **fields)

    def collect(self, lab: str) -> None:
        """``nbgrader collect``: inbound -> course/submitted/<student>/<lab>/."""
        self._check(self.api().collect(lab), f"collect {lab}", "check the exchange's inbound folder")

    def autograde(self, lab: str, student: str) -> None:
        """``nbgrader autograde`` for one student (the course's preprocessors: sandboxed kernel, tests here)."""
        self._check(self.api().autograde(lab, student, force=True, create=True), f"autograde {lab} {student}",
                    f"look at course/submitted/{student}/{lab}/")

    def feedback(self, lab: str, student: str) -> Path:
        """``nbgrader generate_feedback``: the HTML with hidden tests cleared."""
        self._check(self.api().generate_feedback(lab, student, force=True), f"generate_feedback {lab} {student}",
                    f"look at course/autograded/{student}/{lab}/")
        return self.course / "feedback" / student / lab / f"{lab}.html"

    def export(self, path: Path | None = None) -> Path:
        """``nbgrader export``: every student and lab of the gradebook -> grades.csv (nbgrader's CSV columns,
        quoted: ``rlprep.classroom.lms_export.QuotedCsvExport``)."""
        from rlprep.classroom.lms_export import export_csv

        return export_csv("csv", self.db_url, self.course_id, Path(path or self.out / "grades.csv"), self.config())

    # -- a student ----------------------------------------------------------------------------------
    def _exchange_app(self, kind: str, student: str, lab: str):
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory

        config = self.config(student)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = lab
        factory = ExchangeFactory(config=config)
        return getattr(factory, kind)(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)

    def fetch(self, student: str, lab: str) -> Path:
        """``nbgrader fetch_assignment`` as ``student``: the release -> students/<id>/<lab>/."""
        (self.homes / student).mkdir(parents=True, exist_ok=True)
        self._exchange_app("FetchAssignment", student, lab).start()
        return self.homes / student / lab / f"{lab}.ipynb"

    def submit(self, student: str, lab: str) -> None:
        """``nbgrader submit`` as ``student``: students/<id>/<lab>/ -> the exchange's inbound folder."""
        self._exchange_app("Submit", student, lab).start()


def load_config_file(path: Path):
    """An instructor's ``nbgrader_config.py`` as a traitlets Config (what nbgrader reads from that folder)."""
    from traitlets.config.loader import PyFileConfigLoader

    if not path.is_file():
        raise RlprepError(f"no nbgrader config {path}", "pass the course folder that holds nbgrader_config.py")
    try:
        c = PyFileConfigLoader(path.name, str(path.parent)).load_config()
    except Exception as err:  # any error in the instructor's file is reported as that file's
        raise RlprepError(f"cannot load {path}: {type(err).__name__}: {err}",
                          "fix that file (nbgrader itself would fail on it the same way)") from err
    c.CourseDirectory.root = str(Path(c.CourseDirectory.get("root") or path.parent).resolve())
    return c


def sqlite_waits(url: str) -> str:
    """A SQLite URL whose writers wait up to 60 s for the lock (several autograde processes share it)."""
    return url + "?timeout=60" if url.startswith("sqlite:") and "?" not in url else url


def gradebook_grades(db_url: str, labs: list[str], course_id: str = COURSE_ID
                     ) -> dict[tuple[str, str], tuple[float, float, float]]:
    """{(student, lab): (raw score, late penalty, max score)} read back from the gradebook itself."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(db_url, course_id) as gb:
        for lab in labs:
            for sub in gb.assignment_submissions(lab):
                out[(sub.student.id, lab)] = (float(sub.score), float(sub.late_submission_penalty or 0.0),
                                              float(sub.max_score))
    return out

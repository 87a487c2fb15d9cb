"""``rlprep classroom simulate``: the submission mix, bad input, and a small class through nbgrader (SQLite)."""

from __future__ import annotations

import ast

import nbformat
import pytest

from classroom_checks import check_class, check_feedback
from rlprep.classroom import students
from rlprep.classroom.gradebook import redact
from rlprep.cli import main
from test_cli_errors import ROOT, assert_clean_error, rlprep


def test_six_students_two_labs_meet_every_kind():
    plans = students.plans(6, ["lab01_gae", "lab09_atlas"], {"lab01_gae": ["f:a", "f:b"], "lab09_atlas": ["g:c"]})
    assert {p.kind for p in plans} == set(students.SPECIAL)
    assert len({(p.student, p.lab) for p in plans}) == 12
    big = students.plans(40, ["lab01_gae"], {"lab01_gae": ["f:a", "f:b"]})
    assert {p.bug for p in big if p.kind == "bug"} == {"f:a", "f:b"}  # the catalogue is cycled through


@pytest.fixture(scope="module")
def lab04():
    return nbformat.read(ROOT / "labs" / "lab04_dpo" / "lab04_dpo.ipynb", as_version=4)


@pytest.mark.parametrize("kind", students.SPECIAL)
def test_each_kind_builds_the_notebook_it_claims(lab04, kind, tmp_path):
    bug = students.bug_names("lab04_dpo", ROOT, students.graded_functions(lab04))[-1] if kind == "bug" else ""
    nb = students.submission(lab04, students.Plan("s01", "lab04_dpo", kind, bug), ROOT, tmp_path)
    answers = [c.source for c in students.answer_cells(nb)]
    grade_cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    n_tests = sum(1 for c in lab04.cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert len(grade_cells) == n_tests - (kind == "deleted_test")
    if kind == "untouched":
        assert all("NotImplementedError" in a for a in answers)
        return
    if kind == "syntax_error":
        with pytest.raises(SyntaxError):
            ast.parse(answers[0])
        answers = answers[1:]
    for source in answers:
        ast.parse(source)
    if kind in ("reference", "late", "deleted_test"):
        assert not any("NotImplementedError" in a or "SOLUTION" in a for a in answers)
    if kind == "bug":
        assert f"def {bug.split(':')[0]}(*args, **kwargs):" in answers[-1] and bug.split(":")[1] in answers[-1]
    if kind == "sabotage":
        assert "gradebook.db" in answers[0] and students.SABOTAGE_MARK in answers[0]


def test_expected_grades_come_from_the_tests(lab04):
    from rlprep.grading.templating import rendered_solution

    nb = rendered_solution("lab04_dpo", ROOT)
    grade = {kind: students.expected_grade(nb, students.Plan("s", "lab04_dpo", kind), ROOT)
             for kind in ("reference", "late", "untouched")}
    top = grade["reference"][2]
    assert grade["reference"] == (top, top, top) and top > 0
    assert grade["late"] == (top, 0.0, top)
    assert grade["untouched"][0] < top
    bug = students.bug_names("lab04_dpo", ROOT, students.graded_functions(nb))[0]
    assert students.expected_grade(nb, students.Plan("s", "lab04_dpo", "bug", bug), ROOT)[0] < top


def test_redact_hides_the_password():
    assert redact("postgresql://grader:s3cret@db.example.edu/rlprep") == "postgresql://grader:***@db.example.edu/rlprep"
    assert redact("sqlite:////tmp/gradebook.db") == "sqlite:////tmp/gradebook.db"


def test_unknown_lab_and_used_out_folder(tmp_path, capsys):
    assert main(["classroom", "simulate", "--labs", "lab99_nope", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "error: unknown lab(s): lab99_nope" in err and "fix: labs: lab01_gae" in err
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("an earlier run")
    assert main(["classroom", "simulate", "--labs", "lab01_gae", "--out", str(tmp_path / "b")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "b" / "keep.txt").read_text() == "an earlier run"


@pytest.mark.parametrize("url, needle", [
    ("postgresql://grader:s3cretpw@127.0.0.1:1/rlprep", "cannot reach the gradebook"),
    ("mysql://grader:s3cretpw@127.0.0.1/rlprep", "is not SQLite or PostgreSQL"),
])
def test_gradebook_that_cannot_be_used(tmp_path, url, needle):
    out = tmp_path / "run"
    proc = rlprep(["classroom", "simulate", "--labs", "lab01_gae", "--out", str(out)], RLPREP_GRADEBOOK_URL=url)
    assert_clean_error(proc, needle, "***")
    assert "s3cretpw" not in proc.stderr + proc.stdout
    assert not out.exists()  # nothing was started or written


@pytest.fixture(scope="module")
def sqlite_class(tmp_path_factory):
    from rlprep.classroom.simulate import simulate

    out = tmp_path_factory.mktemp("classroom") / "run"
    report = simulate(7, ["lab01_gae"], out, log=lambda *a: None, absent=1)
    return report, out


def test_small_class_sqlite_grades_match(sqlite_class):
    report, out = sqlite_class
    check_class(report, out, f"sqlite:///{out / 'course' / 'gradebook.db'}")
    assert set(students.SPECIAL) == {p.kind for p in students.plans(7, ["lab01_gae"], {"lab01_gae": ["x"]})}
    assert report.summary().startswith("classroom: 7 students x 1 labs = 7 submissions graded, ")
    assert "submissions/minute" in report.summary() and "SQLite" in report.gradebook


def test_small_class_feedback_hides_the_hidden_tests(sqlite_class):
    check_feedback(sqlite_class[1], "lab01_gae")


def test_report_and_lms_exports_match_the_expected_grades(sqlite_class):
    """simulate wrote the report and both exports and found every number equal to the in-process expected grades
    (check_class: no mismatch); here the anchors that do not rest on that comparison, and that it can fail."""
    import copy
    import csv
    import json

    from rlprep.classroom import crosscheck
    from rlprep.classroom.results import lab_from_notebook

    report, out = sqlite_class
    expected = json.loads((out / "expected.json").read_text())
    kinds = {e["kind"]: e["student"] for e in expected}
    summary = json.loads((out / "class-report.json").read_text())
    lab = summary["labs"][0]
    assert (summary["students"], summary["submissions"], lab["submitted"]) == (8, 7, 7)
    assert [m["student"] for m in lab["missing"]] == [kinds["absent"]]
    assert [(x["student"], x["raw"], x["score"]) for x in summary["late"]] == [(kinds["late"], 10.0, 0.0)]
    assert lab["scores"][kinds["reference"]] == 10 and lab["scores"][kinds["sabotage"]] == 0
    by_hand = lab["cells"][0]
    assert by_hand["grade_id"] == "test_gae_by_hand" and by_hand["full"] + by_hand["partial"] == 7
    assert sum(p["failed"] for c in lab["cells"] for p in c["properties"]) > 0  # the bug fails on a property
    with open(out / "canvas.csv", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[:2] == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "lab01_gae"],
                          ["Points Possible", "", "", "", "", "10"]]
    rows = {row[3]: row for row in canvas[2:]}
    assert rows[kinds["reference"]][5] == "10" and rows[kinds["absent"]][5] == "" and rows[kinds["late"]][5] == "0"
    with open(out / "moodle.csv", newline="") as f:
        moodle = {row[2]: row for row in csv.reader(f)}
    assert moodle[kinds["reference"]][5] == "10" and moodle[kinds["absent"]][5] == ""
    assert moodle["s05"][0].startswith("'=HYPERLINK(")  # a formula in the roster is written as text
    page = (out / "class-report.html").read_text()
    assert "<img src=x onerror" not in page and "<script>" not in page and "&lt;img src=x onerror=" in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page  # the absent student's name, as text
    assert page.count("data:image/png;base64,") == 2 and "Content-Security-Policy" in page
    # the comparison finds a changed number
    roster = sorted({e["student"] for e in expected})
    labs = {"lab01_gae": lab_from_notebook("lab01_gae", nbformat.read(out / "course" / "source" / "lab01_gae" /
                                                                      "lab01_gae.ipynb", as_version=4))}
    assert crosscheck.check_summary(summary, expected, roster, labs) == []
    bad = copy.deepcopy(summary)
    bad["labs"][0]["cells"][0]["properties"][1]["failed"] += 1
    assert any("test_gae_by_hand properties" in m for m in crosscheck.check_summary(bad, expected, roster, labs))
    canvas[2][5] = "9" if canvas[2][5] != "9" else "8"
    with open(out / "canvas-changed.csv", "w", newline="") as f:
        csv.writer(f).writerows(canvas)
    assert len(crosscheck.check_canvas(out / "canvas-changed.csv", expected, roster, {"lab01_gae": 10.0})) == 1


def test_report_and_exports_from_the_command_line(sqlite_class, tmp_path, capsys):
    """rlprep classroom report / export on the course folder, and nbgrader's own `export --exporter`."""
    from nbgrader.apps import ExportApp

    _, out = sqlite_class
    course, db_url = out / "course", f"sqlite:///{out / 'course' / 'gradebook.db'}"
    assert main(["classroom", "report", "--course", str(course), "--out", str(tmp_path / "r.html")]) == 0
    assert "8 students, 7 hand-ins, 1 labs" in capsys.readouterr().out
    assert (tmp_path / "r.html").read_text().count("<h2") == 2 and (tmp_path / "r.json").is_file()
    assert main(["classroom", "export", "--course", str(course), "--format", "canvas",
                 "--out", str(tmp_path / "c.csv")]) == 0
    assert (tmp_path / "c.csv").read_text() == (out / "canvas.csv").read_text()
    app = ExportApp()
    app.initialize(["--exporter=rlprep.classroom.lms_export.MoodleExport", f"--to={tmp_path / 'm.csv'}",
                    f"--CourseDirectory.root={course}", "--CourseDirectory.course_id=rlprep",
                    f"--CourseDirectory.db_url={db_url}"])
    app.start()
    assert (tmp_path / "m.csv").read_text() == (out / "moodle.csv").read_text()
    assert main(["classroom", "report", "--course", str(tmp_path / "nope")]) == 2
    assert "error: no course folder" in capsys.readouterr().err


def test_report_escapes_a_hostile_student_id(sqlite_class, tmp_path):
    """A roster entry whose id, name and e-mail are markup or formulas: shown as text, written as text."""
    import csv
    import shutil

    from nbgrader.api import Gradebook

    from rlprep.classroom.lms_export import export_csv
    from rlprep.classroom.report import write_report

    _, out = sqlite_class
    shutil.copy(out / "course" / "gradebook.db", tmp_path / "gradebook.db")
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    evil = "<script>window.__pwned=1</script>"
    with Gradebook(db_url, "rlprep") as gb:
        gb.update_or_create_student(evil, first_name="=1+2", last_name="<b>x</b>", email="@SUM(A1)")
    summary = write_report(db_url, "rlprep", out / "course", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert evil not in page and "<b>x" not in page and html_escape(evil) in page
    assert evil in [m["student"] for m in summary["labs"][0]["missing"]]
    with open(export_csv("canvas", db_url, "rlprep", tmp_path / "c.csv"), newline="") as f:
        row = next(r for r in csv.reader(f) if r[3] == evil)
    assert row[0] == "<b>x</b>, =1+2" and row[5] == ""  # the name starts with "<", not a formula
    with open(export_csv("moodle", db_url, "rlprep", tmp_path / "m.csv"), newline="") as f:
        row = next(r for r in csv.reader(f) if r[2] == evil)
    assert row[:4] == ["'=1+2", "<b>x</b>", evil, "'@SUM(A1)"]
    # grades.csv: nbgrader's own CSV plugin joins fields unquoted, so a comma in a name shifts the row's columns
    from nbgrader.plugins import CsvExportPlugin

    with Gradebook(db_url, "rlprep") as gb:
        gb.update_or_create_student("s01", first_name='Ann, "the" =1', last_name="O'Neil")
        plugin = CsvExportPlugin()
        plugin.to = str(tmp_path / "nbgrader.csv")
        plugin.export(gb)
    with open(tmp_path / "nbgrader.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["student_id"] == "s01")
    assert row["first_name"] == "Ann" and None in row  # nbgrader 0.9.6: the row has a column too many
    with open(export_csv("csv", db_url, "rlprep", tmp_path / "grades.csv"), newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["student_id"] == "s01")
    assert (row["first_name"], row["last_name"], row["max_score"]) == ('Ann, "the" =1', "O'Neil", "10.0")


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_regrading_in_two_processes_gives_identical_grades(sqlite_class, tmp_path):
    """Re-autograde the class with --jobs 2 over the serial run: same grades.csv rows, no submission lost."""
    from rlprep.classroom.autograde import autograde_lab
    from rlprep.classroom.cycle import Classroom
    from rlprep.classroom.simulate import read_grades

    report, out = sqlite_class
    columns = ("raw_score", "late_submission_penalty", "score", "max_score")
    serial = {k: tuple(row[c] for c in columns) for k, row in read_grades(out / "grades.csv").items()}
    submitted = sorted(p.relative_to(out) for p in (out / "course" / "submitted").rglob("*.ipynb"))
    room = Classroom(out)
    run = autograde_lab(room, "lab01_gae", jobs=2)
    assert run.refused == [] and len(run.graded) == 7
    parallel = {k: tuple(row[c] for c in columns) for k, row in read_grades(room.export(tmp_path / "g.csv")).items()}
    assert parallel == serial
    assert sorted(p.relative_to(out) for p in (out / "course" / "submitted").rglob("*.ipynb")) == submitted


def test_bad_hand_ins_are_refused_and_kept(sqlite_class, tmp_path, capsys):
    import shutil

    _, out = sqlite_class
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(out / "course" / "gradebook.db", course / "gradebook.db")
    shutil.copytree(out / "course" / "source", course / "source")
    odd = course / "submitted" / "bob smith;rm" / "lab01_gae"
    shutil.copytree(out / "course" / "submitted" / "s01" / "lab01_gae", odd)
    text = course / "submitted" / "s99" / "lab01_gae" / "lab01_gae.ipynb"
    text.parent.mkdir(parents=True)
    text.write_text("my answers: compute_gae = ...")
    other = course / "submitted" / "s98" / "lab01_gae" / "answers.py"
    other.parent.mkdir(parents=True)
    other.write_text("def compute_gae(): ...")
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("error: ") == 3 and captured.err.count("fix: ") == 3 and "Traceback" not in captured.err
    assert "'bob smith;rm' has characters" in captured.err
    assert "s99: " in captured.err and "is not a notebook" in captured.err
    assert "s98: no lab01_gae.ipynb in " in captured.err and "(found: answers.py)" in captured.err
    assert "0 graded, 3 refused" in captured.out
    assert text.read_text() == "my answers: compute_gae = ..." and (odd / "lab01_gae.ipynb").is_file()
    assert other.read_text() == "def compute_gae(): ..." and not (course / "autograded").exists()
    # a lab the gradebook does not have, and an odd id given to simulate
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab09_atlas"]) == 2
    assert "lab 'lab09_atlas' is not in the gradebook (it has: lab01_gae)" in capsys.readouterr().err
    assert main(["classroom", "simulate", "--students", "2", "--ids", "s01,../x", "--labs", "lab01_gae",
                 "--out", str(tmp_path / "never")]) == 2
    assert "student id '../x'" in capsys.readouterr().err and not (tmp_path / "never").exists()


# -- re-grading after a new release, on the instructor's own layout (autograder/nbgrader_config.py) ----------------
CHANGED = "test_gae_by_hand"  # the hidden test the new release changes


def _auto_scores(db_url: str, students_: list[str]) -> dict[tuple[str, str], float]:
    from nbgrader.api import Gradebook

    with Gradebook(db_url, "rlprep") as gb:
        return {(s, g.name): g.auto_score for s in students_
                for g in gb.find_submission_notebook("lab01_gae", "lab01_gae", s).grades}


def _digest(folder) -> dict:
    import hashlib

    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def instructor_course(sqlite_class, tmp_path, monkeypatch):
    """``autograder/`` as the repository lays it out (its nbgrader_config.py; the source is ``../solutions``),
    holding the class's gradebook and the hand-ins of its reference and bug students."""
    import json
    import shutil

    _, out = sqlite_class
    monkeypatch.delenv("RLPREP_GRADEBOOK_URL", raising=False)
    monkeypatch.delenv("RLPREP_COURSE_ID", raising=False)
    shutil.copytree(ROOT / "solutions" / "lab01_gae", tmp_path / "solutions" / "lab01_gae")
    course = tmp_path / "autograder"
    course.mkdir()
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", course)
    shutil.copy(out / "course" / "gradebook.db", course / "gradebook.db")
    kinds = {e["kind"]: e["student"] for e in json.loads((out / "expected.json").read_text())}
    pair = [kinds["reference"], kinds["bug"]]
    for student in pair:
        shutil.copytree(out / "course" / "submitted" / student, course / "submitted" / student)
    return course, pair


def test_regrade_after_a_new_release_keeps_manual_grades_and_submissions(instructor_course, capsys):
    """Formgrader's manual grade, extra credit and comment survive a re-release with a changed hidden test and a
    re-autograde (rlprep classroom autograde on autograder/'s layout, 2 processes); the new test is the one graded."""
    from nbgrader.api import Gradebook

    from rlprep.classroom import manual_grades
    from rlprep.classroom.cycle import Classroom

    course, (good, buggy) = instructor_course
    db_url = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(db_url, "rlprep") as gb:  # what an instructor does in formgrader, through nbgrader's own API
        gb.find_grade(CHANGED, "lab01_gae", "lab01_gae", buggy).manual_score = 1.5
        gb.find_grade("test_gae_bootstrap", "lab01_gae", "lab01_gae", buggy).extra_credit = 0.5
        gb.find_comment("compute_gae", "lab01_gae", "lab01_gae", buggy).manual_comment = "see me: bootstrap at ends"
        gb.db.commit()
    before = manual_grades.snapshot(db_url, "rlprep", "lab01_gae")
    assert before.count == 3 and before.submissions >= {good, buggy}
    auto_before = _auto_scores(db_url, [good, buggy])
    assert auto_before[(good, CHANGED)] == 2
    submitted = _digest(course / "submitted")

    # a fix to the hidden tests, released again (nbgrader generate_assignment --force with autograder/'s config)
    source = course.parent / "solutions" / "lab01_gae" / "lab01_gae.ipynb"
    nb = nbformat.read(source, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == CHANGED)
    cell.source = cell.source.replace("### BEGIN HIDDEN TESTS\n", "### BEGIN HIDDEN TESTS\n"
                                      "assert False, 'PropertyFailed: the new release checks more'\n", 1)
    assert "the new release" in cell.source
    nbformat.write(nb, source)
    room = Classroom(course, config_file=course / "nbgrader_config.py")
    assert room.course == course and room.db_url.startswith(db_url)
    room.generate("lab01_gae")

    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae", "--jobs", "2"]) == 0
    printed = capsys.readouterr()
    assert "2 graded, 0 refused" in printed.out and "3 manual grades and comments kept" in printed.out
    assert "warning" not in printed.err
    after = manual_grades.snapshot(db_url, "rlprep", "lab01_gae")
    assert manual_grades.lost(before, after) == [] and after.submissions == before.submissions
    with Gradebook(db_url, "rlprep") as gb:
        grade = gb.find_grade(CHANGED, "lab01_gae", "lab01_gae", buggy)
        assert (grade.manual_score, grade.auto_score, grade.score, grade.needs_manual_grade) == (1.5, 0, 1.5, True)
    auto_after = _auto_scores(db_url, [good, buggy])
    assert auto_after[(good, CHANGED)] == 0  # graded by the new release's hidden test
    assert {k: v for k, v in auto_after.items() if k[1] != CHANGED} == \
        {k: v for k, v in auto_before.items() if k[1] != CHANGED}
    assert _digest(course / "submitted") == submitted
    for student in (good, buggy):  # written into the instructor's course folder, not a temp course
        assert (course / "autograded" / student / "lab01_gae" / "lab01_gae.ipynb").is_file()
        assert (course / "feedback" / student / "lab01_gae" / "lab01_gae.html").is_file()


def test_a_lost_manual_grade_is_written_back(sqlite_class, tmp_path):
    import shutil

    from nbgrader.api import Gradebook

    from rlprep.classroom import manual_grades

    shutil.copy(sqlite_class[1] / "course" / "gradebook.db", tmp_path / "gradebook.db")
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db_url, "rlprep") as gb:
        student = gb.assignment_submissions("lab01_gae")[0].student.id
        gb.find_grade(CHANGED, "lab01_gae", "lab01_gae", student).manual_score = 0.5
        gb.find_comment("compute_gae", "lab01_gae", "lab01_gae", student).manual_comment = "good"
        gb.db.commit()
    before = manual_grades.snapshot(db_url, "rlprep", "lab01_gae")
    assert manual_grades.restore(db_url, "rlprep", "lab01_gae", before) == []
    with Gradebook(db_url, "rlprep") as gb:  # what a future nbgrader that overwrote them would leave
        gb.find_grade(CHANGED, "lab01_gae", "lab01_gae", student).manual_score = None
        gb.find_comment("compute_gae", "lab01_gae", "lab01_gae", student).manual_comment = None
        gb.db.commit()
    restored = manual_grades.restore(db_url, "rlprep", "lab01_gae", before)
    assert len(restored) == 2 and f"{student}/lab01_gae/{CHANGED}: 0.5" in restored[0]
    assert manual_grades.lost(before, manual_grades.snapshot(db_url, "rlprep", "lab01_gae")) == []


def test_autograde_with_a_gradebook_that_cannot_be_used(sqlite_class, tmp_path, capsys, monkeypatch):
    """An unreachable server, or no gradebook.db: error/fix, exit 2, the hand-ins untouched, nothing created."""
    import shutil

    monkeypatch.delenv("RLPREP_GRADEBOOK_URL", raising=False)
    course = tmp_path / "course"
    shutil.copytree(sqlite_class[1] / "course" / "submitted" / "s01", course / "submitted" / "s01")
    submitted = _digest(course)
    url = "postgresql://grader:s3cretpw@127.0.0.1:1/rlprep"
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae", "--gradebook", url]) == 2
    err = capsys.readouterr().err
    assert "error: cannot reach the gradebook postgresql://grader:***@127.0.0.1:1/rlprep" in err and "fix: " in err
    assert "s3cretpw" not in err and "Traceback" not in err
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae"]) == 2
    err = capsys.readouterr().err
    assert f"error: no gradebook at {course / 'gradebook.db'}" in err and "fix: run nbgrader generate_assignment" in err
    assert _digest(course) == submitted  # no gradebook.db created, nothing graded or moved


def test_autograde_with_a_broken_nbgrader_config(tmp_path, capsys):
    course = tmp_path / "autograder"
    (course / "submitted" / "s01" / "lab01_gae").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.root = undefined_name\n")
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae"]) == 2
    err = capsys.readouterr().err
    assert f"error: cannot load {course / 'nbgrader_config.py'}: NameError" in err and "fix: fix that file" in err
    assert "Traceback" not in err and sorted(p.name for p in course.iterdir()) == ["nbgrader_config.py", "submitted"]

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
    report = simulate(7, ["lab01_gae"], out, log=lambda *a: None)
    return report, out


def test_small_class_sqlite_grades_match(sqlite_class):
    report, out = sqlite_class
    check_class(report, out, f"sqlite:///{out / 'course' / 'gradebook.db'}")
    assert set(students.SPECIAL) == {p.kind for p in students.plans(7, ["lab01_gae"], {"lab01_gae": ["x"]})}
    assert report.summary().startswith("classroom: 7 students x 1 labs = 7 submissions graded, ")
    assert "submissions/minute" in report.summary() and "SQLite" in report.gradebook


def test_small_class_feedback_hides_the_hidden_tests(sqlite_class):
    check_feedback(sqlite_class[1], "lab01_gae")


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
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab01_gae"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("error: ") == 2 and captured.err.count("fix: ") == 2 and "Traceback" not in captured.err
    assert "'bob smith;rm' has characters" in captured.err
    assert "s99: " in captured.err and "is not a notebook" in captured.err
    assert "0 graded, 2 refused" in captured.out
    assert text.read_text() == "my answers: compute_gae = ..." and (odd / "lab01_gae.ipynb").is_file()
    # a lab the gradebook does not have, and an odd id given to simulate
    assert main(["classroom", "autograde", "--course", str(course), "--lab", "lab09_atlas"]) == 2
    assert "lab 'lab09_atlas' is not in the gradebook (it has: lab01_gae)" in capsys.readouterr().err
    assert main(["classroom", "simulate", "--students", "2", "--ids", "s01,../x", "--labs", "lab01_gae",
                 "--out", str(tmp_path / "never")]) == 2
    assert "student id '../x'" in capsys.readouterr().err and not (tmp_path / "never").exists()

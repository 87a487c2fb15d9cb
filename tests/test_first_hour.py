"""A learner's first hour (issue 38): what a new learner meets before anything else, row by row.

The browser rows (interrupting the grade cell, a lab opening clean, the hint, the widget keeping the answer) are in
tests/e2e/test_browser.py; the time to the first plot is in tests/test_first_plot.py.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from rlprep.cli import main

ROOT = Path(__file__).resolve().parents[1]
LAB01 = ROOT / "labs" / "lab01_gae" / "lab01_gae.ipynb"


# -- row 2: ■ while "Grade yourself" runs ------------------------------------------------------------------------
def test_interrupting_grade_here_prints_one_line_not_a_traceback(tmp_path, rlprep_home):
    """JupyterLab's ■ sends SIGINT to the kernel's process group (the kernel and the `rlprep grade` it started)."""
    shutil.copy(LAB01, tmp_path / "lab01_gae.ipynb")
    code = ("import sys; from rlprep.grading import grade_here; grade_here('lab01_gae.ipynb'); "
            "print('cell finished', flush=True)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-u", "-c", code], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    first = proc.stdout.readline()
    assert first.startswith("grading the saved lab01_gae.ipynb"), first
    time.sleep(2)  # rlprep grade is running (it takes seconds to start nbgrader)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    lines = [line for line in out.splitlines() if line.strip()]
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert len([line for line in lines if "interrupted" in line]) == 1, out
    assert any(line.startswith("interrupted: ") and "nothing saved was lost" in line for line in lines), out
    assert lines[-1] == "cell finished", out  # the cell ends normally: the rest of Run All is not cut off


# -- row 7: a walkthrough notebook is not a lab ------------------------------------------------------------------
def test_grading_a_walkthrough_says_it_is_not_a_lab(capsys):
    rc = main(["grade", str(ROOT / "notebooks" / "02_gae.ipynb")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "error: notebooks/02_gae.ipynb is a walkthrough notebook, not a graded lab" in err, err
    assert "fix: the labs are in labs/" in err and "labs/lab01_gae/lab01_gae.ipynb" in err, err


def test_grading_a_copy_of_a_walkthrough_elsewhere_says_so_too(tmp_path, capsys):
    shutil.copy(ROOT / "notebooks" / "06_grpo_dapo.ipynb", tmp_path / "06_grpo_dapo.ipynb")
    assert main(["grade", str(tmp_path / "06_grpo_dapo.ipynb")]) == 2
    assert "is a walkthrough notebook, not a graded lab" in capsys.readouterr().err


# -- row 8: --set lr=abc ---------------------------------------------------------------------------------------
def test_a_bad_set_value_suggests_the_configs_own_default():
    from rlprep.errors import RlprepError
    from rlprep.trainers.cli import parse_overrides
    from rlprep.trainers.grpo import GRPOConfig
    from rlprep.trainers.ppo import PPOConfig

    for cls, key in ((GRPOConfig, "lr"), (PPOConfig, "lr"), (PPOConfig, "gae_lambda")):
        with pytest.raises(RlprepError) as err:
            parse_overrides(cls, [f"{key}=abc"])
        default = getattr(cls, key)
        assert f"--set {key}={default!r}" in err.value.fix and "its default" in err.value.fix, err.value.fix


# -- row 9: progress says which file each grade came from -----------------------------------------------------
def test_progress_names_the_graded_file_and_marks_a_copy_outside_the_course(tmp_path, rlprep_home, capsys):
    from rlprep.interview.history import record_lab_grade

    record_lab_grade("lab01_gae", 9, 10, notebook=LAB01)  # the course's own lab file, graded earlier
    scratch = tmp_path / "scratch" / "lab01_gae.ipynb"
    scratch.parent.mkdir()
    shutil.copy(LAB01, scratch)
    assert main(["grade", str(scratch)]) == 1  # the untouched release: 0/10, recorded with its path
    capsys.readouterr()
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith("lab01_gae")]
    assert len(rows) == 2, out
    course, copy = rows
    assert "9/10" in course and course.rstrip().endswith("labs/lab01_gae/lab01_gae.ipynb"), course
    assert "0/10" in copy and copy.rstrip().endswith(f"{scratch.resolve()} (a copy outside the course)"), copy


# -- rows 3 and 5: the closing hint names every failing property; an error shared by rows is written once -------
def _lab05_with_wrong_batch_scale() -> nbformat.NotebookNode:
    """Lab 5 as a learner left it: group_advantages written with scale="batch" dividing by the group's std, the other
    three answer cells untouched (they still raise NotImplementedError)."""
    from rlprep.grading.authoring import reference_source

    nb = nbformat.read(ROOT / "labs" / "lab05_grpo" / "lab05_grpo.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("reference", "").endswith(
        ":group_advantages"))
    right = '"batch": lambda: rewards.detach().std(unbiased=True) + eps'
    source = reference_source(cell.metadata["rlprep"]["reference"])
    assert right in source
    cell.source = source.replace(right, '"batch": lambda: grouped.std(dim=1, unbiased=True).repeat_interleave('
                                        'group_size) + eps')
    return nb


def test_the_closing_hint_names_every_failing_property_the_wrong_answer_first(tmp_path, rlprep_home):
    from rlprep.grading.grade import format_report, grade_notebook

    path = tmp_path / "lab05_grpo.ipynb"
    nbformat.write(_lab05_with_wrong_batch_scale(), path)
    report = grade_notebook(path)
    text = format_report(report)
    hint = text[text.index("next: "):].splitlines()
    failed = [c for c in report.cells if not c.passed]
    scale = next(c for c in failed if c.grade_id == "test_ga_scales")
    assert scale.message.startswith("PropertyFailed: "), scale
    prop = scale.message.removeprefix("PropertyFailed: ")
    assert hint[1].startswith(f"  1. {prop} (test_ga_scales"), text  # the answer written but wrong: first
    for name in ("kl_k3", "grpo_loss", "diagnose_zero_loss"):
        assert sum(f"{name} still raises NotImplementedError" in line for line in hint) == 1, text
    for c in failed:  # every failing test is named in the hint
        assert any(c.grade_id in line for line in hint[1:]), (c.grade_id, text)


def test_a_syntax_error_is_written_once_with_its_line():
    from rlprep.grading.grade import CellGrade, GradeReport, format_report

    error = ("SyntaxError: invalid syntax, line 32 of the answer cell that defines compute_gae: lastgaelam = = delta "
             "(the cell never ran, so compute_gae is not defined)")
    cells = [CellGrade(f"test_{i}", 0, 2, False, error) for i in range(6)]
    text = format_report(GradeReport("lab01_gae", 0, 12, cells))
    assert text.count("line 32") == 2, text  # its row, and once in the hint
    assert text.count("(the same error as test_0)") == 5, text
    assert "  1. an answer cell does not compile, so nothing it defines exists: " + error in text, text


# -- row 10: the clock wherever an answer is typed; the widget keeps the answer on screen ------------------------
def test_the_terminal_follow_up_prompt_shows_a_running_clock(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    from interview_support import cli_env

    child = pexpect.spawn(sys.executable, ["-m", "rlprep", "mock", "--ids", "W04", "--seed", "0", "--minutes", "1"],
                          env=cli_env(tmp_path / "home"), encoding="utf-8", timeout=20)
    child.expect(r"\[\d:\d\d left\] ")
    child.sendline("GAE mixes TD residuals with lambda")
    child.sendline("")                                   # the empty line ends the answer
    child.expect("Follow-up")
    child.expect(r"\[follow-up 0:00\] ")                 # the follow-up's own clock, from when it was asked
    child.expect(r"\x08+2")                               # it runs while nobody types: readline redraws 0:00 -> 0:02
    child.sendline("bias and variance")
    child.sendline("")
    child.expect(r"saved\.")
    child.expect("rating")
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()


def test_the_widget_keeps_the_answer_on_screen_after_submit(rlprep_home):
    from interview_support import FIXTURE_BANK
    from rlprep.interview.bank import load_bank
    from rlprep.interview.widget import MockInterview

    clock = iter(range(0, 10_000, 7))
    widget = MockInterview(ids=["W04"], bank=load_bank(FIXTURE_BANK), clock=lambda: float(next(clock)))
    widget.submit_answer("GAE mixes TD residuals with lambda")
    assert widget.phase == "follow_up"
    assert widget.answer_box.layout.display != "none" and widget.answer_box.disabled
    assert widget.answer_box.value == "GAE mixes TD residuals with lambda"
    assert widget.follow_up_clock.layout.display != "none"
    assert widget.follow_up_clock.value.startswith("Follow-up ")  # its own clock while the follow-up is typed
    widget.submit_follow_up("bias and variance")
    assert widget.answer_box.layout.display != "none" and widget.answer_box.value.startswith("GAE")
    assert "<i>Your answer:</i> bias and variance" in widget.follow_up_html.value
    assert widget.follow_up_clock.layout.display == "none"  # answered: its clock has stopped


# -- row 4: a failing visible test shows the learner's line and the property, no grader frame ----------------------
def test_a_failing_visible_test_in_a_kernel_shows_no_grader_frame():
    from jupyter_client.manager import start_new_kernel

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        kc.execute_interactive("import numpy as np\nfrom rlprep.grading.asserts import assert_close, check", timeout=60)
        errors = []
        kc.execute_interactive("adv = np.zeros(3)\nassert_close(adv, [1.0, 0.0, 2.0], 'advantages on the 3-step "
                               "example worked by hand')", timeout=60,
                               output_hook=lambda msg: errors.append(msg["content"]) if msg["msg_type"] == "error" else None)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    (error,) = errors
    import re

    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))  # IPython colours its traceback
    assert error["ename"] == "PropertyFailed"
    assert "assert_close(adv, [1.0, 0.0, 2.0]" in shown, shown          # the line of the cell
    assert "PropertyFailed: advantages on the 3-step example worked by hand" in shown, shown
    assert "asserts.py" not in shown and "rlprep/grading" not in shown, shown


# -- row 12: running a walkthrough never dirties the checkout ----------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_walkthrough_saved_through_the_server_keeps_no_outputs(tmp_path):
    """Learner mode's server config (what `rlprep lab` writes) makes a walkthrough save as git has it: the contents
    API receives it with outputs, execution counts, run metadata and the kernel's language_info, and the file on disk
    is byte for byte the committed one. A lab keeps its outputs (it is the learner's work)."""
    import urllib.request

    from rlprep.grading.learner_mode import enable

    served = tmp_path / "course"
    (served / "notebooks").mkdir(parents=True)
    (served / "labs").mkdir()
    walkthrough = served / "notebooks" / "02_gae.ipynb"
    shutil.copy(ROOT / "notebooks" / "02_gae.ipynb", walkthrough)
    shutil.copy(LAB01, served / "labs" / "lab01_gae.ipynb")
    committed = walkthrough.read_bytes()
    enable(tmp_path / "config")
    port, token = _free_port(), "first-hour"
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={served}"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}/api/contents"

    def call(method, path, body=None):
        request = urllib.request.Request(f"{base}/{path}?token={token}", method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    try:
        deadline = time.time() + 60
        while True:
            try:
                model = call("GET", "notebooks/02_gae.ipynb")
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        for path in ("notebooks/02_gae.ipynb", "labs/lab01_gae.ipynb"):
            nb = call("GET", path)["content"] if path != "notebooks/02_gae.ipynb" else model["content"]
            nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python"}
            for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
                cell["execution_count"] = n + 1
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
                cell["metadata"]["execution"] = {"iopub.status.idle": "2026-12-05T00:00:00Z"}
            call("PUT", path, {"type": "notebook", "format": "json", "content": nb})
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    saved = nbformat.read(walkthrough, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in saved.cells if c.cell_type == "code")
    assert walkthrough.read_bytes() == committed  # as git has it: `git pull` updates it, nothing to commit
    lab = nbformat.read(served / "labs" / "lab01_gae.ipynb", as_version=4)
    assert any(c.get("outputs") for c in lab.cells if c.cell_type == "code")


# -- row 11: every training cell says what its profile can show -----------------------------------------------
TRAINING_CALLS = re.compile(
    r"\b(train_grpo|train_ppo|train_dpo|train_reward_model|PPOTrainer|compare_rewards|reproduce_zero_loss|"
    r"lambda_sweep|train_captioner|train_supervised|train_notes|train_policy|train_colour_rl|colour_rl\w*|"
    r"run_variants|train)\(")
"""Calls that train for a budget the profile sets (the course's trainers and the demos that run them). A cell with
one must say what its profile can show: ``profile_note(...)`` (rlprep.demos.lab_runs), as the labs' demos do."""


def _training_cells():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and TRAINING_CALLS.search(re.sub(r"^\s*(from|import) .*$", "", cell.source,
                                                                        flags=re.M)):
                yield path.name, cell


def test_every_training_cell_says_what_its_profile_can_show():
    cells = list(_training_cells())
    assert len(cells) >= 10, [(name, c.id) for name, c in cells]  # the rule still finds the notebooks' runs
    silent = [f"{name}:{c.id}" for name, c in cells if "profile_note(" not in c.source]
    assert not silent, f"training cells that do not print profile_note(...): {silent}"


def test_a_profile_note_says_what_smoke_cannot_show():
    from rlprep.demos.lab_runs import profile_note

    assert "too small to learn" in profile_note("GRPO, 8 steps", "smoke")
    toy = profile_note("3 connectors", "smoke", smoke="20 steps instead of 600")
    assert toy.startswith("3 connectors. smoke profile: 20 steps instead of 600") and "too small" not in toy
    assert profile_note("3 connectors", "cpu", smoke="x") == profile_note("3 connectors", "cpu")


def test_a_profile_note_can_say_what_each_profile_shows_for_one_run():
    """A cell whose cpu run is seconds, several seeds, and quoted by no figure says so instead of the default."""
    from rlprep.demos.lab_runs import profile_note

    says = {"smoke": "2 seeds", "cpu": "3 seeds, seconds", "gpu": "the cpu budget"}
    for name, sentence in says.items():
        note = profile_note("GRPO toy", name, **says)
        assert note == f"GRPO toy. {name} profile: {sentence}.", note
    assert profile_note("GRPO toy", "cpu", smoke="x") == profile_note("GRPO toy", "cpu")  # the default stays


# -- row 13: make book: no kernel transport warning; search tells a question page from its bank entry ------------
def test_the_book_runs_kernels_without_the_tcp_warning(tmp_path, capfd):
    from rlprep.book.execute import execute_cached

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)", id="answer")])
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    result = execute_cached(path, "smoke", tmp_path / "cache")
    out = nbformat.read(result.path, as_version=4).cells[0].outputs
    assert out and out[0]["text"] == "42\n"
    err = capfd.readouterr().err
    assert "without encryption" not in err, err


def test_a_bank_entry_and_its_question_page_have_different_titles():
    from rlprep.book.pages import bank_page, question_page
    from rlprep.interview.bank import load_bank

    q = load_bank()["W11"]
    bank_title = bank_page(q).splitlines()[0]
    page_title = question_page("W11", q.question.zh, q.question.en, None, []).cells[0].source.splitlines()[0]
    assert bank_title != page_title and bank_title.startswith("# Bank entry W11 · "), (bank_title, page_title)


# -- row 15: A05 and A06 on the course map, each with a section ----------------------------------------------
def test_a05_and_a06_are_on_the_map_with_a_section():
    from rlprep.course import NOTEBOOKS, course_map_markdown

    atlas = next(u for u in NOTEBOOKS if u.path.endswith("13_algorithm_atlas.ipynb"))
    assert {"A05", "A06"} <= set(atlas.ids)
    row = next(line for line in course_map_markdown().splitlines() if "13" in line and "A01" in line)
    assert "A05" in row and "A06" in row, row
    headings = [c.source.splitlines()[0] for c in nbformat.read(ROOT / atlas.path, as_version=4).cells
                if c.cell_type == "markdown" and c.source]
    for qid in ("A05", "A06"):
        assert sum(h.startswith(f"### {qid} · ") for h in headings) == 1, qid


# -- row 16: a .venv reached through a symlink gets the same sandbox from the notebook as from the command line --
def test_a_venv_through_a_symlink_starts_the_same_sandbox(tmp_path):
    """The sandbox runs the grader's own interpreter (sys.executable): named through a link to the .venv, as a kernel
    started from a symlinked checkout names it, it must start inside bubblewrap as the command line's does."""
    from rlprep.grading.sandbox import probe

    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix), target_is_directory=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    through_link = subprocess.run([str(link / "bin" / "python"), "-c",
                                   "from rlprep.grading.sandbox import probe; print(probe())"],
                                  env=env, capture_output=True, text=True, timeout=120).stdout.strip()
    assert through_link == probe(), (through_link, probe())


@pytest.mark.slow  # a whole grade (minutes on a loaded machine); the probe above covers the same start, fast
def test_a_venv_through_a_symlink_grades_in_the_sandbox_from_the_notebook(tmp_path, rlprep_home):
    from rlprep.grading.sandbox import probe

    if probe() != "bubblewrap":
        pytest.skip(f"needs bubblewrap, which the command line uses here ({probe()}); make sandbox installs it")
    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix), target_is_directory=True)   # the kernel's interpreter, named through a link
    shutil.copy(LAB01, tmp_path / "lab01_gae.ipynb")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([str(link / "bin" / "python"), "-c",
                           "import sys; from rlprep.grading import grade_here; print(sys.executable); "
                           "grade_here('lab01_gae.ipynb')"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.stdout.splitlines()[0].startswith(str(link)), done.stdout  # grade_here runs rlprep grade through it
    assert "lab01_gae: 0 / 10 points" in done.stdout, done.stdout + done.stderr
    assert "sandbox:" not in done.stdout, done.stdout  # the table names the sandbox only when it is not bubblewrap

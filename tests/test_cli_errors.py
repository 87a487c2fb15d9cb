"""Bad input at the command line: `error:`/`fix:` on stderr, exit 2, never a traceback; JSON with `--json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from rlprep.cli import main
from rlprep.errors import RlprepError

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_BANK = ROOT / "tests" / "fixtures" / "bank"


def rlprep(args: list[str], stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    environ = dict(os.environ, RLPREP_BANK=str(FIXTURE_BANK), **env)
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + [p for p in [environ.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "rlprep", *args], input=stdin, capture_output=True, text=True,
                          env=environ, timeout=120)


def assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "error:" in proc.stderr and "fix:" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


@pytest.mark.parametrize("command", [["progress"], ["mock", "--ids", "W04"], ["mock", "--intro"]])
def test_rlprep_home_that_is_a_file_or_under_a_file(tmp_path, command):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    assert_clean_error(rlprep(command, "x\n\n", RLPREP_HOME=str(a_file)), "(RLPREP_HOME) is a file", "RLPREP_HOME")
    assert_clean_error(rlprep(command, "x\n\n", RLPREP_HOME=str(a_file / "sub")), f"lies under {a_file}")


def test_history_database_that_is_a_folder(tmp_path):
    (tmp_path / "history.sqlite").mkdir()
    for command in (["progress"], ["mock", "--ids", "W04"]):
        assert_clean_error(rlprep(command, "x\n\n", RLPREP_HOME=str(tmp_path)), "history.sqlite is a folder",
                           "move it aside")


def test_rlprep_cache_that_is_a_file(tmp_path):
    a_file = tmp_path / "cache"
    a_file.write_text("")
    assert_clean_error(rlprep(["models", "list"], RLPREP_CACHE=str(a_file)), "(RLPREP_CACHE) is a file")


def _release(lab: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "labs" / lab / f"{lab}.ipynb", as_version=4)


def test_a_notebook_of_another_lab_names_the_lab_its_cells_belong_to(tmp_path, capsys):
    from rlprep.grading.grade import lab_of

    labs = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    nb = _release("lab04_dpo")
    with pytest.raises(RlprepError, match="named for lab01_gae but its cells belong to lab04_dpo"):
        lab_of("lab01_gae.ipynb", nb, labs)
    nb.metadata.pop("rlprep")                       # no metadata: the grade ids alone tell
    with pytest.raises(RlprepError, match=r"belong to lab04_dpo \(grade ids dpo_loss"):
        lab_of("lab01_gae.ipynb", nb, labs)
    assert lab_of("lab04_dpo.ipynb", _release("lab04_dpo"), labs) == "lab04_dpo"
    assert lab_of("my_copy.ipynb", _release("lab01_gae"), labs) == "lab01_gae"   # metadata names it
    path = tmp_path / "lab01_gae.ipynb"
    nbformat.write(_release("lab04_dpo"), path)
    assert main(["grade", str(path)]) == 2          # refused before any grading starts
    err = capsys.readouterr().err
    assert "its cells belong to lab04_dpo (metadata.rlprep.lab is 'lab04_dpo'" in err
    assert "fix: grade it as lab04_dpo: save it as lab04_dpo.ipynb" in err and "Traceback" not in err


def test_json_errors_are_json_on_stdout(tmp_path):
    for args in (["grade", str(tmp_path / "nope.ipynb"), "--json"], ["grade", "--json"],
                 ["grade", "--json", "--deadline", "soon", "x.ipynb"]):
        proc = rlprep(args)
        assert_clean_error(proc)
        error = json.loads(proc.stdout)
        assert set(error) == {"error", "fix"} and error["error"] and error["fix"], proc.stdout


def test_a_bad_option_is_an_error_with_a_fix():
    proc = rlprep(["mock", "--questions", "many"])
    assert_clean_error(proc, "argument -n/--questions: invalid int value: 'many'", "rlprep mock --help")
    assert "usage: rlprep mock" in proc.stderr

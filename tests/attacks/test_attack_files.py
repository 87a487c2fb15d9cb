"""Attacks on the learner's and the grader's files and secrets."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness import SRC, ZEROS_GAE, cell, grade, submission, untouched

from rlprep.grading import sandbox

ROOT = SRC.parent


def test_kernel_cannot_plant_code_where_the_grader_imports_from(tmp_path, env, sandboxed):
    # The grader's working folder (found through /proc) gets a fake `rlprep` package and a `torch.py`: the next
    # `python -m rlprep grade` started there would run them instead of the grader.
    attack = cell(r'''
import os, pathlib
def folders(pid):
    found = []
    try:
        found.append(os.readlink(f"/proc/{pid}/cwd"))
        env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        found += [v[4:].decode() for v in env if v.startswith(b"PWD=")]
    except OSError:
        pass
    return found
for pid in ("1", str(os.getppid())):
    for folder in folders(pid):
        try:
            cwd = pathlib.Path(folder)
            (cwd / "rlprep").mkdir(exist_ok=True)
            (cwd / "rlprep" / "__init__.py").write_text("")
            (cwd / "rlprep" / "__main__.py").write_text(
                "import json\nprint(json.dumps({'lab': 'lab01_gae', 'score': 10.0, 'max_score': 10.0, 'cells': []}))\n")
            (cwd / "torch.py").write_text("raise SystemExit('planted')\n")
        except OSError:
            pass
''', "attack")
    workdir = tmp_path / "work"
    workdir.mkdir()
    first = grade(submission(tmp_path / "one", ZEROS_GAE, [attack]), env, cwd=workdir)
    assert first.score == 0, first.report
    assert not (workdir / "rlprep").exists() and not (workdir / "torch.py").exists()
    second = grade(untouched(tmp_path / "two"), env, cwd=workdir)
    assert second.score == 0, second.report


def test_kernel_cannot_overwrite_the_learners_notebook(tmp_path, env, sandboxed):
    attack = cell(r'''
import os, pathlib
args = pathlib.Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
cwd = pathlib.Path(os.readlink(f"/proc/{os.getppid()}/cwd"))
for arg in args:
    if arg.endswith(b".ipynb"):
        (cwd / arg.decode()).write_text("{}")
''', "attack")
    path = submission(tmp_path, ZEROS_GAE, [attack])
    before = path.read_bytes()
    grade(path, env)
    assert path.read_bytes() == before


def test_kernel_cannot_delete_the_learners_data(tmp_path, env):
    keep = tmp_path / "learner-home" / "history.sqlite"
    keep.write_text("a learner's history")
    attack = cell("import os, shutil\nshutil.rmtree(os.environ['RLPREP_HOME'], ignore_errors=True)", "attack")
    grade(submission(tmp_path, ZEROS_GAE, [attack]), env)
    assert keep.read_text() == "a learner's history"


def test_kernel_cannot_read_the_graders_secrets(tmp_path, env):
    secret = "s3cret-gradebook-password"
    answer = ("import os\n"
              "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
              "    raise ValueError(repr(dict(os.environ)))\n")
    graded = grade(submission(tmp_path, answer), {**env, "RLPREP_GRADEBOOK_URL": f"postgresql://u:{secret}@db/x"})
    assert graded.score == 0
    assert "raised ValueError" in graded.stdout  # the learner's own message does come back
    assert secret not in graded.stdout and "RLPREP_CACHE" not in graded.stdout


def visible(mounts: list[str], path: Path) -> bool:
    """Whether ``path`` is inside a folder that ``mounts`` (bubblewrap arguments) binds, and not masked there by a
    tmpfs mounted at or above it, below that folder."""
    binds = [Path(mounts[i + 1]) for i, a in enumerate(mounts) if a in ("--ro-bind", "--bind")]
    masks = [Path(mounts[i + 1]) for i, a in enumerate(mounts) if a == "--tmpfs"]
    for bound in binds:
        if bound == path or bound in path.parents:
            if not any((m == path or m in path.parents) and (bound == m or bound in m.parents) for m in masks):
                return True
    return False


def test_an_import_path_the_interpreter_does_not_need_is_not_mounted(monkeypatch, tmp_path):
    # PYTHONPATH=<repository root>, pytest's tests/ folders and an unrelated folder on the grader's sys.path
    # reach the sandbox as folders it mounts, unless the mounts come from the interpreter alone.
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "attacks"),
                                      str(other)])
    mounts = sandbox.bwrap_argv(sandbox.RunDirs(tmp_path / "run"), ["python"])
    for path in (ROOT / "solutions", ROOT / "tests", ROOT / "autograder", other):
        assert not visible(mounts, path), (path, mounts)
    assert visible(mounts, Path(sys.prefix).resolve()) and visible(mounts, Path(os.__file__).resolve().parent)


def test_the_graders_pythonpath_does_not_expose_the_repository(tmp_path, env, sandboxed):
    # A grader started with PYTHONPATH=<repository root> (or under pytest): the kernel must not read solutions/.
    answer = f"""
import os
def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    found = [p for p in ({str(ROOT / "solutions")!r}, {str(ROOT / "tests")!r}, {str(ROOT / "autograder")!r})
             if os.path.exists(p)]
    raise ValueError("FOUND:" + repr(found))
"""
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(SRC)])
    graded = grade(submission(tmp_path, answer), {**env, "PYTHONPATH": path})
    assert graded.report["sandbox"] == "bubblewrap"
    assert "FOUND:[]" in graded.stdout, graded.stdout[-2000:]

"""A grader running as root where bubblewrap is missing: the learner's code must never run as root, unless the
instructor switches the sandbox off on purpose (``RLPREP_SANDBOX=none``), and even then as the unprivileged uid."""

from __future__ import annotations

import os
import shutil

import pytest

from harness import grade, submission

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not (shutil.which("setpriv") and shutil.which("prlimit")),
                                reason="the root grader's uid drop needs root, setpriv and prlimit")

# Leaves a file where only root can write (the test's own folder, mode 0700) and reports the uid it ran as.
WHOAMI = """
import os, pathlib
try:
    pathlib.Path({mark!r}).write_text(str(os.getuid()))
except OSError:
    pass

def compute_gae(*args, **kwargs):
    raise ValueError(f"uid={{os.getuid()}}")
"""


def _without_bwrap(tmp_path, env: dict) -> dict:
    """The grader's environment with a PATH that holds prlimit and setpriv but no bwrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for tool in ("prlimit", "setpriv"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    return {**env, "PATH": str(bin_dir)}


def test_root_without_a_sandbox_refuses_to_run_learner_code(tmp_path, env):
    os.chmod(tmp_path, 0o700)
    mark = tmp_path / "ran-as-root"
    graded = grade(submission(tmp_path / "nb", WHOAMI.format(mark=str(mark))), _without_bwrap(tmp_path, env))
    assert not mark.exists(), f"the learner's code ran as uid {mark.read_text()}"
    assert graded.rc == 2, (graded.stdout, graded.stderr)
    assert "error: " in graded.stderr and "fix: " in graded.stderr and "Traceback" not in graded.stderr
    assert "as root" in graded.stderr and "RLPREP_SANDBOX=none" in graded.stderr


def test_root_with_the_sandbox_switched_off_runs_learner_code_unprivileged(tmp_path, env):
    from rlprep.grading.sandbox import SANDBOX_UID

    os.chmod(tmp_path, 0o700)
    mark = tmp_path / "ran-as-root"
    graded = grade(submission(tmp_path / "nb", WHOAMI.format(mark=str(mark))),
                   {**_without_bwrap(tmp_path, env), "RLPREP_SANDBOX": "none"})
    assert not mark.exists(), f"the learner's code ran as uid {mark.read_text()}"
    if graded.rc == 2:  # this Python lives where the unprivileged uid cannot run it (e.g. under /root, mode 0700)
        assert f"uid {SANDBOX_UID}" in graded.stderr and "fix: " in graded.stderr, graded.stderr
    else:
        assert graded.report["sandbox"].startswith("none: switched off by RLPREP_SANDBOX=none"), graded.report
        assert f"uid={SANDBOX_UID}" in graded.messages()["test_gae_by_hand"], graded.report


def test_plain_argv_drops_the_uid_when_root(monkeypatch):
    from rlprep.grading import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    argv = sandbox.plain_argv(["python", "-c", "pass"])
    assert argv[-3:] == ["python", "-c", "pass"]
    assert f"--reuid={sandbox.SANDBOX_UID}" in argv and "--inh-caps=-all" in argv
    assert argv.index(f"--reuid={sandbox.SANDBOX_UID}") < argv.index("python")

"""A grader running as root where bubblewrap is missing: the learner's code must never run as root, unless the
instructor switches the sandbox off on purpose (``RLPREP_SANDBOX=none``), and even then as the unprivileged uid."""

from __future__ import annotations

import os
import shutil

import pytest

from harness import grade, submission

needs_drop = pytest.mark.skipif(not (shutil.which("setpriv") and shutil.which("prlimit")),
                                reason="the root grader's uid drop needs setpriv and prlimit")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a root grader's refusal is tested as root")

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


@needs_drop
@as_root
def test_root_without_a_sandbox_refuses_to_run_learner_code(tmp_path, env):
    os.chmod(tmp_path, 0o700)
    mark = tmp_path / "ran-as-root"
    graded = grade(submission(tmp_path / "nb", WHOAMI.format(mark=str(mark))), _without_bwrap(tmp_path, env))
    assert not mark.exists(), f"the learner's code ran as uid {mark.read_text()}"
    assert graded.rc == 2, (graded.stdout, graded.stderr)
    assert "error: " in graded.stderr and "fix: " in graded.stderr and "Traceback" not in graded.stderr
    assert "as root" in graded.stderr and "RLPREP_SANDBOX=none" in graded.stderr


@needs_drop
@as_root
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


@needs_drop
def test_plain_argv_drops_the_uid_when_root(monkeypatch):
    from rlprep.grading import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    argv = sandbox.plain_argv(["python", "-c", "pass"])
    assert argv[-3:] == ["python", "-c", "pass"]
    assert f"--reuid={sandbox.SANDBOX_UID}" in argv and "--inh-caps=-all" in argv
    assert argv.index(f"--reuid={sandbox.SANDBOX_UID}") < argv.index("python")


@needs_drop
def test_refusal_covers_every_root_case_without_a_sandbox(monkeypatch, tmp_path):
    from rlprep.errors import RlprepError
    from rlprep.grading import sandbox

    monkeypatch.setattr(sandbox, "probe", lambda: "none: bubblewrap is not installed")
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.delenv("RLPREP_SANDBOX", raising=False)
    assert sandbox.refusal() is None  # a learner's own machine: their code, their uid
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    refused = sandbox.refusal()
    assert isinstance(refused, RlprepError) and "RLPREP_SANDBOX=none" in refused.fix
    dirs = sandbox.RunDirs(tmp_path)
    with pytest.raises(RlprepError):
        sandbox.launch_argv(dirs, ["python"])
    monkeypatch.setenv("RLPREP_SANDBOX", "none")
    monkeypatch.setattr(sandbox, "_dropped_start", lambda: "setpriv: failed to execute python: Permission denied")
    assert f"uid {sandbox.SANDBOX_UID}, which cannot start" in sandbox.refusal().problem
    monkeypatch.setattr(sandbox, "_dropped_start", lambda: "")
    assert sandbox.refusal() is None
    argv, kind = sandbox.launch_argv(dirs, ["python"])
    assert kind.startswith("none: ") and argv[argv.index("python") - 1] == "--" and "--bounding-set=-all" in argv

"""The sandbox's pieces that need no kernel: the shared folders' watch, the linked interpreter paths, the caps."""

from __future__ import annotations

import os

from rlprep.grading import sandbox


def _dirs(tmp_path) -> sandbox.RunDirs:
    dirs = sandbox.RunDirs(tmp_path / "run")
    dirs.root.mkdir()
    for d in (dirs.inbox, dirs.outbox, dirs.ipc, dirs.home, dirs.pkg):
        d.mkdir()
    return dirs


def test_exchange_overflow_counts_disk_blocks_and_files_but_not_links(tmp_path, monkeypatch):
    dirs = _dirs(tmp_path)
    (dirs.outbox / "call-1").mkdir()
    (dirs.outbox / "call-1" / "result.npz").write_bytes(os.urandom(2**20))
    big = tmp_path / "elsewhere.bin"
    big.write_bytes(os.urandom(4 * 2**20))
    (dirs.ipc / "link").symlink_to(big)  # a link costs the grader nothing and is not followed
    assert sandbox.exchange_overflow(dirs) == ""
    monkeypatch.setattr(sandbox, "EXCHANGE_BYTES", 2**20 // 2)
    assert "over 0 MiB into the folders it shares with the grader" in sandbox.exchange_overflow(dirs)
    monkeypatch.setattr(sandbox, "EXCHANGE_BYTES", 2**30)
    monkeypatch.setattr(sandbox, "EXCHANGE_ENTRIES", 5)
    for k in range(6):
        (dirs.home / f"f{k}").touch()
    assert "over 5 files" in sandbox.exchange_overflow(dirs)
    sandbox.empty_exchange(dirs)
    assert not any(dirs.outbox.iterdir()) and not any(dirs.ipc.iterdir()) and not any(dirs.home.iterdir())
    assert big.is_file()  # the link went, not what it pointed at


def test_a_linked_environment_gets_its_link_inside_the_sandbox(tmp_path):
    real = tmp_path / "real" / "venv"
    (real / "lib").mkdir(parents=True)
    link = tmp_path / "project" / ".venv"
    link.parent.mkdir()
    link.symlink_to(real, target_is_directory=True)
    args = sandbox._links([link, link / "lib", real / "lib"], mounted=[real])
    assert args == ["--symlink", str(real), str(link)]  # once: what lies below it resolves through it
    assert sandbox._links([real / "lib"], mounted=[real]) == []


def test_the_interpreters_link_chain_is_followed(tmp_path):
    (tmp_path / "opt" / "bin").mkdir(parents=True)
    (tmp_path / "opt" / "bin" / "python3.11").write_text("")
    (tmp_path / "alias" / "bin").mkdir(parents=True)
    (tmp_path / "alias" / "bin" / "python3").symlink_to(tmp_path / "opt" / "bin" / "python3.11")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to("../../alias/bin/python3")
    hops = sandbox._link_hops(tmp_path / "venv" / "bin" / "python")
    assert hops == [tmp_path / "venv" / "bin", tmp_path / "alias" / "bin", tmp_path / "opt" / "bin"]


def test_home_and_tmp_are_capped_tmpfs_not_the_graders_disk(tmp_path):
    dirs = _dirs(tmp_path)
    argv = sandbox.bwrap_argv(dirs, ["python"], as_root=True)
    for target in ("/tmp", sandbox.HOME):
        i = argv.index(target)
        assert argv[i - 5:i] == ["--size", str(sandbox.SCRATCH_BYTES), "--perms", "1777", "--tmpfs"], argv[i - 5:i]
    assert str(dirs.home) not in argv  # the host folder is not mounted any more
    assert argv[argv.index("--chdir") - 2:argv.index("--chdir")] == ["--remount-ro", "/"]

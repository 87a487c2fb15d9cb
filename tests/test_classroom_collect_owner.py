"""A hand-in under another student's name is not collected on make hub's shared exchange.

nbgrader's own collect (the first case) collects a folder in ``inbound/`` named for student ``nobody`` but owned by
``daemon`` when its timestamp is later, replacing nobody's real hand-in; ``OwnerCheckedCollect`` (the hub's
collect) skips it and collects nobody's own. Needs root (the folders are given to two system accounts).
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="gives folders to other accounts: needs root")

LAB = "lab"


def _hand_in(inbound, student, stamp, owner, text):
    folder = inbound / f"{student}+{LAB}+{stamp}+x{stamp[-2:]}"
    folder.mkdir()
    (folder / f"{LAB}.ipynb").write_text(text)
    (folder / "timestamp.txt").write_text(stamp)
    uid = pwd.getpwnam(owner).pw_uid
    for path in (folder, *folder.iterdir()):
        os.chown(path, uid, -1)


@pytest.fixture(scope="module")
def empty_gradebook(tmp_path_factory):
    """One empty SQLite gradebook (nbgrader makes it with alembic, seconds), copied by each test."""
    from nbgrader.api import Gradebook

    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{old}"  # alembic
    try:
        Gradebook(f"sqlite:///{path}", "c").close()
    finally:
        os.environ["PATH"] = old
    return path


@pytest.mark.parametrize("owner_checked, collected", [(False, "forged"), (True, "own")])
def test_a_hand_in_under_another_name_is_not_collected(tmp_path, caplog, empty_gradebook, owner_checked, collected):
    shutil.copy(empty_gradebook, tmp_path / "gradebook.db")
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.collect import ExchangeCollect
    from traitlets.config import Config

    from rlprep.classroom.exchange_collect import OwnerCheckedCollect

    inbound = tmp_path / "exchange" / "c" / "inbound"
    inbound.mkdir(parents=True)
    _hand_in(inbound, "nobody", "2026-12-01 10:00:00.000000 UTC", "nobody", "own")
    _hand_in(inbound, "nobody", "2026-12-01 11:00:00.000000 UTC", "daemon", "forged")
    course = tmp_path / "course"
    c = Config()
    c.Exchange.root = str(tmp_path / "exchange")
    c.CourseDirectory.root = str(course)
    c.CourseDirectory.course_id = "c"
    c.CourseDirectory.assignment_id = LAB
    c.CourseDirectory.db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    kind = OwnerCheckedCollect if owner_checked else ExchangeCollect
    collect = kind(coursedir=CourseDirectory(config=c), authenticator=Authenticator(config=c), config=c)
    collect.log.propagate = True
    with caplog.at_level(logging.INFO):
        collect.start()
    assert (course / "submitted" / "nobody" / LAB / f"{LAB}.ipynb").read_text() == collected
    if owner_checked:
        assert "belongs to daemon (a hand-in under another student's name)" in caplog.text

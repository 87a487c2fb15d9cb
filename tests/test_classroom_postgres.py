"""A small class (6 students x 2 labs) graded into a real PostgreSQL gradebook that the test starts itself."""

from __future__ import annotations

import pytest

from classroom_checks import check_class, check_feedback
from rlprep.classroom import postgres

pytestmark = pytest.mark.skipif(
    postgres.binaries() is None,
    reason="no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql (make test does it as root)")


@pytest.fixture(scope="module")
def server():
    with postgres.TemporaryPostgres() as pg:
        yield pg


@pytest.fixture(scope="module")
def postgres_class(server, tmp_path_factory):
    from rlprep.classroom.simulate import simulate

    out = tmp_path_factory.mktemp("classroom-pg") / "run"
    mp = pytest.MonkeyPatch()
    mp.setenv("RLPREP_GRADEBOOK_URL", server.url)
    try:
        report = simulate(6, ["lab01_gae", "lab09_atlas"], out, db_url=server.url, log=lambda *a: None, absent=1)
    finally:
        mp.undo()
    return report, out


def test_postgres_class_grades_match(server, postgres_class):
    report, out = postgres_class
    assert report.gradebook.startswith("PostgreSQL ")
    assert not (out / "course" / "gradebook.db").exists()  # every grade went to the server
    check_class(report, out, server.url)
    assert "6 students x 2 labs = 12 submissions graded" in report.summary()


def test_postgres_class_feedback(postgres_class):
    for lab in ("lab01_gae", "lab09_atlas"):
        check_feedback(postgres_class[1], lab)


def test_server_is_stopped_and_removed():
    with postgres.TemporaryPostgres() as pg:
        folder = pg.folder
        assert (pg.sockets / f".s.PGSQL.{pg.port}").exists()
    assert not folder.exists()

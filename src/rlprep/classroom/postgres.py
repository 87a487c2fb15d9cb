"""A throwaway PostgreSQL server for a simulated class: ``initdb`` + ``pg_ctl`` in a temp folder, Unix socket only.

Debian's ``postgresql`` package (``apt-get install postgresql``; ``make test`` installs it when run as root)
puts the binaries in ``/usr/lib/postgresql/<version>/bin``. PostgreSQL refuses to run as root, so under root the
server runs as the ``postgres`` user that package creates. The server listens on a Unix socket in its own folder
(no TCP port is opened), trusts local connections, and is stopped and deleted when the context exits.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from rlprep.errors import RlprepError

DATABASE = "rlprep"


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first, then PATH), or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    return Path(initdb).parent if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent else None


def _free_port() -> int:
    """A port number for the socket's name (``.s.PGSQL.<port>``); nothing listens on TCP."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TemporaryPostgres:
    """``with TemporaryPostgres() as pg: pg.url`` -> ``postgresql://postgres@/rlprep?host=<socket dir>&port=<n>``."""

    def __init__(self, bindir: Path | None = None):
        self.bindir = bindir or binaries()
        if self.bindir is None:
            raise RlprepError("no PostgreSQL server binaries (initdb, pg_ctl) on this machine",
                              "apt-get install postgresql (Debian/Ubuntu), or pass --gradebook URL of a running server")
        self.folder = Path(tempfile.mkdtemp(prefix="rlprep-pg-"))
        self.data, self.sockets = self.folder / "data", self.folder / "sockets"
        self.port = _free_port()
        self.started = False

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/{DATABASE}?host={self.sockets}&port={self.port}"

    def _run(self, *cmd: str) -> str:
        argv = [str(self.bindir / cmd[0]), *cmd[1:]]
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RlprepError(f"{cmd[0]} failed: {(done.stderr or done.stdout).strip()[-1000:]}",
                              "check the PostgreSQL installation (apt-get install postgresql)")
        return done.stdout

    def __enter__(self) -> "TemporaryPostgres":
        self.sockets.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.sockets, "postgres")
        try:
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                      "--no-instructions")
            options = f"-c listen_addresses='' -c unix_socket_directories='{self.sockets}' -p {self.port} " \
                      f"-c fsync=off -c max_connections=200"
            self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "server.log"),
                      "-w", "-t", "60", "start")
            self.started = True
            self._run("createdb", "-h", str(self.sockets), "-p", str(self.port), "-U", "postgres", DATABASE)
        except BaseException:
            self.stop()
            raise
        return self

    def allow_group(self, group: str) -> None:
        """Let the members of unix ``group`` reach the server's socket, and no other account but postgres and root
        (folders 0710, group ``group``): on a hub, formgrader runs as the instructor, whom local trust authentication
        then lets in, while a student's code cannot connect to the gradebook."""
        for folder in (self.folder, self.sockets):
            shutil.chown(folder, group=group)
            folder.chmod(0o710)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder."""
        if self.started:
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            except (RlprepError, subprocess.TimeoutExpired):
                pass
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)

    def __exit__(self, *exc) -> None:
        self.stop()

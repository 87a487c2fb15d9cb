"""The gradebook URL: checked before a class is run, and described (server version, no password) after."""

from __future__ import annotations

import re
from pathlib import Path

from rlprep.errors import RlprepError

SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg", "postgresql+psycopg2")


def redact(url: str) -> str:
    """The URL with its password replaced by ``***``."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def _engine(url: str):
    from sqlalchemy import create_engine

    scheme = url.split(":", 1)[0]
    if scheme not in SCHEMES:
        raise RlprepError(f"gradebook URL {redact(url)!r} is not SQLite or PostgreSQL",
                          "set RLPREP_GRADEBOOK_URL=postgresql://USER:PASSWORD@HOST/DB (or leave it unset for SQLite)")
    args = {"connect_timeout": 5} if scheme.startswith("postgresql") else {}
    try:
        return create_engine(url, connect_args=args)
    except ImportError as err:
        raise RlprepError(f"no PostgreSQL driver for {redact(url)} ({err})",
                          "pip install -e '.[course]' (it brings psycopg, SQLAlchemy's driver for postgresql://)") \
            from err


def sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH[?query]`` URL, or None for any other URL."""
    return Path(url[len("sqlite:///"):].split("?", 1)[0]) if url.startswith("sqlite:///") else None


def check_reachable(url: str, must_exist: bool = False) -> str:
    """Connect once; return :func:`describe`'s text, or raise RlprepError saying why the server cannot be reached.

    ``must_exist``: a SQLite gradebook file must be there already (connecting would create an empty one)."""
    from sqlalchemy.exc import SQLAlchemyError

    path = sqlite_file(url)
    if must_exist and path is not None and not path.is_file():
        raise RlprepError(f"no gradebook at {path}", "run nbgrader generate_assignment LAB there first, or pass "
                                                     "--gradebook URL (or set RLPREP_GRADEBOOK_URL)")
    engine = _engine(url)
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as err:
        reason = str(getattr(err, "orig", err)).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RlprepError(f"cannot reach the gradebook {redact(url)}: {reason}",
                          "start the database server or correct RLPREP_GRADEBOOK_URL (user, password, host, port, "
                          "database); nothing was written") from err
    finally:
        engine.dispose()
    return describe(url)


def describe(url: str) -> str:
    """``PostgreSQL 15.x at host/db`` or ``SQLite at path`` (no password)."""
    from sqlalchemy import text

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                version = conn.execute(text("SHOW server_version")).scalar()
                return f"PostgreSQL {version} ({redact(url)})"
            return f"SQLite {conn.execute(text('select sqlite_version()')).scalar()} ({url})"
    finally:
        engine.dispose()

"""Recorded results: the files experiments write and the course's prose quotes.

Every figure a lab's text quotes comes from here, never typed by hand: an experiment calls
``record(name, values, command=...)``, which writes ``records/<name>.json`` in the course checkout (atomic), and a
markdown cell says ``{{ results.<name>.<key>:.2f }}``, which ``rlprep release`` fills in
(``rlprep.grading.templating``). ``rlprep release --check`` fails when the released text and the record
disagree, so re-running an experiment and releasing is the only way to change a quoted figure.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from rlprep.errors import RlprepError


def records_dir() -> Path:
    """``records/`` in the course checkout (``RLPREP_RECORDS`` overrides, e.g. for a scratch run)."""
    override = os.environ.get("RLPREP_RECORDS")
    if override:
        return Path(override)
    from rlprep.paths import repo_root

    root = repo_root()
    if root is None:
        raise RlprepError("no course checkout found, so there is no records/ folder",
                          "set RLPREP_RECORDS to a folder for the result files")
    return root / "records"


def record(name: str, values: dict, *, command: str, profile: str | None = None) -> Path:
    """Write ``records/<name>.json``: ``values`` (JSON numbers, strings, lists) plus how they were made."""
    if not name.replace("_", "").isalnum():
        raise ValueError(f"record name {name!r} must be letters, digits and '_'")
    from rlprep.profiles import get_profile

    doc = {"name": name, "values": values, "command": command,
           "profile": profile or get_profile().name,
           "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    folder = records_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=folder)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    target = folder / f"{name}.json"
    os.replace(tmp, target)
    return target


def load(name: str) -> dict:
    """The whole record ``name`` (``values``, ``command``, ``profile``, ``date``, ``machine``)."""
    path = records_dir() / f"{name}.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RlprepError(f"no recorded result {name!r} ({path} is missing)",
                          "run the experiment that writes it (its command is in the text that quotes it)") from None
    except ValueError as err:
        raise RlprepError(f"{path} is not valid JSON ({err})", f"re-run the experiment that writes {name}") from None


class AllRecords(Mapping):
    """``results.<name>.<key>`` in a template: record ``name``'s values (loaded on first use)."""

    def __init__(self):
        self._cache: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        if name not in self._cache:
            if not (records_dir() / f"{name}.json").is_file():
                raise KeyError(name)
            self._cache[name] = {**load(name)["values"], "_meta": load(name)}
        return self._cache[name]

    def __iter__(self):
        folder = records_dir()
        return iter(sorted(p.stem for p in folder.glob("*.json"))) if folder.is_dir() else iter(())

    def __len__(self) -> int:
        return sum(1 for _ in self)


# the module form a record's command is written in: python -m rlprep.demos.<name> [options] --record, or
# python -m rlprep.agentic.experiments <experiment> [options] --record; `rlprep record` runs the same entry point
_MODULE_FORM = re.compile(r"python -m rlprep\.(?:demos\.(\w+)|agentic\.experiments)(?: (.*?))? --record$")


def command_line(doc: Mapping) -> str:
    """The command that remakes record ``doc``, in its ``rlprep record`` form (``rlprep.records_cli``).

    A record stores the command it was written with, e.g. ``RLPREP_PROFILE=cpu python -m rlprep.demos.ppo_rlhf
    --record``; ``rlprep record ppo_rlhf`` runs that same entry point, and is what the page tells a learner to type.
    """
    command = str(doc.get("command", "?"))
    match = _MODULE_FORM.search(command)
    if match is None:
        return command
    name, options = match.group(1) or "agentic", match.group(2)
    return command[:match.start()] + " ".join(["rlprep record", name] + ([options] if options else []))


def _format_value(value, fmt: str) -> str:
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)  # ints, strings and lists as written: a step count is not a measurement
    return format(value, fmt)


def table(name: str, keys: list[str] | None = None, *, labels: Mapping[str, str] | None = None,
          fmt: str = ".3g") -> str:
    """Record ``name`` as a Markdown table (``keys`` in order, default all), with the command that wrote it.

    A walkthrough notebook quotes a measured figure by showing this table (see :func:`show`), so the figure on the
    page is the one the experiment wrote, in the profile that wrote it, never a number typed into the prose.
    """
    doc = load(name)
    values = doc["values"]
    keys = list(values) if keys is None else list(keys)
    missing = [k for k in keys if k not in values]
    if missing:
        raise RlprepError(f"record {name!r} has no value {', '.join(map(repr, missing))}",
                          f"re-run its experiment ({command_line(doc)}) or quote one of: "
                          f"{', '.join(sorted(values))}")
    labels = labels or {}
    rows = [f"| {labels.get(k, k)} | {_format_value(values[k], fmt)} |" for k in keys]
    head = "| quantity | value |\n|---|---|"
    # date and machine stay in the JSON: the page says what made the figure, the notebook's Reproducibility note when
    foot = f"\n\n*Recorded by `{command_line(doc)}` in the `{doc.get('profile', '?')}` profile.*"
    return head + "\n" + "\n".join(rows) + foot


def show(name: str, keys: list[str] | None = None, **kwargs):
    """Display :func:`table` in a notebook (plain text elsewhere); the notebook's way to quote a record."""
    text = table(name, keys, **kwargs)
    try:
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython ships with the course's Jupyter stack
        print(text)
        return None
    display(Markdown(text))
    return None

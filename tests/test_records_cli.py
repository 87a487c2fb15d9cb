"""``rlprep record``: the registry names real entry points, the CLI lists and dispatches, and every committed
record's command is shown in a form the CLI accepts."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from rlprep import cli, records
from rlprep.records_cli import RECORDERS

RECORDS = Path(__file__).parents[1] / "records"


@pytest.mark.parametrize("name", sorted(RECORDERS))
def test_every_recorder_module_has_a_main(name):
    module = importlib.import_module(RECORDERS[name].module)
    assert callable(getattr(module, "main", None)), RECORDERS[name].module


@pytest.mark.parametrize("name", sorted(n for n in RECORDERS if n != "agentic"))
def test_each_recorder_lists_the_record_its_module_writes(name):
    module = importlib.import_module(RECORDERS[name].module)
    assert RECORDERS[name].writes == module.RECORD


def test_listing_names_every_recorder_and_its_record(capsys):
    assert cli.main(["record"]) == 0
    out = capsys.readouterr().out
    for name, recorder in RECORDERS.items():
        assert name in out and f"records/{recorder.writes}.json" in out


def test_a_name_runs_its_module_with_record_and_the_options(monkeypatch):
    seen = {}
    module = importlib.import_module(RECORDERS["ppo_lambda"].module)
    monkeypatch.setattr(module, "main", lambda argv: seen.setdefault("argv", argv) and 0)
    assert cli.main(["record", "ppo_lambda", "--profile", "smoke"]) == 0
    assert seen["argv"] == ["--profile", "smoke", "--record"]


def test_an_unknown_name_is_a_clear_error(capsys):
    assert cli.main(["record", "no_such_experiment"]) == 2
    err = capsys.readouterr().err
    assert "no_such_experiment" in err and "fix:" in err


@pytest.mark.parametrize("path", sorted(RECORDS.glob("*.json")), ids=lambda p: p.stem)
def test_each_committed_record_is_shown_with_a_command_the_cli_accepts(path):
    doc = json.loads(path.read_text())
    shown = records.command_line(doc)
    assert "python -m rlprep.demos" not in shown and "python -m rlprep.agentic" not in shown
    if "rlprep record " in shown:
        name = shown.split("rlprep record ", 1)[1].split()[0]
        assert name in RECORDERS, shown


def test_command_line_keeps_the_environment_and_the_options():
    doc = {"command": "RLPREP_PROFILE=cpu OMP_NUM_THREADS=1 python -m rlprep.demos.image_diff --record"}
    assert records.command_line(doc) == "RLPREP_PROFILE=cpu OMP_NUM_THREADS=1 rlprep record image_diff"
    doc = {"command": "python -m rlprep.agentic.experiments hacking --profile smoke --steps 40 --record"}
    assert records.command_line(doc) == "rlprep record agentic hacking --profile smoke --steps 40"
    assert records.command_line({"command": "rlprep models build --record"}) == "rlprep models build --record"

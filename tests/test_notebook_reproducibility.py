"""No hand-typed measurement logistics in learner text, the Reproducibility notes included.

Every figure in prose comes from a record the code wrote (``rlprep.records``), never typed by hand, and learner text
carries no measurement logistics. A notebook's ``## Reproducibility`` note (cell id ``reproducibility``) says how to
rerun each profile, what the profile changes, what is built once and cached, and which cells show records and where
those live; a run's wall time, date, machine and load stay in the record (``records/<name>.json``) and reach the page
only through a code cell that prints them. So no markdown cell of a walkthrough notebook or a lab's source carries a
date or a load average, and no Reproducibility note types a duration.

``labs/`` is left out: ``rlprep release`` fills its text from the records (``{{ results.<name>._meta.date }}``), so the
dates there are the records' own, and ``solutions/`` (checked here) is where that text is written.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LAB_SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))

_LOGISTICS = re.compile(r"\b20\d\d-\d\d-\d\d\b|load average|load avg|load ≈|shared with other jobs|cores shared|shared cores", re.IGNORECASE)
# a number (or range) followed by a time unit: "98 s", "2 min\n5 s", "234–287 s", "1,530 s", "248 CPU-seconds",
# "15 minutes"; not "40 steps", "5 seeds", "8 samples", "120-step" (the unit must end the word)
_DURATION = re.compile(r"\b\d[\d.,]*(?:\s*[–-]\s*\d[\d.,]*)?\s*(?:CPU[- ])?"
                       r"(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b", re.IGNORECASE)


def is_reproducibility_note(cell) -> bool:
    return cell.cell_type == "markdown" and (cell.get("id") == "reproducibility"
                                             or cell.source.lstrip().startswith("## Reproducibility"))


def hand_typed_logistics(nb) -> list[str]:
    """``cell id: match`` for every date, load average or machine note in a markdown cell (code is not checked:
    what a code cell prints comes from the code or a record)."""
    return [f"{cell.get('id')}: {m.group(0)}" for cell in nb.cells if cell.cell_type == "markdown"
            for m in _LOGISTICS.finditer(cell.source)]


def hand_typed_durations(nb) -> list[str]:
    """``cell id: match`` for every duration typed into the Reproducibility note."""
    return [f"{cell.get('id')}: {' '.join(m.group(0).split())}" for cell in nb.cells if is_reproducibility_note(cell)
            for m in _DURATION.finditer(cell.source)]


def _cell(kind: str, source: str, cell_id: str):
    cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
    cell.id = cell_id
    return cell


def test_detectors_flag_typed_logistics_and_spare_the_rest():
    note = _cell("markdown", "## Reproducibility\n\n`RLPREP_PROFILE=cpu ...`: one such run took 98 s (load average "
                             "0.3, 2026-11-30), 2 min\n5 s end to end; 248 CPU-seconds; 234–287 s; 40 steps, 5 seeds, "
                             "8 samples, a 120-step run, about a minute, minutes on a laptop.", "reproducibility")
    answer = _cell("markdown", "**Measured (2026-12-01):** 0.82 in 3 s on a machine shared with other jobs.", "a")
    code = _cell("code", "print(f'{wall:.0f} s on 2026-11-30, load average {load}')", "c")
    nb = nbformat.v4.new_notebook(cells=[answer, note, code])
    assert hand_typed_logistics(nb) == ["a: 2026-12-01", "a: shared with other jobs", "reproducibility: load average",
                                        "reproducibility: 2026-11-30"]
    # durations are checked in the note only: an answer may quote a paper's "3 s per step"
    assert hand_typed_durations(nb) == ["reproducibility: 98 s", "reproducibility: 2 min", "reproducibility: 5 s",
                                        "reproducibility: 248 CPU-seconds", "reproducibility: 234–287 s"]


@pytest.mark.parametrize("path", NOTEBOOKS + LAB_SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_markdown_carries_no_hand_typed_date_or_load(path):
    assert hand_typed_logistics(nbformat.read(path, as_version=4)) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_reproducibility_note_types_no_duration(path):
    assert hand_typed_durations(nbformat.read(path, as_version=4)) == []


def test_every_reproducibility_note_keeps_its_cell_id():
    """Links and this test find the note by its id; a note without it would escape the duration check's intent."""
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## Reproducibility"):
                assert cell.get("id") == "reproducibility", path.name

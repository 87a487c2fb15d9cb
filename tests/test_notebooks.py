"""Walkthrough notebooks: committed clean (no outputs, stable ids) and executable end to end in the smoke profile."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STABLE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
RANDOM_ID = re.compile(r"^[0-9a-f]{8}(-[0-9a-f]{4}){0,4}")


def _ids(nb):
    return [cell.get("id") for cell in nb.cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: cell {cell.id} has outputs"
    ids = _ids(nb)
    assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"
    for cid in ids:
        assert cid and STABLE_ID.match(cid) and not RANDOM_ID.match(cid), f"{path.name}: cell id {cid!r} is not a readable slug"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executes_in_smoke_profile(path):
    """Runs every cell in a fresh kernel (this checkout's rlprep, a private RLPREP_HOME) through the website's
    executor, which stores the executed copy: `make book` in the smoke profile (CI) then reuses it instead of
    running the notebook again. Sliders draw their default figure once (rlprep.book.static_widgets); the browser
    test moves a real one."""
    from rlprep.book.execute import execute_cached

    result = execute_cached(path, "smoke", ROOT / "build" / "book-cache", timeout=180, refresh=True)
    assert not result.cached
    nb = nbformat.read(result.path, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert [c.id for c in nb.cells] == _ids(nbformat.read(path, as_version=4))


def test_start_page_where_next_is_links_that_resolve():
    nb = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.source.startswith("## Where next")]
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", cell.source)
    assert len(targets) >= 5, cell.source
    for target in targets:
        assert (ROOT / "notebooks" / target).resolve().is_file(), target
    assert "](../README.md#instructors-nbgrader)" in cell.source
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Instructors (nbgrader)\n" in readme          # the heading the anchor points at

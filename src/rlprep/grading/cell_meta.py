"""Reading a hand-in's cell metadata, which the learner controls: any field may be missing, of another type, or
claim what the cell is not. ``rlprep.grading.missing_cells.RepairCells`` puts it back from the gradebook before
nbgrader reads it; the report's own checks (``rlprep.grading.grade``) read it through ``nbgrader_meta``.
"""

from __future__ import annotations

import re

CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5's cell id


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata, or {} when it has none or it is not a dict."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    found = meta.get("nbgrader") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def grade_id_of(cell) -> str | None:
    """The cell's nbgrader grade id when it is a string, else None."""
    found = nbgrader_meta(cell).get("grade_id")
    return found if isinstance(found, str) else None

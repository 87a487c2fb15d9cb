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


def fix_cell_ids(nb) -> list[str]:
    """Give every cell of ``nb`` a valid id, unique in the notebook (its grade id when that is free, else
    ``cell-<index>``), as nbformat 4.5 requires; returns what changed, one line per cell. A notebook older than 4.5
    becomes 4.5 (cell ids exist from there on)."""
    changes = []
    if nb.get("nbformat", 4) == 4 and nb.get("nbformat_minor", 5) < 5:
        nb["nbformat_minor"] = 5
    used: set[str] = set()
    for index, cell in enumerate(nb["cells"]):
        cell_id = cell.get("id")
        if not (isinstance(cell_id, str) and CELL_ID.fullmatch(cell_id)) or cell_id in used:
            grade_id = grade_id_of(cell) or ""
            base = grade_id if CELL_ID.fullmatch(grade_id) and grade_id not in used else f"cell-{index}"
            cell_id, k = base, 1
            while cell_id in used:
                cell_id, k = f"{base}-{k}", k + 1
            cell["id"] = cell_id
            changes.append(f"cell {index}: new cell id {cell_id}")
        used.add(cell_id)
    return changes

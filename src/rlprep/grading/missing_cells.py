"""Put deleted graded cells back before autograde, for any set of deleted cells.

nbgrader 0.9.6's ``OverwriteCells.add_missing_grade_cells`` places a deleted grade cell after the source cell just
before it, and raises ``KeyError`` when that cell is missing from the submission too, or is a locked cell that is
neither graded nor an answer (a setup cell): deleting an answer cell and the test cell after it made the whole
submission ungradable. ``RestoreMissingCells`` places each deleted grade cell after the nearest earlier cell of
the source that the notebook still has (at the top when there is none), so the submission gets a verdict: the
restored tests run (``rlprep.grading.executor`` runs the gradebook's source for them), and the tests of a deleted
answer score 0 because its functions are not defined.

``RepairCells`` runs first, before any of nbgrader's own sanitize steps: nbgrader 0.9.6 refused a notebook whose
nbgrader metadata was forged or broken (a grade id the gradebook lacks, one claimed by two cells, points that are not
a number, a schema version it does not know, metadata that is not a dict) or whose cell ids are invalid, so the
hand-in got no verdict. The gradebook is the truth: a cell that claims one of its grade ids gets that cell's flags and
points back (one cell per id: the one whose flags already match, else the last, as nbgrader keeps the last), every
other claim is dropped (the cell stays, as ungraded learner code), and every cell gets a valid, unique id. A test cell
that thereby lost its claim is missing, so ``RestoreMissingCells`` puts the gradebook's back; an answer cell that lost
it is a deleted answer cell whose code still runs.
"""

from __future__ import annotations

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

from rlprep.grading.cell_meta import fix_cell_ids, nbgrader_meta

FLAGS = ("grade", "solution", "locked", "task")


def _grade_ids(nb) -> dict[str, int]:
    """{grade_id: index} of the notebook's nbgrader cells."""
    ids = {}
    for i, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            ids[grade_id] = i
    return ids


class RestoreMissingCells(OverwriteCells):
    """``OverwriteCells`` whose restore of deleted grade cells never fails (see the module docstring); it reads
    ``OverwriteCells``' settings (``add_missing_cells``, ``missing_cell_notification``)."""

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source_nb.source_cells]  # the source's order, as nbgrader reads it
        source = {cell.name: cell for cell in source_nb.source_cells}
        grade_cells = {cell.name: cell for cell in source_nb.grade_cells}
        solution_ids = {cell.name for cell in source_nb.solution_cells}
        for k, name in enumerate(order):
            present = _grade_ids(nb)
            if name not in grade_cells or name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", name)
            cell = self.missing_cell_transform(source[name], grade_cells[name].max_score,
                                               is_solution=name in solution_ids)
            before = [present[earlier] for earlier in order[:k] if earlier in present]
            nb.cells.insert(max(before) + 1 if before else 0, cell)
        return nb, resources


def canonical_metadata(gradebook, notebook_id: str, assignment_id: str) -> dict[str, dict]:
    """{grade_id: the nbgrader metadata the release gave that cell}, from the gradebook."""
    source_nb = gradebook.find_notebook(notebook_id, assignment_id)
    grades = {c.name: c.max_score for c in source_nb.grade_cells}
    tasks = {c.name: c.max_score for c in source_nb.task_cells}
    solutions = {c.name for c in source_nb.solution_cells}
    found = {}
    for cell in source_nb.source_cells:
        meta = {"grade": cell.name in grades, "grade_id": cell.name, "locked": bool(cell.locked),
                "solution": cell.name in solutions, "schema_version": 3, "cell_type": cell.cell_type,
                "checksum": cell.checksum}
        if cell.name in grades or cell.name in tasks:
            meta["points"] = grades.get(cell.name, tasks.get(cell.name))
        if cell.name in tasks:
            meta["task"] = True
        found[cell.name] = meta
    return found


def _flags(meta: dict) -> tuple:
    return tuple(bool(meta.get(flag)) if not isinstance(meta.get(flag), bool) else meta[flag] for flag in FLAGS)


def repair(nb, canonical: dict[str, dict]) -> list[str]:
    """Give each grade id of ``canonical`` back to one cell of ``nb``, with the release's metadata; drop every other
    claim; give every cell a valid, unique id. Returns what it changed, one line per cell (for the log)."""
    changes = []
    claims: dict[str, list[int]] = {}
    for index, cell in enumerate(nb.cells):
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = {}
            changes.append(f"cell {index}: metadata was not a dict")
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if isinstance(grade_id, str) and grade_id in canonical:
            claims.setdefault(grade_id, []).append(index)
        else:
            del cell.metadata["nbgrader"]
            changes.append(f"cell {index}: dropped nbgrader metadata for a grade id the gradebook lacks ({grade_id!r})")
    for grade_id, indices in claims.items():
        want = canonical[grade_id]
        matching = [i for i in indices if _flags(nb.cells[i].metadata["nbgrader"]) == _flags(want)]
        keep = (matching or indices)[-1]
        for index in indices:
            cell = nb.cells[index]
            if index != keep:
                del cell.metadata["nbgrader"]
                changes.append(f"cell {index}: dropped a second claim to {grade_id}")
            elif any(cell.metadata["nbgrader"].get(k) != v for k, v in want.items() if k != "checksum"):
                cell.metadata["nbgrader"] = dict(want)
                changes.append(f"cell {index}: nbgrader metadata of {grade_id} put back from the gradebook")
    kept = {nbgrader_meta(cell).get("grade_id") for cell in nb.cells}
    for index, cell in enumerate(nb.cells):  # a claim lost, and the cell still has the release's id (= grade id)
        grade_id = cell.get("id")
        if ("nbgrader" not in cell.metadata and isinstance(grade_id, str) and grade_id in canonical
                and grade_id not in kept and cell.cell_type == canonical[grade_id]["cell_type"]):
            cell.metadata["nbgrader"] = dict(canonical[grade_id])
            kept.add(grade_id)
            changes.append(f"cell {index}: nbgrader metadata of {grade_id} put back by its cell id")
    return changes + fix_cell_ids(nb)


class RepairCells(NbGraderPreprocessor):
    """The first sanitize step of autograde: the hand-in's nbgrader metadata and cell ids put back from the gradebook
    (``repair``; see the module docstring)."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            canonical = canonical_metadata(gradebook, info["notebook"], info["assignment"])
        for change in repair(nb, canonical):
            self.log.warning("%s", change)
        return nb, resources

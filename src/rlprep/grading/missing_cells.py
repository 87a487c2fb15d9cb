"""Put deleted graded cells back before autograde, for any set of deleted cells.

nbgrader 0.9.6's ``OverwriteCells.add_missing_grade_cells`` places a deleted grade cell after the source cell just
before it, and raises ``KeyError`` when that cell is missing from the submission too, or is a locked cell that is
neither graded nor an answer (a setup cell): deleting an answer cell and the test cell after it made the whole
submission ungradable. ``RestoreMissingCells`` places each deleted grade cell after the nearest earlier cell of
the source that the notebook still has (at the top when there is none), so the submission gets a verdict: the
restored tests run (``rlprep.grading.executor`` runs the gradebook's source for them), and the tests of a deleted
answer score 0 because its functions are not defined.
"""

from __future__ import annotations

from nbgrader.preprocessors import OverwriteCells


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

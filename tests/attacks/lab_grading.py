"""Grade a lab's solution notebook with some answer cells replaced, the way the grader runs a submission (the
learner's cells in the sandboxed kernel, the test cells in the grader from the trusted source), without nbgrader:
the attacks here are on what the runner reports and how it compares, which nbgrader only copies into the gradebook.
"""

from __future__ import annotations

import copy
from pathlib import Path

from rlprep.grading.authoring import reference_source
from rlprep.grading.executor import IsolatedRunner
from rlprep.grading.templating import rendered_solution

ROOT = Path(__file__).resolve().parents[2]


def plain_reference(ref: str) -> str:
    """The reference function's source as a learner would type it (no solution markers)."""
    return reference_source(ref).replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")


def graded_cells(lab: str, answers: dict[str, str], only=None) -> dict:
    """{grade_id: cell} of the lab after grading, with ``answers`` ({grade_id: source}) in place of the answer
    cells; ``only`` keeps just those test cells (and every other cell), to keep an attack fast."""
    solution = rendered_solution(lab, ROOT)
    nb = copy.deepcopy(solution)
    keep = []
    for cell in nb.cells:
        meta = cell.get("metadata", {})
        nbg = meta.get("nbgrader", {})
        if meta.get("rlprep", {}).get("role") == "demo" or (only and nbg.get("grade") and nbg["grade_id"] not in only):
            continue
        if nbg.get("grade_id") in answers:
            cell.source = answers[nbg["grade_id"]]
        keep.append(cell)
    nb.cells = keep
    IsolatedRunner.trusting(solution, call_timeout=20, cell_timeout=30, deadline=120).run(nb)
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")}


def passed(cell) -> bool:
    return not any(o.output_type == "error" for o in cell.outputs)


def error(cell) -> str:
    """'ename: evalue' of the cell's failure ('' when it passed): what the report and the feedback show."""
    return " ".join(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")


def shown(cell) -> str:
    """Everything the cell's outputs show (streams, errors, tracebacks, rich data)."""
    parts = []
    for o in cell.outputs:
        parts += [str(o.get("text", "")), str(o.get("ename", "")), str(o.get("evalue", "")),
                  "\n".join(o.get("traceback", [])), str(o.get("data", ""))]
    return "\n".join(parts)

"""Author a graded lab as code: cells in, a deterministic nbgrader source notebook out.

    from rlprep.grading import authoring as A
    cells = [A.md("intro", "# Lab 1 ..."),
             A.setup("setup", "import numpy as np\\nfrom rlprep.grading.asserts import assert_close"),
             A.answer("compute_gae", "rlprep.algos.gae:compute_gae"),
             A.test("test_gae_basic", 2, "adv, ret = compute_gae(...)\\nassert_close(...)",
                    hidden_code="assert_close(..., 'advantages wrong when an episode ends mid-batch')"),
             A.demo("plot", "import matplotlib.pyplot as plt ...")]
    A.write_notebook(A.notebook(cells), "solutions/lab01_gae/lab01_gae.ipynb")

Cell ids are the slugs you pass, so rebuilding gives the same bytes. See docs/authoring-labs.md.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import textwrap
from pathlib import Path

import nbformat

from rlprep.paths import repo_root

SCHEMA_VERSION = 3
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def _check_id(cell_id: str) -> str:
    if not _SLUG.match(cell_id):
        raise ValueError(f"cell id {cell_id!r} must be a slug (letters, digits, '_' or '-', at most 64)")
    return cell_id


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def md(cell_id: str, text: str, locked: bool = False) -> nbformat.NotebookNode:
    """A markdown cell (``locked=True`` makes it read-only and restored if a learner edits it)."""
    cell = nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip("\n"), id=_check_id(cell_id))
    if locked:
        cell.metadata.update(editable=False, deletable=False,
                             nbgrader=_nbgrader(cell_id, grade=False, solution=False, locked=True))
    return cell


def setup(cell_id: str, code: str) -> nbformat.NotebookNode:
    """A locked setup cell: plain Python (no magics); it runs in the learner's kernel and in the grader."""
    cell = nbformat.v4.new_code_cell(textwrap.dedent(code).strip("\n"), id=_check_id(cell_id))
    cell.metadata.update(editable=False, deletable=False,
                         nbgrader=_nbgrader(cell_id, grade=False, solution=False, locked=True),
                         rlprep={"role": "setup"})
    return cell


def reference_source(ref: str) -> str:
    """The answer-cell source generated from ``"package.module:function"``.

    The signature and docstring stay above ``### BEGIN SOLUTION``; the body goes between the markers,
    so nbgrader's release keeps the signature and docstring and replaces only the body.
    """
    module_name, _, func_name = ref.partition(":")
    if not func_name:
        raise ValueError(f"reference {ref!r} must look like 'package.module:function'")
    func = getattr(importlib.import_module(module_name), func_name)
    lines = textwrap.dedent(inspect.getsource(func)).splitlines()
    node = ast.parse("\n".join(lines)).body[0]
    if not isinstance(node, ast.FunctionDef) or not node.body:
        raise ValueError(f"reference {ref!r} is not a plain function")
    first = node.body[0]
    has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    if has_doc and len(node.body) == 1:
        raise ValueError(f"reference {ref!r} has a docstring but no body")
    body_start = node.body[1].lineno if has_doc else first.lineno  # 1-based
    # everything above the body (decorators, signature, docstring) stays visible
    head = lines[: body_start - 1]
    body = lines[body_start - 1: node.end_lineno]
    indent = re.match(r"\s*", body[0]).group(0)
    return "\n".join(head + [f"{indent}### BEGIN SOLUTION"] + body + [f"{indent}### END SOLUTION"])


def answer(cell_id: str, ref: str) -> nbformat.NotebookNode:
    """The answer cell for one graded function, generated from its reference ``"module:function"``."""
    cell = nbformat.v4.new_code_cell(reference_source(ref), id=_check_id(cell_id))
    cell.metadata.update(nbgrader=_nbgrader(cell_id, grade=False, solution=True, locked=False),
                         rlprep={"role": "answer", "reference": ref})
    return cell


def test(cell_id: str, points: float, code: str, hidden_code: str | None = None) -> nbformat.NotebookNode:
    """A locked, autograded test cell. ``hidden_code`` goes between the HIDDEN TESTS markers.

    Use ``rlprep.grading.asserts`` helpers so a failure names the property; hidden code must hold
    precomputed expected values, never a reference implementation (the gradebook stores it as text).
    """
    src = textwrap.dedent(code).strip("\n")
    if hidden_code:
        src += "\n### BEGIN HIDDEN TESTS\n" + textwrap.dedent(hidden_code).strip("\n") + "\n### END HIDDEN TESTS"
    cell = nbformat.v4.new_code_cell(src, id=_check_id(cell_id))
    cell.metadata.update(editable=False, deletable=False,
                         nbgrader=_nbgrader(cell_id, grade=True, solution=False, locked=True, points=points),
                         rlprep={"role": "test"})
    return cell


def demo(cell_id: str, code: str) -> nbformat.NotebookNode:
    """A demo cell (training, plots, widgets): the learner runs it; grading skips it."""
    cell = nbformat.v4.new_code_cell(textwrap.dedent(code).strip("\n"), id=_check_id(cell_id))
    cell.metadata["rlprep"] = {"role": "demo"}
    return cell


def notebook(cells: list, lab: str | None = None) -> nbformat.NotebookNode:
    """A notebook with the course's kernel and unique cell ids (``lab`` names it for ``rlprep grade``)."""
    ids = [c.id for c in cells]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate cell ids {dupes}: every cell needs its own slug")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.nbformat_minor = 5
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    if lab:
        nb.metadata["rlprep"] = {"lab": lab}
    return nb


def write_notebook(nb, path) -> Path:
    """Validate and write atomically (temp file + ``os.replace``), as nbformat writes it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        nbformat.write(nb, fh)
    os.replace(tmp, path)
    return path


def grade_yourself_cells(lab: str) -> list:
    """The closing "Grade yourself" cells of lab ``lab``: save, then grade this file with the hidden tests."""
    return [
        md("grade-intro", """
            ## Grade yourself

            Save the notebook (Ctrl+S), then run the cell below: it grades this file with the hidden tests, in a
            separate process, and prints each test with its points.
            """),
        demo("grade-self", """
            from rlprep.grading import grade_here

            grade_here()
            """),
    ]


def build_solution(lab: str, cells: list, root=None) -> Path:
    """Write ``solutions/<lab>/<lab>.ipynb`` under ``root`` (default: this course checkout) and return its path."""
    root = Path(root) if root else repo_root()
    if root is None:
        raise SystemExit("run from a course checkout (needs solutions/)")
    return write_notebook(notebook(cells, lab=lab), root / "solutions" / lab / f"{lab}.ipynb")

"""A coding problem as an nbgrader assignment: ``rlprep coding release <slug> --out DIR``.

The source notebook has the statement (a locked markdown cell), one answer cell (the starter with each body
replaced by the reference's between ``### BEGIN/END SOLUTION``, so ``generate_assignment`` releases exactly the
starter), the driver for class problems (a locked setup cell), and the same test cells ``rlprep.coding.grade``
builds: the visible examples, then one hidden cell per property. nbgrader's ``generate_assignment`` and
``autograde`` with rlprep's configuration (``grading.release.course_config``: ``IsolatedExecute``, the sandboxed
kernel) grade it as they grade a lab.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import nbformat

from rlprep.coding.bank import Problem
from rlprep.coding.grade import DRIVER_ID, _meta, test_cells
from rlprep.coding.sources import reference_source, starter_source
from rlprep.grading import authoring

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _body(lines: list[str], node: ast.FunctionDef) -> list[str]:
    first = node.body[0]
    doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    start = node.body[1].lineno if doc and len(node.body) > 1 else first.lineno
    return textwrap.dedent("\n".join(lines[start - 1: node.end_lineno])).splitlines()


def _indented(block: list[str], indent: str) -> list[str]:
    return [indent + line if line.strip() else "" for line in block]


def answer_source(problem: Problem) -> str:
    """The starter, its stub bodies replaced by the reference's inside solution markers."""
    ref = reference_source(problem)
    ref_lines, ref_tree = ref.splitlines(), ast.parse(ref)
    sig_lines, sig_tree = problem.signature.rstrip("\n").splitlines(), ast.parse(problem.signature)
    ref_defs = {n.name: n for n in ref_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    sig_imports = {ast.unparse(n) for n in sig_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    extra_imports = [ast.unparse(n) for n in ref_tree.body
                     if isinstance(n, (ast.Import, ast.ImportFrom)) and ast.unparse(n) not in sig_imports]
    helpers = [n for n in ref_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign))
               and getattr(n, "name", None) != problem.entry]
    entry = ref_defs[problem.entry]
    if isinstance(entry, ast.ClassDef) and helpers:
        raise ValueError(f"{problem.slug}: a class reference must have no top-level helpers (they cannot sit inside "
                         "solution markers)")
    stubs: dict[int, list[str]] = {}  # skeleton line -> replacement lines
    for node in ast.walk(sig_tree):
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        for item in (node.body if isinstance(node, ast.ClassDef) else [node]):
            if not (isinstance(item, ast.FunctionDef) and "NotImplementedError" in ast.unparse(item.body[-1])):
                continue
            if isinstance(node, ast.ClassDef):
                ref_class = ref_defs[node.name]
                ref_fn = next((m for m in ref_class.body if isinstance(m, ast.FunctionDef) and m.name == item.name),
                              None)
                if ref_fn is None:
                    raise ValueError(f"{problem.slug}: the reference's {node.name} has no method {item.name}")
                extra = [m.name for m in ref_class.body if isinstance(m, ast.FunctionDef)
                         and m.name not in {i.name for i in node.body if isinstance(i, ast.FunctionDef)}]
                if extra:
                    raise ValueError(f"{problem.slug}: the reference's {node.name} has methods {extra} that the "
                                     "starter lacks")
                body = _body(ref_lines, ref_fn)
            else:
                if item.name not in ref_defs:
                    continue
                body = extra_imports + [line for h in helpers for line in
                                        "\n".join(ref_lines[h.lineno - 1: h.end_lineno]).splitlines() + [""]]
                body += _body(ref_lines, ref_defs[item.name])
            line = item.body[-1].lineno
            indent = re.match(r"\s*", sig_lines[line - 1]).group(0)
            stubs[line] = [indent + BEGIN] + _indented(body, indent) + [indent + END]
    out = extra_imports if isinstance(entry, ast.ClassDef) else []  # a class's imports stay above it
    for i, line in enumerate(sig_lines, 1):
        out += stubs.get(i, [line])
    return "\n".join(out)


def statement_markdown(problem: Problem) -> str:
    from rlprep.coding.examples import examples_text

    return (f"# {problem.title.en} · {problem.title.zh}\n\n"
            f"*Coding round `{problem.slug}` · {problem.topic} · target {problem.minutes} minutes · mirrors "
            f"`{problem.library}`*\n\n{problem.statement.en}\n\n{problem.contract.en}\n\n{problem.statement.zh}\n\n"
            f"{problem.contract.zh}\n\n**Examples / 示例**\n\n```python\n{examples_text(problem)}\n```\n\n"
            "Write your answer in the next cell, run it and the example test under it. The hidden tests name the "
            "property that fails, never its values.")


def source_notebook(problem: Problem) -> nbformat.NotebookNode:
    """The nbgrader source notebook of one problem."""
    cells = [authoring.md("statement", statement_markdown(problem), locked=True)]
    answer = nbformat.v4.new_code_cell(answer_source(problem), id=problem.slug.replace("_", "-"))
    cells.append(_meta(answer, answer.id, grade=False, solution=True, locked=False))
    if problem.call:
        driver = nbformat.v4.new_code_cell(problem.module("tests").DRIVER.strip("\n"), id=DRIVER_ID)
        cells.append(_meta(driver, DRIVER_ID, grade=False, solution=False, locked=True))
    more, _ = test_cells(problem, problem.call_name, None)
    cells += more
    nb = authoring.notebook(cells)
    nb.metadata["rlprep"] = {"coding": problem.slug}
    return nb


def write_source_notebook(problem: Problem, out: Path) -> Path:
    """``<out>/<slug>/<slug>.ipynb``, written atomically."""
    return authoring.write_notebook(source_notebook(problem), Path(out) / problem.slug / f"{problem.slug}.ipynb")


def released_answer_matches_starter(problem: Problem, released_source: str) -> bool:
    """Whether nbgrader's released answer cell is the starter's code (stubs become nbgrader's own stub)."""
    starter = starter_source(problem).split('"""\n\n', 1)[1]
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    normal = re.sub(r"(?m)^(\s*)# YOUR CODE HERE\n\s*raise NotImplementedError\(\)", r"\1raise NotImplementedError",
                    released_source)
    return stub.split("\n")[0] in released_source and normal.strip() == starter.strip()

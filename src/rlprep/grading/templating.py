"""Fill a lab's ``{{ name }}`` placeholders: hidden values from its fixtures, figures from recorded results.

A lab's source notebook (``solutions/<lab>/<lab>.ipynb``) is edited as a notebook. What only a program should
write is left as a placeholder and filled by ``rlprep release``:

- in code cells, ``{{ name }}`` or ``{{ name.field }}`` becomes a Python literal of the value that the lab's
  fixtures function returns under that name (``fixtures()`` in ``solutions/<lab>/fixtures.py``, beside the
  notebook: instructor material, never released; computed from the reference functions on seeded inputs):
  hidden tests show their inputs and property, never the code that computed the expected values;
- in markdown cells, ``{{ results.<record>.<key>:<format> }}`` becomes a figure from a result file the code
  wrote (``rlprep.records``), formatted with ``format`` (e.g. ``.2f``): prose never types a measured number.

An unknown name is an error that names the cell, so a typo cannot ship as literal braces. The filling runs
as the first preprocessor of nbgrader's ``generate_assignment`` (``RenderPlaceholders``), so ``rlprep release``,
``rlprep grade`` and an instructor's own ``nbgrader generate_assignment`` all build the gradebook from the same
filled notebook.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping

import numpy as np

from rlprep.errors import RlprepError

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*(?::\s*([^}\s][^}]*?))?\s*\}\}")


def literal(value) -> str:
    """A Python literal that rebuilds ``value`` in a test cell (numpy arrays, torch tensors, numbers, ...)."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return repr(x) if math.isfinite(x) else f"float({str(x)!r})"
    if hasattr(value, "detach"):  # a torch tensor (torch is imported only when a lab uses it)
        arr = value.detach().cpu().numpy()
        dtype = str(value.dtype)
        return f"torch.tensor({_nested(arr)}, dtype={dtype})"
    if isinstance(value, np.ndarray):
        return f"np.array({_nested(value)}, dtype=np.{value.dtype})"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for a {type(value).__name__}")


def _nested(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        return literal(arr.item())
    return "[" + ", ".join(_nested(a) if a.ndim else literal(a.item()) for a in arr) + "]"


def lookup(values: dict, dotted: str):
    """``values["a"]["b"]`` for ``"a.b"`` (dict keys or attributes; a digit indexes a list: ``"a.0"``)."""
    node = values
    for part in dotted.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]  # a recorded per-seed list: ``results.<record>.<key>_seeds.0``
        elif not isinstance(node, Mapping) and hasattr(node, part):
            node = getattr(node, part)
        else:
            raise KeyError(dotted)
    return node


def render_text(text: str, values: dict, *, code: bool, where: str) -> str:
    """Replace every placeholder in ``text``; code gets literals, markdown gets formatted figures."""
    def fill(match: re.Match) -> str:
        name, fmt = match.group(1), match.group(2)
        try:
            value = lookup(values, name)
        except KeyError:
            if name.startswith("results."):
                record = name.split(".")[1] if name.count(".") >= 1 else "?"
                raise RlprepError(f"{where}: {{{{ {name} }}}} has no recorded value",
                                  f"run the experiment that writes records/{record}.json (its module's --record "
                                  "option), or fix the key") from None
            known = ", ".join(sorted(k for k in values if k != "results")) or "none"
            raise RlprepError(f"{where}: unknown placeholder {{{{ {name} }}}}",
                              f"define {name.split('.')[0]!r} in the lab's fixtures.py (known: {known})") from None
        if fmt:
            return format(value, fmt)
        return literal(value) if code else str(value)

    return PLACEHOLDER.sub(fill, text)


FIXTURES = "fixtures.py"


def lab_values(folder) -> dict:
    """``fixtures()`` of ``folder/fixtures.py`` (when the lab has one), plus ``results`` (the records)."""
    import importlib.util
    from pathlib import Path

    from rlprep import records

    values: dict = {"results": records.AllRecords()}
    path = Path(folder) / FIXTURES if folder is not None else None
    if path is not None and path.is_file():
        spec = importlib.util.spec_from_file_location(f"rlprep_fixtures_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        values.update(module.fixtures())
    return values


def has_placeholders(nb) -> bool:
    return any(PLACEHOLDER.search(c.source) for c in nb.cells)


def render_notebook(nb, lab: str, folder=None, values: dict | None = None):
    """A copy of ``nb`` (lab ``lab``, source folder ``folder``) with every placeholder filled."""
    values = lab_values(folder) if values is None else values
    out = copy.deepcopy(nb)
    for i, cell in enumerate(out.cells):
        if PLACEHOLDER.search(cell.source):
            where = f"{lab} cell {cell.get('id', i)}"
            cell.source = render_text(cell.source, values, code=cell.cell_type == "code", where=where)
    return out


def rendered_solution(lab: str, root=None):
    """``solutions/<lab>/<lab>.ipynb`` with its placeholders filled: what the gradebook is built from."""
    import nbformat

    from rlprep.paths import course_root

    folder = course_root(root) / "solutions" / lab
    nb = nbformat.read(folder / f"{lab}.ipynb", as_version=4)
    return render_notebook(nb, lab, folder) if has_placeholders(nb) else nb


def render_preprocessor():
    """The nbgrader preprocessor class (nbgrader is imported only here)."""
    from nbgrader.preprocessors import NbGraderPreprocessor

    class RenderPlaceholders(NbGraderPreprocessor):
        """Fill the lab's placeholders before nbgrader locks, clears and saves the cells."""

        def preprocess(self, nb, resources):
            if has_placeholders(nb):
                lab = resources["nbgrader"]["assignment"]
                folder = resources.get("metadata", {}).get("path") or "."
                nb = render_notebook(nb, lab, folder)
            return nb, resources

    return RenderPlaceholders

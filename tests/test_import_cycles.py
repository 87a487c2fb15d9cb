"""No import circles in ``src/rlprep``.

Two graphs of the imports between the package's modules. The load-time graph takes the imports a module runs when
it is imported (its body, and the ``if``/``try``/``with`` blocks and class bodies in it, not ``if TYPE_CHECKING:``):
it must have no cycle at all. The dependency graph adds the imports inside functions: a lazy import still makes two
modules depend on each other (issue 34 named rollout <-> prefix_sharing, grading.release <-> grading.templating and
trainers.cli <-> each trainer, all lazy on one side). It must have no cycle beyond ``KNOWN_LAZY_CYCLES``, which the
test keeps exact. ``from rlprep.pkg import name`` points at ``rlprep.pkg.name`` when that is a module, else at
``rlprep.pkg``; a module loaded by name through ``importlib`` (``rlprep.cli``'s command table) is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rlprep

ROOT = Path(rlprep.__file__).parent


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """``{"rlprep.algos.grpo": path, "rlprep.algos": path/__init__.py, ...}``."""
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


KNOWN_LAZY_CYCLES: set[frozenset[str]] = set()  # none left: the scorer table and the --llm factory were split out


def all_imports(tree: ast.Module):
    """Every import statement of a module, inside functions too."""
    return (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


def load_time_imports(tree: ast.Module):
    """The import statements a module runs while it is imported."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            stack += [] if _is_type_checking(node) else node.body + node.orelse
        elif isinstance(node, (ast.Try, ast.With, ast.For, ast.While)):
            stack += node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", []) + \
                [s for handler in getattr(node, "handlers", []) for s in handler.body]
        elif isinstance(node, ast.ClassDef):
            stack += node.body


def import_graph(root: Path = ROOT, imports=load_time_imports) -> dict[str, set[str]]:
    """``{module: {rlprep modules it imports}}``, the imports of each module given by ``imports``."""
    modules = module_names(root)
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            else:
                base = node.module or ""
                if node.level:  # relative: from . import x / from .y import z
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan), each as a closed path."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_a_cycle(graph, component) for component in components]


def _a_cycle(graph, component: set[str]) -> list[str]:
    """A closed path inside one strongly connected component, for the failure message."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        step = min(w for w in graph[path[-1]] if w in component)
        if step in seen:
            return path[path.index(step):] + [step]
        path.append(step)
        seen.add(step)


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_module_level_imports_only(tmp_path):
    pkg = tmp_path / "rlprep"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from rlprep.sub import b\nimport rlprep.c\n\ndef f():\n    from rlprep import d\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rlprep import a\n"
                                      "try:\n    from rlprep.c import x\nexcept ImportError:\n    pass\n")
    (pkg / "c.py").write_text("")
    (pkg / "d.py").write_text("")
    graph = import_graph(pkg)
    assert graph["rlprep.a"] == {"rlprep.sub.b", "rlprep.c"} and graph["rlprep.sub.b"] == {"rlprep.c"}
    assert import_graph(pkg, all_imports)["rlprep.a"] == {"rlprep.sub.b", "rlprep.c", "rlprep.d"}
    assert import_graph(pkg, all_imports)["rlprep.sub.b"] == {"rlprep.a", "rlprep.c"}


def test_rlprep_has_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles (move the shared piece to a module both import, or import one side lazily " \
                       "where it is used):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_two_modules_depend_on_each_other_even_lazily():
    found = {frozenset(cycle) for cycle in find_cycles(import_graph(imports=all_imports))}
    new, gone = found - KNOWN_LAZY_CYCLES, KNOWN_LAZY_CYCLES - found
    assert not new, "modules that import each other (inside a function counts): move what both need to a module of " \
                    "its own\n" + "\n".join(" <-> ".join(sorted(c)) for c in new)
    assert not gone, f"these cycles are gone: remove them from KNOWN_LAZY_CYCLES: {[sorted(c) for c in gone]}"

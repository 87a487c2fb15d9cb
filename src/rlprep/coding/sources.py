"""The Python files a coding round deals in: the reference as one self-contained file, the learner's starter,
catalogued bugs and honest variants (``Edit``), and the trivial answers that must score 0.

Where a problem's ``reference.py`` imports the course's one copy of a formula (``from rlprep.algos.gae import
compute_gae``), :func:`reference_source` inlines that function (with the module's imports and the same-module
helpers it calls), so the file that is graded in the sandbox, patched into bugs and shown on the solution page is
the course's own code, never a second copy of it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass, field

from rlprep.coding.bank import Problem


@dataclass(frozen=True)
class Edit:
    """A bug or an honest variant: the reference with text replaced (``replace``: {old: new}, each old found
    exactly once), or a whole ``source`` of its own."""

    name: str
    why: str
    replace: dict = field(default_factory=dict)
    source: str | None = None

    def apply(self, reference: str) -> str:
        if self.source is not None:
            if self.replace:
                raise ValueError("give either replace or source, not both")
            return textwrap.dedent(self.source).strip("\n") + "\n"
        if not self.replace:
            raise ValueError("changes nothing: give replace={old: new} or source")
        text = reference
        for old, new in self.replace.items():
            count = text.count(old)
            if count != 1:
                raise ValueError(f"{old!r} occurs {count} times in the reference (it must occur exactly once)")
            text = text.replace(old, new)
        return text


# -- the reference as one file ------------------------------------------------------------------------------------
def _segment(lines: list[str], node: ast.AST) -> str:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(lines[start - 1: node.end_lineno])


def _module_parts(module) -> tuple[list[str], dict[str, ast.AST], list[str]]:
    """(import statements, {top-level name: node}, source lines) of a module, ``__future__`` dropped."""
    source = inspect.getsource(module)
    lines = source.splitlines()
    tree = ast.parse(source)
    imports, defs = [], {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                imports.append(_segment(lines, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    defs[t.id] = node
    return imports, defs, lines


def _with_helpers(names: list[str], defs: dict[str, ast.AST]) -> list[str]:
    """``names`` and every same-module top-level name they use, in the module's order."""
    wanted, queue = set(), list(names)
    while queue:
        name = queue.pop()
        if name in wanted or name not in defs:
            continue
        wanted.add(name)
        queue += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)]
    return [n for n in defs if n in wanted]


def reference_source(problem: Problem) -> str:
    """The reference solution as one file that runs without rlprep (what a learner could have written)."""
    module = problem.module("reference")
    source = inspect.getsource(module)
    lines = source.splitlines()
    tree = ast.parse(source)
    doc, imports, inlined, body = [], [], [], []
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant):
            doc.append(_segment(lines, node))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlprep."):
            other = importlib.import_module(node.module)
            mod_imports, defs, mod_lines = _module_parts(other)
            imports += mod_imports
            for name in _with_helpers([a.name for a in node.names], defs):
                inlined.append(_segment(mod_lines, defs[name]))
            inlined += [f"{a.asname} = {a.name}" for a in node.names if a.asname]  # `import f as _f`
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                imports.append(_segment(lines, node))
        else:
            body.append(_segment(lines, node))
    imports = list(dict.fromkeys(imports))
    head = "\n\n".join(doc + (["\n".join(imports)] if imports else []))
    code = "\n\n\n".join(inlined + body)
    return (head + "\n\n\n" + code if head else code) + "\n"


def reference_is_shared(problem: Problem) -> str | None:
    """``module:function`` when the reference imports the course's one copy from ``rlprep.algos``, else None."""
    tree = ast.parse(inspect.getsource(problem.module("reference")))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlprep."):
            return f"{node.module}:{', '.join(a.name for a in node.names)}"
    return None


# -- the starter, and answers that must score 0 --------------------------------------------------------------------
def _stub_lines(signature: str) -> list[tuple[int, str, list[str]]]:
    """(line number, function name, parameters without self) of each ``raise NotImplementedError`` body line."""
    tree = ast.parse(signature)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            last = node.body[-1]
            if isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last):
                params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                found.append((last.lineno, node.name, [p for p in params if p != "self"]))
    return found


def trivial_sources(problem: Problem) -> dict[str, str]:
    """The starter with every stub replaced by a trivial answer: a constant, None, the first argument echoed
    back, and the untouched ``raise``. Each must score 0."""
    lines = problem.signature.splitlines()
    out = {"raise": problem.signature}
    for kind in ("constant", "none", "echo"):
        new = list(lines)
        for lineno, name, params in _stub_lines(problem.signature):
            indent = re.match(r"\s*", new[lineno - 1]).group(0)
            if name == "__init__":
                stmt = "pass"
            elif kind == "constant":
                stmt = "return 0"
            elif kind == "echo" and params:
                stmt = f"return {params[0]}"
            else:
                stmt = "return None"
            new[lineno - 1] = indent + stmt
        out[kind] = "\n".join(new) + "\n"
    return out


COMMANDS_HELP = ("Edit this file, then at the coding> prompt type `check` (the visible examples) or `submit` (the hidden "
                 "tests, in the sandbox). 编辑本文件，然后在 coding> 提示符输入 check（运行可见示例）或 submit（在沙箱中运行隐藏测试）。")


def starter_source(problem: Problem, retest: str | None = None, examples: str | None = None) -> str:
    """The file the learner edits: the statement, contract and examples in a docstring, then the signature."""
    from rlprep.coding.examples import examples_text

    twist = problem.retest(retest)
    title = f"{problem.title.en} · {problem.title.zh}"
    head = [f"{title}  ({problem.slug}{', retest ' + retest if twist else ''}; target {problem.minutes} min)", ""]
    if twist:
        head += [textwrap.fill(f"RETEST ({retest}): {twist.twist.en}", width=100), f"复测（{retest}）：{twist.twist.zh}", ""]
    texts = [problem.statement.en, problem.contract.en, problem.statement.zh, problem.contract.zh,
             f"The library function this mirrors / 对应的库函数: {problem.library}"]
    for text in texts:
        head += [textwrap.fill(text, width=100, break_on_hyphens=False), ""]
    head += ["Examples / 示例:", examples if examples is not None else examples_text(problem, retest), "",
             textwrap.fill(COMMANDS_HELP, width=100, break_on_hyphens=False)]
    doc = "\n".join(head).replace("\\", "\\\\").replace('"""', "'''")  # a driver's docstring must not end ours
    return f'"""{doc}\n"""\n\n{problem.signature}'

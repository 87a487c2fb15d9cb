"""Checks of a problem's code files, beyond what loading problem.yaml validates: every catalogued bug and variant
applies to the reference, the properties and examples exist, the starter's parameters are the reference's."""

from __future__ import annotations

import ast
import inspect

from rlprep.coding import sources
from rlprep.coding.bank import MIN_BUGS, MIN_VARIANTS, Problem


def _params(obj) -> list[str]:
    target = obj.__init__ if inspect.isclass(obj) else obj
    return [p for p in inspect.signature(target).parameters if p != "self"]


def _signature_params(problem: Problem) -> list[str]:
    tree = ast.parse(problem.signature)
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == problem.entry)
    if isinstance(node, ast.ClassDef):
        node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if node is None:
            return []
    args = node.args
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg != "self"]


def check_code(problem: Problem) -> list[str]:
    """What is wrong with a problem's code files (empty when nothing): every catalogued bug and variant applies
    to the reference, the properties and examples exist, the starter's parameters are the reference's."""
    where = problem.slug
    found: list[str] = []
    try:
        ref_module = problem.module("reference")
        tests = problem.module("tests")
        bugs = problem.module("bugs")
        variants = problem.module("variants")
    except Exception as err:  # any import failure is the folder's problem
        return [f"{where}: a code file does not import ({type(err).__name__}: {err})"]
    ref = getattr(ref_module, problem.entry, None)
    if ref is None:
        return [f"{where}/reference.py: does not define or import {problem.entry!r}"]
    if _params(ref) != _signature_params(problem):
        found.append(f"{where}/problem.yaml: signature: parameters {_signature_params(problem)} differ from the "
                     f"reference's {_params(ref)}")
    props = getattr(tests, "P", None)
    if props is None or len(getattr(props, "items", {})) < 3:
        found.append(f"{where}/tests.py: P: must register at least 3 properties with @P.prop")
    if not callable(getattr(tests, "examples", None)):
        found.append(f"{where}/tests.py: examples: must be a function examples(size) -> list of keyword dicts")
    if problem.call and not isinstance(getattr(tests, "DRIVER", None), str):
        found.append(f"{where}/tests.py: DRIVER: problem.yaml names call {problem.call!r}, so tests.py needs "
                     "DRIVER, the source of that function")
    if problem.has_library and props is not None and not any(lib for _, lib in props.items.values()):
        found.append(f"{where}/tests.py: P: library is {problem.library!r}, so one property needs library=...")
    reference = sources.reference_source(problem)
    for kind, items, least in (("BUGS", getattr(bugs, "BUGS", None), MIN_BUGS),
                               ("VARIANTS", getattr(variants, "VARIANTS", None), MIN_VARIANTS)):
        module = "bugs.py" if kind == "BUGS" else "variants.py"
        if not isinstance(items, list) or len(items) < least:
            found.append(f"{where}/{module}: {kind}: must list at least {least} sources.Edit items")
            continue
        names = [e.name for e in items]
        if len(set(names)) != len(names):
            found.append(f"{where}/{module}: {kind}: names must be unique ({names})")
        for i, edit in enumerate(items):
            try:
                edit.apply(reference)
            except ValueError as err:
                found.append(f"{where}/{module}: {kind}[{i}] {edit.name!r}: {err}")
    return found

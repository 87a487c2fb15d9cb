"""The coding-round problem bank: one folder per problem under ``rlprep/coding/problems/<slug>/``, validated on load.

A problem folder holds::

    problem.yaml   the page: title, statement and contract (中文 + English), the starter code (signature), the
                   target time, the library function it mirrors, follow-ups with model answers, the test sizes
                   and the two retest variants (day 2 and day 7: other sizes or a twist)
    reference.py   the reference solution (or an import of the course's one copy in ``rlprep.algos``)
    tests.py       ``examples(size)`` (the visible examples) and ``P``, the hidden properties (``testkit``)
    bugs.py        ``BUGS``: at least 5 catalogued bugs (``sources.Edit``), each rejected by the hidden tests
    variants.py    ``VARIANTS``: at least 2 honest variants, each accepted with full marks

``problem.yaml``'s fields (all required unless marked)::

    title: {zh, en}
    topic: components          # TOPICS below
    minutes: 10                # 10, 20 or 30
    entry: softmax             # the function (or class) the learner defines
    call: run_ops              # optional: a driver function in tests.DRIVER that the tests call (class problems)
    signature: |               # the starter code: imports, then the entry with `raise NotImplementedError` bodies
    statement: {zh, en}
    contract: {zh, en}         # shapes, dtypes, edge cases, what raises
    library: torch.nn.functional.softmax   # the library function it mirrors, or "none: <why>"
    notes: {zh, en}            # the reference's complexity and numerics
    follow_ups: [{q: {zh, en}, a: {zh, en}}]   # 2-3
    sizes: {seed: 0, ...}      # passed to examples() and to every property
    retests: [{name: day2, twist: {zh, en}, sizes: {...}}, {name: day7, ...}]

A malformed problem fails with the file and field at fault (``softmax/problem.yaml: minutes: must be 10, 20 or
30, got 15``); every problem of every folder is listed at once. The code files are checked by
:func:`rlprep.coding.checks.check_code` (and by the tests): the properties exist, each bug's text is found in the reference, the signature defines the
entry with the reference's parameters.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from rlprep.errors import RlprepError
from rlprep.interview.bank import FollowUp, Text, _follow_up, _list, _Problems, _text

TOPICS: tuple[str, ...] = ("components", "decoding", "optimisation", "rl", "training", "infra")
"""The issue's six families: model components, decoding, optimisation, RL and preferences, training loops,
algorithms that LLM infrastructure asks for."""
MINUTES = (10, 20, 30)
FOLLOW_UPS_RANGE = (2, 3)
RETEST_NAMES = ("day2", "day7")
MIN_BUGS, MIN_VARIANTS = 5, 2
_FIELDS = {"title", "topic", "minutes", "entry", "signature", "statement", "contract", "library", "notes",
           "follow_ups", "sizes", "retests"}
_OPTIONAL = {"call"}
_SLUG = re.compile(r"^[a-z][a-z0-9_]{1,40}$")
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Retest:
    """A day-2 or day-7 retest: the same skill asked with other sizes or a twist (never the same text)."""

    name: str
    twist: Text
    sizes: dict


@dataclass(frozen=True, eq=False)
class Problem:
    """One validated problem folder."""

    slug: str
    title: Text
    topic: str
    minutes: int
    entry: str
    signature: str
    statement: Text
    contract: Text
    library: str
    notes: Text
    follow_ups: tuple[FollowUp, ...]
    sizes: dict
    retests: tuple[Retest, ...]
    folder: Path
    call: str | None = None

    @property
    def call_name(self) -> str:
        """The name the tests call: the entry itself, or the driver that wraps a class."""
        return self.call or self.entry

    @property
    def has_library(self) -> bool:
        return not self.library.startswith("none")

    def module(self, name: str) -> ModuleType:
        """``reference``, ``tests``, ``bugs`` or ``variants`` of this problem, imported."""
        return importlib.import_module(f"{PACKAGE}.{self.slug}.{name}")

    def sizes_for(self, retest: str | None) -> dict:
        """The sizes the tests use: the base sizes, updated by the retest's."""
        if retest in (None, "", "base"):
            return dict(self.sizes)
        for r in self.retests:
            if r.name == retest:
                return {**self.sizes, **r.sizes}
        raise RlprepError(f"problem {self.slug!r} has no retest {retest!r}",
                          f"use one of: base, {', '.join(r.name for r in self.retests)}")

    def retest(self, name: str | None) -> Retest | None:
        return next((r for r in self.retests if r.name == name), None)


PACKAGE = "rlprep.coding.problems"


def problems_dir() -> Path:
    return Path(str(resources.files(PACKAGE)))


def _sizes(raw: Any, field_name: str, problems: _Problems) -> dict:
    if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) for k in raw):
        problems.add(field_name, "must be a non-empty mapping of size names to values, e.g. {seed: 0, B: 2}")
        return {}
    return dict(raw)


def _signature_defines(signature: str, entry: str, where: str, problems: _Problems) -> None:
    try:
        tree = ast.parse(signature)
    except SyntaxError as err:
        problems.add(where, f"does not parse ({err.msg}, line {err.lineno})")
        return
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if entry not in names:
        problems.add(where, f"must define {entry!r} at top level (defines {names or 'nothing'})")
    if '"""' in signature.split("\n", 1)[0]:
        problems.add(where, "must start with its imports or the def, not a module docstring (the starter adds one)")


def parse_problem(raw: Any, folder: Path) -> tuple[Problem | None, list[str]]:
    """Validate one parsed ``problem.yaml``; returns the problem (or None) and the problems found."""
    problems = _Problems(f"{folder.name}/problem.yaml")
    if not isinstance(raw, dict):
        problems.add("(top level)", "must be a mapping of the problem's fields")
        return None, problems.lines
    if not _SLUG.match(folder.name):
        problems.add("(folder)", f"{folder.name!r} must be a slug: lower-case letters, digits and '_'")
    for missing in sorted(_FIELDS - set(raw)):
        problems.add(missing, "is missing")
    for extra in sorted(set(raw) - _FIELDS - _OPTIONAL):
        problems.add(extra, f"is not a field (fields: {', '.join(sorted(_FIELDS | _OPTIONAL))})")
    texts = {name: _text(raw[name], name, problems) for name in ("title", "statement", "contract", "notes")
             if name in raw}
    if raw.get("topic") not in TOPICS and "topic" in raw:
        problems.add("topic", f"unknown topic {raw.get('topic')!r} (known: {', '.join(TOPICS)})")
    minutes = raw.get("minutes")
    if "minutes" in raw and (isinstance(minutes, bool) or minutes not in MINUTES):
        problems.add("minutes", f"must be 10, 20 or 30, got {minutes!r}")
    entry, call = raw.get("entry"), raw.get("call")
    for name, value in (("entry", entry), ("call", call)):
        if name in raw and not (isinstance(value, str) and value.isidentifier()):
            problems.add(name, f"must be a Python name, got {value!r}")
    signature = raw.get("signature")
    if "signature" in raw:
        if not isinstance(signature, str) or "raise NotImplementedError" not in signature:
            problems.add("signature", "must be the starter code, each body ending in `raise NotImplementedError`")
        elif isinstance(entry, str):
            _signature_defines(signature, entry, "signature", problems)
    library = raw.get("library")
    if "library" in raw and not (isinstance(library, str) and library.strip()):
        problems.add("library", "must name the library function it mirrors, or say 'none: <why>'")
    follow_ups = []
    if "follow_ups" in raw:
        for i, item in enumerate(_list(raw["follow_ups"], "follow_ups", problems, FOLLOW_UPS_RANGE)):
            follow_ups.append(_follow_up(item, f"follow_ups[{i}]", problems))
    sizes = _sizes(raw.get("sizes"), "sizes", problems) if "sizes" in raw else {}
    retests = []
    if "retests" in raw:
        items = _list(raw["retests"], "retests", problems, (2, 2))
        for i, item in enumerate(items):
            where = f"retests[{i}]"
            if not isinstance(item, dict) or set(item) != {"name", "twist", "sizes"}:
                problems.add(where, "must be a mapping with exactly 'name', 'twist' {zh, en} and 'sizes'")
                continue
            if item["name"] != RETEST_NAMES[min(i, 1)]:
                problems.add(f"{where}.name", f"must be {RETEST_NAMES[min(i, 1)]!r}, got {item['name']!r}")
            twist = _text(item["twist"], f"{where}.twist", problems)
            more = _sizes(item["sizes"], f"{where}.sizes", problems)
            unknown = set(more) - set(sizes)
            if unknown and sizes:
                problems.add(f"{where}.sizes", f"names {sorted(unknown)} that 'sizes' does not have")
            if more and sizes and {**sizes, **more} == sizes:
                problems.add(f"{where}.sizes", "changes nothing: a retest needs other sizes or a twist")
            if twist:
                retests.append(Retest(item["name"], twist, more))
    for name, text in texts.items():
        if text and ('"""' in text.en or '"""' in text.zh):
            problems.add(name, 'must not contain """ (the starter file quotes it in a docstring)')
    if problems.lines:
        return None, problems.lines
    return Problem(slug=folder.name, title=texts["title"], topic=raw["topic"], minutes=minutes, entry=entry,
                   signature=signature.strip("\n") + "\n", statement=texts["statement"], contract=texts["contract"],
                   library=library.strip(), notes=texts["notes"], follow_ups=tuple(follow_ups), sizes=sizes,
                   retests=tuple(retests), folder=folder, call=call), []


def _load_folder(folder: Path) -> tuple[Problem | None, list[str]]:
    path = folder / "problem.yaml"
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
    except OSError:
        return None, [f"{folder.name}/problem.yaml: (file): is missing"]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        return None, [f"{folder.name}/problem.yaml: {where}: not valid YAML ({getattr(err, 'problem', err)})"]
    found = []
    for name in ("reference.py", "tests.py", "bugs.py", "variants.py"):
        if not (folder / name).is_file():
            found.append(f"{folder.name}/{name}: (file): is missing")
    problem, more = parse_problem(raw, folder)
    return (problem if not found else None), found + more


def bank_error(problems: list[str]) -> RlprepError:
    noun = "problem" if len(problems) == 1 else "problems"
    return RlprepError(f"the coding bank has {len(problems)} {noun}:\n  " + "\n  ".join(problems),
                       "edit the named file(s); the schema is in the docstring of rlprep/coding/bank.py")


@functools.lru_cache(maxsize=4)
def load_problems(directory: str | None = None) -> dict[str, Problem]:
    """Every problem folder, keyed by slug in (topic, slug) order; raises naming each file and field at fault."""
    root = Path(directory) if directory else problems_dir()
    found: dict[str, Problem] = {}
    problems: list[str] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        problem, lines = _load_folder(folder)
        problems += lines
        if problem is not None:
            found[problem.slug] = problem
    if problems:
        raise bank_error(problems)
    return dict(sorted(found.items(), key=lambda kv: (TOPICS.index(kv[1].topic), kv[0])))


def get_problem(slug: str) -> Problem:
    bank = load_problems()
    if slug not in bank:
        raise RlprepError(f"no coding problem {slug!r}", "list them with: rlprep mock --coding --list")
    return bank[slug]

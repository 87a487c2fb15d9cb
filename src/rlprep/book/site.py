"""Build the site: execute (cached), write the MyST project, run Jupyter Book with the local theme, check it.

``build_site`` writes the project to ``build/book-src/`` (only files whose content changed, so MyST's own cache
holds), runs ``jupyter-book build --html`` there, and copies ``_build/html`` to ``build/book/``. Then it adds the
upper-case question URLs (``questions/W11/``: MyST lower-cases slugs) and checks that no page loads anything
from outside the site (``external_loads``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from rlprep.book.execute import execute_cached
from rlprep.book.pages import Page, project_pages, toc
from rlprep.book.theme import check_node, ensure_theme
from rlprep.course import NOTEBOOKS
from rlprep.errors import RlprepError

# Attributes and CSS that make a browser fetch something when the page loads (links a reader clicks do not count).
LOADS = re.compile(r"""<(?:script|img|iframe|source|audio|video|embed)\b[^>]*?\bsrc=["']?(https?:)?//[^"'\s>]+"""
                   r"""|<link\b[^>]*?\bhref=["']?(https?:)?//[^"'\s>]+"""
                   r"""|url\(\s*["']?(?:https?:)?//[^)"']+|@import\s+["'](?:https?:)?//[^"']+""", re.I)


@dataclass
class BuildReport:
    """What a build did, for the command's summary and for make bench."""

    out: Path
    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def external_loads(site: Path) -> list[str]:
    """Every ``file: snippet`` in the built site that would fetch a non-local URL when a page loads."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(site)}: {m.group(0)[:120]}" for m in LOADS.finditer(text)]
    return found


def write_project(project: Path, pages: list[Page], theme: Path, title: str = "rlprep") -> int:
    """Write ``pages`` and ``myst.yml`` into ``project``; files whose content is unchanged are left alone.
    Returns how many files were (re)written. Files no page names are removed."""
    config = {"version": 1,
              "project": {"title": title, "toc": toc(pages), "numbering": False,
                          "exclude": ["_build/**"]},
              "site": {"template": str(theme), "title": title,
                       "options": {"folders": True, "logo_text": "rlprep", "hide_authors": True}}}
    files = {p.path: (p.content if isinstance(p.content, str) else nbformat.writes(p.content)) for p in pages}
    files["myst.yml"] = yaml.safe_dump(config, allow_unicode=True, sort_keys=False)
    written = 0
    for rel, text in files.items():
        target = project / rel
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written += 1
    for old in project.rglob("*"):
        rel = old.relative_to(project).as_posix()
        if old.is_file() and not rel.startswith("_build/") and rel not in files:
            old.unlink()
    return written


def _jupyter_book(project: Path) -> None:
    env = dict(os.environ, BASE_URL="")
    cmd = [sys.executable, "-m", "jupyter_book", "build", "--html", "--ci"]
    print("book: running jupyter-book build --html", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
    log = done.stdout + done.stderr
    (project / "_build").mkdir(exist_ok=True)
    (project / "_build" / "rlprep-book.log").write_text(log, encoding="utf-8")
    if done.returncode != 0 or not (project / "_build" / "html" / "index.html").is_file():
        tail = "\n".join(log.strip().splitlines()[-20:])
        raise RlprepError(f"jupyter-book build --html failed (log: {project / '_build' / 'rlprep-book.log'}):\n{tail}",
                          "fix the page it names (or run make book again after a network hiccup on npm)")


def add_question_aliases(site: Path, ids: list[str]) -> None:
    """``questions/W11/`` for each id: MyST serves ``questions/w11``; the stable upper-case URL redirects there."""
    for qid in ids:
        if qid == qid.lower():
            continue
        alias = site / "questions" / qid / "index.html"
        alias.parent.mkdir(parents=True, exist_ok=True)
        target = f"../{qid.lower()}/"
        alias.write_text(f'<!doctype html><meta charset="utf-8"><title>{qid}</title>'
                         f'<meta http-equiv="refresh" content="0; url={target}">'
                         f'<link rel="canonical" href="{target}"><a href="{target}">{qid}</a>\n', encoding="utf-8")


def build_site(root: Path, profile: str, *, out: Path | None = None, build_dir: Path | None = None,
               notebooks: list[str] | None = None, fresh: bool = False) -> BuildReport:
    """Build the site into ``out`` (default ``build/book``); ``notebooks`` limits the walkthroughs (a partial site),
    ``fresh`` executes them even when the cache has them."""
    from rlprep.interview.bank import load_bank

    build_dir = build_dir or root / "build"
    out = out or build_dir / "book"
    report = BuildReport(out)
    check_node()
    start = time.perf_counter()
    theme = ensure_theme(root, build_dir)
    report.seconds["theme"] = time.perf_counter() - start
    executed = {}
    for unit in NOTEBOOKS:
        if notebooks is not None and Path(unit.path).name not in notebooks:
            continue
        result = execute_cached(root / unit.path, profile, build_dir / "book-cache", refresh=fresh)
        (report.cached if result.cached else report.executed).append(Path(unit.path).name)
        report.seconds[Path(unit.path).name] = result.seconds
        executed[unit.path] = nbformat.read(result.path, as_version=4)
    bank = load_bank()
    pages = project_pages(executed, bank, root / "labs", profile)
    project = build_dir / "book-src"
    write_project(project, pages, theme)
    start = time.perf_counter()
    _jupyter_book(project)
    report.seconds["jupyter-book"] = time.perf_counter() - start
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(project / "_build" / "html", out)
    add_question_aliases(out, list(bank))
    loads = external_loads(out)
    if loads:
        raise RlprepError("the site would load from outside: " + "; ".join(loads[:5]),
                          "remove the external asset from the theme (book/theme/) or the page that adds it")
    (out / "rlprep-book.json").write_text(json.dumps({"profile": profile, "seconds": report.seconds,
                                                      "executed": report.executed, "cached": report.cached},
                                                     indent=1), encoding="utf-8")
    return report

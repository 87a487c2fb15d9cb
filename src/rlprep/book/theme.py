"""The book theme, built offline: ``book/theme/`` (MyST's book theme, MIT, vendored) → ``build/book-theme/``.

Jupyter Book normally downloads a built theme from the MyST template service. Here the theme's source is in the
repository with a committed ``package-lock.json``; ``ensure_theme`` copies it under ``build/``, installs its npm
packages from the lockfile (``npm ci``: the npm registry only) and builds it with Remix. The result is cached by a
hash of the source, so later builds reuse it; a site config with ``template: <that folder>`` makes Jupyter Book use
it, and since its ``node_modules`` exists, Jupyter Book installs nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from rlprep.errors import RlprepError

NODE_MIN_MAJOR = 18
BUILT = ("node_modules", "build", "public/build", "public/katex", "app/styles/app.css", ".cache")
"""Paths in the theme folder that the build writes (never part of the source hash)."""
STAMP = ".rlprep-theme-hash"
PATCHES = (
    # The theme's own repository patches this file the same way (patches/@jupyter-widgets%2Fcontrols@5.0.12.patch):
    # esbuild cannot @import these two stylesheets from a CSS file, and the widgets' sliders never run on our site.
    ("node_modules/@jupyter-widgets/controls/css/widgets-base.css",
     "@import './lumino.css';\n@import './nouislider.css';",
     "/* @import './lumino.css'; */\n/* @import './nouislider.css'; */"),
)


def theme_source(root: Path) -> Path:
    return root / "book" / "theme"


def _source_files(src: Path) -> list[Path]:
    def built(rel: str) -> bool:
        return any(rel == b or rel.startswith(b + "/") for b in BUILT)
    return sorted(p for p in src.rglob("*") if p.is_file() and not built(p.relative_to(src).as_posix()))


def source_hash(src: Path) -> str:
    """sha256 (16 hex) over the theme's source files' paths and bytes (the lockfile included)."""
    digest = hashlib.sha256()
    for path in _source_files(src):
        digest.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def check_node() -> str:
    """node's version, or an error saying how to install it (Jupyter Book 2 runs on node >= 18)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    fix = "install Node.js >= 18 and npm (Debian: apt-get install nodejs npm; make book does this when run as root)"
    if not node or not npm:
        raise RlprepError("the site needs Node.js and npm, which are not on PATH", fix)
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < NODE_MIN_MAJOR:
        raise RlprepError(f"Node.js {version or '?'} is too old for Jupyter Book 2 (needs >= {NODE_MIN_MAJOR})", fix)
    return version


def _npm(args: list[str], cwd: Path, what: str) -> None:
    print(f"book: {what}", file=sys.stderr, flush=True)
    done = subprocess.run(["npm", *args, "--no-audit", "--no-fund"], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RlprepError(f"npm {' '.join(args)} failed in {cwd}:\n{tail}",
                          "check that the npm registry is reachable (npm ping), then run make book again")


def ensure_theme(root: Path, build_dir: Path) -> Path:
    """The built theme folder under ``build_dir`` (built now unless its source hash is already there)."""
    src = theme_source(root)
    if not (src / "package-lock.json").is_file():
        raise RlprepError(f"{src}/package-lock.json is missing", "restore book/theme/ from git (git checkout book/theme)")
    out = build_dir / "book-theme"
    want = source_hash(src)
    stamp = out / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want:
        return out
    check_node()
    out.mkdir(parents=True, exist_ok=True)
    lock_changed = not (out / "package-lock.json").is_file() or \
        (out / "package-lock.json").read_bytes() != (src / "package-lock.json").read_bytes()
    for path in _source_files(src):
        target = out / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    if lock_changed or not (out / "node_modules").is_dir():
        _npm(["ci"], out, "installing the book theme's npm packages from its lockfile (once; a few minutes)")
    for rel, old, new in PATCHES:
        target = out / rel
        text = target.read_text(encoding="utf-8")
        if old in text:
            target.write_text(text.replace(old, new), encoding="utf-8")
    _npm(["run", "build"], out, "building the book theme (once per theme change)")
    stamp.write_text(want + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m rlprep.book.theme [BUILD_DIR]``: build the theme alone, needing only the standard library.

    CI runs it in the background while ``make test`` runs (the theme's ``npm ci`` is mostly download time), so the
    smoke site build afterwards finds the theme ready.
    """
    args = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[3]
    try:
        print(ensure_theme(root, Path(args[0]) if args else root / "build"))
    except RlprepError as err:
        print(f"error: {err.problem}" + (f"\nfix: {err.fix}" if err.fix else ""), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

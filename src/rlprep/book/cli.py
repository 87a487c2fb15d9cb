"""``rlprep book``: the course as a static website in ``build/book/`` (``make book``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rlprep.errors import RlprepError

EPILOG = """\
The walkthrough notebooks are executed in the active profile (RLPREP_PROFILE, else cpu/gpu as detected; CI builds
with RLPREP_PROFILE=smoke) and cached per notebook by content hash under build/book-cache/, so a rebuild after a text
edit re-runs only the notebook that changed. The key does not cover rlprep's own code: after changing it, build with
--fresh (or delete build/book-cache/). The first build also installs and builds the book theme under
build/book-theme/ (npm, from book/theme/package-lock.json). Needs Node.js >= 18 and npm.

Open the site: python -m http.server -d build/book 8000, then http://127.0.0.1:8000/ (a page per question at
/questions/<ID>, e.g. /questions/W11).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--profile", choices=["smoke", "cpu", "gpu"],
                        help="profile to execute the notebooks in (default: the active profile)")
    parser.add_argument("--out", type=Path, help="where the site goes (default: build/book in the checkout)")
    parser.add_argument("--fresh", action="store_true",
                        help="execute every notebook again, cache or not (after a change to rlprep's code)")
    parser.add_argument("--notebooks", help="only these walkthrough notebooks, comma-separated file names "
                                            "(a quick partial site; question pages of the others show no section)")


def run(args: argparse.Namespace) -> int:
    from rlprep.book.site import build_site
    from rlprep.paths import repo_root
    from rlprep.profiles import get_profile

    root = repo_root()
    if root is None:
        raise RlprepError("rlprep book builds from a checkout of the course, and none was found",
                          "run it from a clone of the repository (make book)")
    profile = args.profile or get_profile().name
    notebooks = [n.strip() for n in args.notebooks.split(",") if n.strip()] if args.notebooks else None
    if notebooks:
        from rlprep.course import NOTEBOOKS

        known = {Path(u.path).name for u in NOTEBOOKS}
        unknown = sorted(set(notebooks) - known)
        if unknown:
            raise RlprepError(f"no walkthrough notebook {', '.join(unknown)}", f"choose from: {', '.join(sorted(known))}")
    start = time.perf_counter()
    report = build_site(root, profile, out=args.out, notebooks=notebooks, fresh=args.fresh)
    print(f"book: {len(report.executed)} notebooks executed, {len(report.cached)} from the cache ({profile} profile); "
          f"built in {time.perf_counter() - start:.0f} s")
    print(f"book: the site is in {report.out}; open it with: python -m http.server -d {report.out} 8000")
    return 0

"""``rlprep release``: regenerate answer cells from the reference functions, then labs/ with nbgrader.

For each ``solutions/<lab>/<lab>.ipynb``:
1. every answer cell with ``metadata.rlprep.reference = "module:function"`` gets its source regenerated
   from that function (``authoring.reference_source``): the one copy of each reference lives in the package;
2. ``nbgrader generate_assignment --force`` runs on a throwaway course folder;
3. the released notebook is written to ``labs/<lab>/<lab>.ipynb`` (no outputs, stable ids, nbformat's bytes).

``rlprep release --check`` regenerates into a temp dir and exits 1 when labs/ or solutions/ are out of date.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from rlprep.errors import RlprepError
from rlprep.grading import authoring, templating
from rlprep.paths import course_root


def list_labs(root=None) -> list[str]:
    """Lab names: ``solutions/<lab>/<lab>.ipynb`` that exist, sorted."""
    sol = course_root(root) / "solutions"
    return sorted(p.name for p in sol.iterdir() if (p / f"{p.name}.ipynb").is_file())


def course_config(course_dir: Path, db_url: str | None = None, **executor):
    """The nbgrader config used by release and by ``rlprep grade`` (see also autograder/nbgrader_config.py)."""
    from traitlets.config import Config

    c = Config()
    c.CourseDirectory.root = str(course_dir)
    c.CourseDirectory.db_url = db_url or f"sqlite:///{Path(course_dir) / 'gradebook.db'}"
    c.CourseDirectory.course_id = "rlprep"
    apply_grading_config(c)
    for key, value in executor.items():
        setattr(c.IsolatedExecute, key, value)
    return c


def apply_grading_config(c) -> None:
    """What every rlprep grading run needs, on an nbgrader config ``c`` (also used by autograder/).

    Restore deleted test cells, run learner code isolated from the tests, clear hidden tests from feedback, and show
    learner markdown and outputs sanitised in every page (``rlprep.grading.sanitize``: the autograded notebook, and
    each HTMLExporter formgrader and generate_feedback build from this config).
    """
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, GetGrades,
                                        IgnorePattern, LimitOutput, SaveAutoGrades)

    from rlprep.grading.executor import IsolatedExecute
    from rlprep.grading.sanitize import SanitizeSubmission, configure_exporters
    from rlprep.grading.submission_files import SAFE_NAMES, DropUnsafeFiles

    c.OverwriteCells.add_missing_cells = True
    from nbgrader.preprocessors import ClearOutput, DeduplicateIds, OverwriteKernelspec

    from rlprep.grading.missing_cells import RepairCells, RestoreMissingCells  # nbgrader fails on these hand-ins

    c.Autograde.sanitize_preprocessors = [RepairCells, ClearOutput, DeduplicateIds, OverwriteKernelspec,
                                          RestoreMissingCells, CheckCellMetadata]
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", templating.FIXTURES]
    c.CourseDirectory.include = list(SAFE_NAMES)  # what the exchange copies: no page a browser would run
    from nbgrader.converters import GenerateAssignment

    c.GenerateAssignment.preprocessors = [templating.render_preprocessor(), *GenerateAssignment().preprocessors]
    c.Autograde.autograde_preprocessors = [IsolatedExecute, SanitizeSubmission, DropUnsafeFiles, IgnorePattern,
                                           ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
                                           AssignLatePenalties, CheckCellMetadata]
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, ClearHiddenTests]
    configure_exporters(c)


def tools_on_path() -> None:
    """nbgrader runs the ``alembic`` executable when it creates a gradebook: put this venv's bin/ on PATH."""
    bindir = str(Path(sys.executable).parent)
    if shutil.which("alembic") is None and bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def api_for(course_dir: Path, **executor):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    tools_on_path()
    config = course_config(course_dir, **executor)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def sync_answer_cells(nb) -> bool:
    """Regenerate each answer cell's source from its reference; return True if anything changed."""
    changed = False
    for cell in nb.cells:
        ref = cell.get("metadata", {}).get("rlprep", {}).get("reference")
        if ref:
            src = authoring.reference_source(ref)
            if cell.source != src:
                cell.source, changed = src, True
    return changed


def build_course(lab: str, solution: Path, course_dir: Path) -> Path:
    """generate_assignment for one lab in ``course_dir``; return the released notebook path.

    nbgrader fills the source's placeholders first (hidden values from the lab's fixtures, figures from recorded
    results: ``rlprep.grading.templating.RenderPlaceholders``).
    """
    source_dir = course_dir / "source" / lab
    shutil.copytree(solution.parent, source_dir, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.tmp"))
    api = api_for(course_dir)
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    result = api.generate_assignment(lab, force=True, create=True)
    released = course_dir / "release" / lab / f"{lab}.ipynb"
    if not result.get("success") or not released.is_file():
        raise RlprepError(f"nbgrader generate_assignment failed for {lab}:\n{result.get('error') or result.get('log')}",
                          f"check the nbgrader metadata in {solution}")
    return released


def normalize(nb):
    """No outputs, no execution counts: the committed form."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def release_lab(lab: str, root=None, out_root=None, write_solution: bool = True) -> Path:
    """Release one lab into ``<out_root>/labs/<lab>/<lab>.ipynb`` (out_root defaults to the repo)."""
    root = course_root(root)
    out_root = Path(out_root) if out_root else root
    solution = root / "solutions" / lab / f"{lab}.ipynb"
    if not solution.is_file():
        raise RlprepError(f"unknown lab {lab!r}: no {solution}", f"labs: {', '.join(list_labs(root))}")
    nb = nbformat.read(solution, as_version=4)
    if sync_answer_cells(nb):
        target = solution if write_solution else out_root / "solutions" / lab / f"{lab}.ipynb"
        authoring.write_notebook(nb, target)
        solution = target
    with tempfile.TemporaryDirectory(prefix="rlprep-release-") as tmp:
        released = build_course(lab, solution, Path(tmp))
        lab_nb = normalize(nbformat.read(released, as_version=4))
        target = out_root / "labs" / lab / f"{lab}.ipynb"
        backup_learner_work(target)
        return authoring.write_notebook(lab_nb, target)


def has_learner_work(path: Path) -> bool:
    """True when a lab notebook holds a learner's answers (an answer cell no longer raising NotImplementedError)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # unreadable: treat as work, never overwrite it silently
        return True
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and "raise NotImplementedError()" not in cell.source:
            return True
    return False


def backup_learner_work(target: Path) -> Path | None:
    """Copy a lab notebook that holds the learner's answers aside before a release overwrites it."""
    if not target.is_file() or not has_learner_work(target):
        return None
    backup = target.with_name(f"{target.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
    shutil.copy2(target, backup)
    print(f"your work in {target.name} was kept: copied to {backup}", file=sys.stderr)
    return backup


def out_of_sync(root=None) -> list[str]:
    """Labs whose committed labs/ or solutions/ notebook differs from a fresh release (bytes)."""
    root = course_root(root)
    stale = []
    with tempfile.TemporaryDirectory(prefix="rlprep-release-check-") as tmp:
        for lab in list_labs(root):
            fresh = release_lab(lab, root, out_root=tmp, write_solution=False)
            committed = root / "labs" / lab / f"{lab}.ipynb"
            if not committed.is_file() or committed.read_bytes() != fresh.read_bytes():
                stale.append(f"labs/{lab}/{lab}.ipynb")
            if (Path(tmp) / "solutions" / lab).exists():
                stale.append(f"solutions/{lab}/{lab}.ipynb (answer cells differ from their references)")
    return stale


def configure(parser) -> None:
    parser.add_argument("--lab", action="append", help="release only this lab (repeatable); default: all")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if labs/ or solutions/ are out of date")


def run(args) -> int:
    root = course_root()
    if args.check:
        stale = out_of_sync(root)
        for item in stale:
            print(f"out of date: {item}")
        if stale:
            print("run 'make release' (rlprep release) and commit the result")
            return 1
        print("labs/ and solutions/ are in sync")
        return 0
    labs = args.lab or list_labs(root)
    for lab in labs:
        print(f"released {release_lab(lab, root).relative_to(root)}")
    return 0

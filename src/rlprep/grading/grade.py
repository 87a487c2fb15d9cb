"""``rlprep grade PATH.ipynb [--json]``: grade one learner notebook with nbgrader and the hidden tests.

The gradebook comes from ``solutions/<lab>/`` via ``generate_assignment`` on a throwaway course folder and
is cached under ``rlprep.paths.cache_dir()/gradebooks/<lab>-<content hash>``. Each run copies it into a
fresh course folder, puts the notebook under ``submitted/learner/<lab>/`` and runs ``NbGraderAPI.autograde``
with the isolated executor (learner code in its own kernel, tests in this process).

Exit status: 0 full marks, 1 otherwise, 2 invalid input (not a notebook, malformed JSON or JSON nested deeper
than any notebook, unknown lab) or a grader that must not run the learner's code here (root without a sandbox,
``rlprep.grading.sandbox.refusal``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rlprep.errors import RlprepError
from rlprep.paths import cache_dir

if TYPE_CHECKING:
    import nbformat

STUDENT = "learner"
MAX_JSON_DEPTH = 100  # a Jupyter notebook nests about 10 levels deep; nbformat and nbgrader recurse per level


@dataclass
class CellGrade:
    grade_id: str
    points: float
    max_points: float
    passed: bool
    message: str


@dataclass
class GradeReport:
    lab: str
    score: float
    max_score: float
    cells: list[CellGrade] = field(default_factory=list)
    tampering: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # answer cells of the release not in the notebook
    seconds: float = 0.0
    sandbox: str = ""  # "bubblewrap" or "none: <why>" (rlprep.grading.sandbox)

    def as_json(self) -> dict:
        return {"lab": self.lab, "score": self.score, "max_score": self.max_score, "sandbox": self.sandbox,
                "cells": [asdict(c) for c in self.cells]}


# -- input checks ---------------------------------------------------------------------------
def _lab_notebook_named(name: str) -> Path | None:
    """``labs/<lab>/<name>`` in the course checkout, when ``name`` is a lab notebook's file name."""
    from rlprep.paths import repo_root

    root = repo_root()
    candidate = root / "labs" / Path(name).stem / Path(name).name if root else None
    return candidate if candidate is not None and candidate.is_file() else None


def resolve_submission(path) -> Path:
    """``path`` as given, or, when it does not exist there, the same relative path from the course checkout's
    root: ``rlprep grade labs/lab01_gae/lab01_gae.ipynb`` works from any folder of the repository."""
    from rlprep.paths import repo_root

    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    root = repo_root()
    if root is not None and (root / path).exists():
        return root / path
    return path


def read_submission(path) -> nbformat.NotebookNode:
    import nbformat  # on demand: it takes seconds to import, and `rlprep grade --help` needs none of it

    path = Path(path)
    if path.is_dir():
        inside = sorted(p.name for p in path.glob("*.ipynb"))
        example = path / (inside[0] if inside else f"{path.name}.ipynb")
        raise RlprepError(f"{path} is a folder, not a notebook", f"pass the notebook inside it, e.g. rlprep grade {example}")
    if not path.is_file():
        # A learner in the repository root often types the name the lab notebook shows (lab01_gae.ipynb).
        lab_nb = _lab_notebook_named(path.name) if not path.parent.name or path.parent == Path(".") else None
        if lab_nb is not None:
            where = os.path.relpath(lab_nb) if not os.path.relpath(lab_nb).startswith("..") else str(lab_nb)
            raise RlprepError(f"{path} does not exist in {Path.cwd()}", f"the lab notebook is {where}: rlprep grade {where}")
        raise RlprepError(f"{path} does not exist", "pass the path of your lab notebook, e.g. labs/lab01_gae/lab01_gae.ipynb")
    if path.suffix != ".ipynb":
        raise RlprepError(f"{path} is not a notebook (.ipynb)", "pass the .ipynb file of your lab")
    try:
        text = path.read_text(encoding="utf-8")
        check_json_depth(text, path)
        raw = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RlprepError(f"{path} is not valid notebook JSON ({err})",
                          "restore it from labs/ or from your editor's checkpoint (File > Revert)") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise RlprepError(f"{path} is JSON but not a Jupyter notebook (no 'cells' list)",
                          "pass the .ipynb file of your lab")
    try:
        return nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as err:  # nbformat raises several types for a broken notebook
        raise RlprepError(f"{path} is not a readable notebook ({err})", "restore it from labs/") from None


_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a whole string, or one bracket


def check_json_depth(text: str, path) -> None:
    """Raise RlprepError when the JSON ``text`` nests deeper than ``MAX_JSON_DEPTH`` (counted without parsing,
    so a file nested 200,000 levels deep costs one scan, not a RecursionError)."""
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise RlprepError(f"{path} nests its JSON over {MAX_JSON_DEPTH} levels deep (a notebook nests about "
                                  "10), so it is not a notebook the grader can read",
                                  "restore it from labs/ or from your editor's checkpoint (File > Revert) and "
                                  "paste your answers back")
        elif bracket in ("]", "}"):
            depth -= 1


def lab_of(path, nb, labs: list[str], solutions: Path | None = None) -> str:
    """The lab: the file name if it names one, else the notebook's ``metadata.rlprep.lab``.

    A notebook whose cells belong to another lab (its ``metadata.rlprep.lab``, or most of its grade ids, those
    of ``solutions/<lab>/<lab>.ipynb``) than the one its file name says is refused, naming the lab they belong to.
    """
    stem = Path(path).stem
    meta = nb.metadata.get("rlprep", {}).get("lab")
    claimed = stem if stem in labs else meta if meta in labs else None
    if claimed is None:
        _refuse_walkthrough(path, labs, solutions)
        raise RlprepError(f"cannot tell which lab {path} is (file name {stem!r}, metadata lab {meta!r})",
                          f"keep the lab's file name; known labs: {', '.join(labs) or 'none'}")
    from rlprep.grading.cell_meta import grade_id_of

    ids = {grade_id_of(c) for c in nb.cells} - {None, "setup"}
    by_ids = _lab_by_grade_ids(ids, labs, solutions)
    owner = by_ids or (meta if meta in labs else None)
    if owner is not None and owner != claimed:
        evidence = ([f"metadata.rlprep.lab is {meta!r}"] if meta in labs else []) + (
            [f"grade ids {', '.join(sorted(ids)[:3])}{', …' if len(ids) > 3 else ''}"] if by_ids else [])
        raise RlprepError(f"{path} is named for {claimed} but its cells belong to {owner} ({'; '.join(evidence)})",
                          f"grade it as {owner}: save it as {owner}.ipynb (rlprep grade labs/{owner}/{owner}.ipynb); "
                          f"your {claimed} answers are in labs/{claimed}/{claimed}.ipynb")
    return claimed


def _refuse_walkthrough(path, labs: list[str], solutions: Path | None) -> None:
    """Raise the error for a walkthrough notebook (``notebooks/*.ipynb``, or a copy with its name): it has no
    hidden tests, so there is nothing to grade."""
    from rlprep.paths import repo_root

    root = Path(solutions).parent if solutions else repo_root()
    if root is None or not (root / "notebooks" / Path(path).name).is_file():
        return
    shown = Path(path)
    try:
        shown = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        pass
    example = f"labs/{labs[0]}/{labs[0]}.ipynb" if labs else "labs/<lab>/<lab>.ipynb"
    raise RlprepError(f"{shown} is a walkthrough notebook, not a graded lab: it has no tests to grade",
                      f"the labs are in labs/ (one folder each: {', '.join(labs)}); grade one with "
                      f"rlprep grade {example}")


def _lab_by_grade_ids(ids: set[str], labs: list[str], solutions: Path | None) -> str | None:
    """The lab whose solution notebook shares most of ``ids`` (more than half), or None."""
    from rlprep.paths import repo_root

    root = Path(solutions) if solutions else (repo_root() or Path(".")) / "solutions"
    best, best_shared = None, 0
    for lab in labs:
        try:
            cells = json.loads((root / lab / f"{lab}.ipynb").read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError):
            continue
        shared = len(ids & {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in cells})
        if shared > best_shared:
            best, best_shared = lab, shared
    return best if ids and 2 * best_shared > len(ids) else None


# -- the cached gradebook ---------------------------------------------------------------------
def _content_hash(folder: Path) -> str:
    """Hash of what a lab's gradebook is built from: its source folder (fixtures included) and the records."""
    import rlprep
    from rlprep import records

    h = hashlib.sha256(rlprep.__version__.encode())
    try:
        rec = sorted(records.records_dir().glob("*.json"))
    except RlprepError:
        rec = []
    inputs = [(str(p.relative_to(folder)), p) for p in sorted(folder.rglob("*"))
              if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts]
    inputs += [(f"records/{p.name}", p) for p in rec]
    for name, p in inputs:
        h.update(name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


MANIFEST = "manifest.json"


def _manifest(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every file of a cached course folder but the manifest itself."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST}


def _intact(folder: Path) -> bool:
    try:
        recorded = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return recorded == _manifest(folder)


def course_template(lab: str, solutions: Path) -> Path:
    """A course folder holding the gradebook and released notebook for ``lab`` (built once, cached).

    The folder records the hash of each of its files when it is built; a folder whose files no longer match
    (edited, truncated, or planted) is thrown away and built again, so a rewritten cache cannot change a grade.
    """
    from rlprep.grading.release import build_course

    sol_dir = solutions / lab
    target = cache_dir() / "gradebooks" / f"{lab}-{_content_hash(sol_dir)}"
    if (target / "gradebook.db").is_file() and _intact(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{lab}-", dir=target.parent))
    try:
        build_course(lab, sol_dir / f"{lab}.ipynb", tmp)
        (tmp / MANIFEST).write_text(json.dumps(_manifest(tmp)))
        if target.exists():
            stale = target.with_name(f".{target.name}-stale-{os.getpid()}")
            os.replace(target, stale)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:  # another run built it first
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def tampering(submitted, released) -> dict[str, str]:
    """{grade_id: 'deleted' | 'edited'} for locked cells of the release that the submission changed (its source, its
    type, or what its nbgrader metadata claims: graded, answer, locked, points).

    A cell that equals the release once its hidden-test block is removed (the instructor's own
    solution notebook) counts as unchanged.
    """
    from rlprep.grading.cell_meta import grade_id_of, nbgrader_meta
    from rlprep.grading.executor import released_source

    sub = {grade_id_of(c): c for c in submitted.cells}
    found = {}
    for cell in released.cells:
        nbg = cell.metadata.get("nbgrader", {})
        if not nbg.get("locked") or cell.cell_type != "code":
            continue
        mine = sub.get(nbg["grade_id"])
        if mine is None:
            found[nbg["grade_id"]] = "deleted"
        elif released_source(mine.source) != cell.source or mine.cell_type != cell.cell_type or any(
                nbgrader_meta(mine).get(k) != nbg.get(k) for k in ("grade", "solution", "locked", "points")):
            found[nbg["grade_id"]] = "edited"
    return found


def missing_answers(submitted, released) -> list[str]:
    """Grade ids of the release's answer cells (nbgrader solution cells) that the submission does not have."""
    from rlprep.grading.cell_meta import grade_id_of

    have = {grade_id_of(c) or c.get("id") for c in submitted.cells}  # a lost claim is put back by cell id
    return [gid for c in released.cells if c.metadata.get("nbgrader", {}).get("solution")
            and (gid := c.metadata["nbgrader"].get("grade_id")) not in have]


def _message(cell) -> str:
    """The failure of a test cell; for one that passed, the grader's note that it relied on the learner's kernel."""
    from rlprep.grading.executor import KERNEL_NOTE_MARK

    outputs = cell.get("outputs", [])
    for out in outputs:
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"
    last = outputs[-1] if outputs else {}
    text = str(last.get("text", "")) if last.get("output_type") == "stream" else ""
    return text.strip() if text.startswith(KERNEL_NOTE_MARK) else ""


def grade_notebook(path, *, solutions: Path | None = None, cell_timeout: float = 30, call_timeout: float = 10,
                   deadline: float = 120) -> GradeReport:
    """Grade one notebook; see the module docstring."""
    import nbformat
    from nbgrader.api import Gradebook

    from rlprep.grading import sandbox
    from rlprep.grading.release import api_for, list_labs
    from rlprep.paths import course_root

    t0 = time.monotonic()
    path = resolve_submission(path)
    nb = read_submission(path)
    solutions = Path(solutions) if solutions else course_root() / "solutions"
    lab = lab_of(path, nb, list_labs(solutions.parent), solutions)
    refused = sandbox.refusal()  # before anything runs: never the learner's code as root without a sandbox
    if refused is not None:
        raise refused
    template = course_template(lab, solutions)
    released = nbformat.read(template / "release" / lab / f"{lab}.ipynb", as_version=4)
    changed = tampering(nb, released)
    missing = missing_answers(nb, released)
    os.environ["RLPREP_PROFILE"] = "smoke"
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="nbgrader")  # SQLAlchemy session warnings inside nbgrader
    with tempfile.TemporaryDirectory(prefix="rlprep-grade-") as tmp:
        course = Path(tmp)
        shutil.copy(template / "gradebook.db", course / "gradebook.db")
        shutil.copytree(template / "source", course / "source")
        dest = course / "submitted" / STUDENT / lab
        dest.mkdir(parents=True)
        shutil.copy(path, dest / f"{lab}.ipynb")
        api = api_for(course, cell_timeout=int(cell_timeout), call_timeout=int(call_timeout), deadline=int(deadline))
        result = api.autograde(lab, STUDENT, force=True, create=True)
        graded_path = course / "autograded" / STUDENT / lab / f"{lab}.ipynb"
        if not result.get("success") or not graded_path.is_file():
            raise RlprepError(f"nbgrader could not grade {path}:\n{(result.get('error') or result.get('log') or '')[-2000:]}",
                              "restore the notebook from labs/ and paste your answers back")
        graded = nbformat.read(graded_path, as_version=4)
        by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in graded.cells}
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "rlprep") as gb:
            grades = {g.name: (g.score, g.max_score)
                      for g in gb.find_submission_notebook(lab, lab, STUDENT).grades}
    cells = []
    for cell in released.cells:  # release order
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid not in grades or not cell.metadata["nbgrader"].get("grade"):
            continue
        score, max_score = grades[gid]
        score = float(score or 0.0)
        msg = _message(by_id.get(gid, {}))
        if gid in changed:
            msg = f"this test cell was {changed[gid]} in your notebook and has been restored. " + msg
        cells.append(CellGrade(gid, score, float(max_score), score >= float(max_score), msg.strip()))
    report = GradeReport(lab, sum(c.points for c in cells), sum(c.max_points for c in cells), cells,
                         [f"{gid} ({how}, restored)" for gid, how in changed.items()], missing,
                         sandbox=sandbox.probe())
    report.seconds = time.monotonic() - t0
    _record(report, path)
    return report


def _record(report: GradeReport, notebook: Path) -> None:
    try:
        from rlprep.interview.history import record_lab_grade
    except ImportError:
        return
    try:
        record_lab_grade(report.lab, report.score, report.max_score, notebook=notebook)
    except Exception as err:  # a history problem must not hide the grade
        logging.getLogger(__name__).warning("could not record the grade in your history: %s", err)


def format_report(report: GradeReport) -> str:
    """The table ``rlprep grade`` and ``grade_here()`` print: a row per graded cell (an error shared by several rows
    is written out once, on the first), then what to fix next (:func:`next_steps`)."""
    width = max([len(c.grade_id) for c in report.cells] + [8])
    lines = [f"{report.lab}: {report.score:g} / {report.max_score:g} points"]
    first_with: dict[str, str] = {}
    for c in report.cells:
        status = "PASS" if c.passed else "FAIL"
        line = f"  {status}  {c.grade_id:<{width}}  {c.points:g}/{c.max_points:g}"
        message = c.message
        if not c.passed and message:
            if message in first_with:
                message = f"(the same error as {first_with[message]})"
            else:
                first_with[message] = c.grade_id
        lines.append(line + (f"  {message}" if message else ""))
    if report.sandbox and report.sandbox != "bubblewrap":
        lines.append(f"sandbox: {report.sandbox}. Your code ran without one: fine for practice, not for a class "
                     "(see docs/grading.md).")
    if report.tampering:
        lines.append("tampering: test cells changed in your notebook were restored before grading: "
                     + ", ".join(report.tampering))
    if report.missing:
        lines.append(f"missing: your notebook has no answer cell {', '.join(report.missing)}; the tests of what it "
                     "defines score 0 unless another cell defines it (copy the cell back from labs/)")
    lines += next_steps(report)
    return "\n".join(lines)


_UNWRITTEN = re.compile(r"(\w+) raised NotImplementedError")


def _failure(message: str, grade_id: str) -> tuple[int, str]:
    """(rank, what to fix) for a failed cell: a compile error ranks first (nothing its cell defines exists until it
    compiles), then everything else in the order of the lab."""
    from rlprep.grading.executor import COMPILE_ERRORS

    if message.startswith(COMPILE_ERRORS):
        return 0, f"an answer cell does not compile, so nothing it defines exists: {message}"
    unwritten = _UNWRITTEN.search(message)
    if unwritten:
        return 1, f"{unwritten[1]} still raises NotImplementedError: replace that line with your code"
    prop = message.split(": ", 1)[1] if message.startswith("PropertyFailed: ") else message
    return 1, prop or f"{grade_id} failed"


def next_steps(report: GradeReport) -> list[str]:
    """Every failing property, once each, the first to fix first, with the tests that show it; [] at full marks."""
    if report.score >= report.max_score:
        return []
    found: dict[str, list[str]] = {}
    ranks: dict[str, int] = {}
    for c in report.cells:
        if c.passed:
            continue
        rank, what = _failure(c.message, c.grade_id)
        found.setdefault(what, []).append(c.grade_id)
        ranks[what] = rank
    order = sorted(found, key=lambda what: ranks[what])  # stable: the lab's order within a rank
    lines = ["next: fix these in order, the first first, in your answer cells; save the notebook (Ctrl+S: grading "
             "reads the saved file, not what is on screen), then grade again:"]
    for n, what in enumerate(order, 1):
        lines.append(f"  {n}. {what} ({', '.join(found[what])})")
    return lines


def configure(parser) -> None:
    parser.add_argument("notebook", help="your lab notebook, e.g. labs/lab01_gae/lab01_gae.ipynb")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--call-timeout", type=float, default=10, help="seconds per call of your function (10)")
    parser.add_argument("--cell-timeout", type=float, default=30, help="seconds per cell of yours (30)")
    parser.add_argument("--deadline", type=float, default=120, help="seconds for the whole notebook (120)")


def run(args) -> int:
    report = grade_notebook(args.notebook, cell_timeout=args.cell_timeout, call_timeout=args.call_timeout,
                            deadline=args.deadline)
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print(format_report(report))
    return 0 if report.score >= report.max_score else 1

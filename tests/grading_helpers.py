"""Shared pieces for the grading tests: the lab01 notebooks and small variants of them."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "lab01_gae" / "lab01_gae.ipynb"
RELEASE = ROOT / "labs" / "lab01_gae" / "lab01_gae.ipynb"

WRONG_GAE = """
def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    return [0], [0]  # wrong values, shape and type: fails every test unless the checks are sabotaged
"""


def solution():
    """lab01's source notebook with its placeholders filled (what the gradebook holds)."""
    from rlprep.grading.templating import rendered_solution

    return rendered_solution("lab01_gae", ROOT)


def release():
    return nbformat.read(RELEASE, as_version=4)


def variant(answer_source: str, base=None, drop_demo: bool = True, extra_cells=()):
    """The lab with the answer cell's source replaced (learners submit the released form)."""
    nb = copy.deepcopy(base if base is not None else release())
    for cell in nb.cells:
        if cell.get("metadata", {}).get("rlprep", {}).get("role") == "answer":
            cell.source = answer_source.strip("\n")
    if drop_demo:
        nb.cells = [c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("role") != "demo"]
    idx = next(i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("rlprep", {}).get("role") == "answer")
    nb.cells[idx + 1: idx + 1] = list(extra_cells)
    return nb


def reference_answer() -> str:
    from rlprep.grading.authoring import reference_source

    return reference_source("rlprep.algos.gae:compute_gae").replace("    ### BEGIN SOLUTION\n", "").replace(
        "\n    ### END SOLUTION", "")


def notebook_at(commit: str, lab: str):
    """``solutions/<lab>/<lab>.ipynb`` as it was at ``commit`` (skips where git history is not at hand)."""
    import subprocess

    import pytest

    try:
        text = subprocess.run(["git", "show", f"{commit}:solutions/{lab}/{lab}.ipynb"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"git history with commit {commit[:8]} is not available (a shallow clone?)")
    return nbformat.reads(text, as_version=4)

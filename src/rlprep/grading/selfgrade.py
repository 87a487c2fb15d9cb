"""``grade_here()``: the "Grade yourself" cell of every lab, one readable call.

It finds the notebook this kernel belongs to, warns when the saved file is not what you last ran (grading reads
the saved file), then runs ``rlprep grade`` on it in a separate process and prints the table.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path


def _notebook_path(path=None) -> Path:
    if path is not None:
        return Path(path)
    session = os.environ.get("JPY_SESSION_NAME")  # set by jupyter_server for a notebook's kernel
    if session and Path(session).name.endswith(".ipynb"):
        here = Path.cwd() / Path(session).name
        if here.is_file():
            return here
        if Path(session).is_file():
            return Path(session)
    labs = []
    for candidate in sorted(Path.cwd().glob("*.ipynb")):
        try:
            if json.loads(candidate.read_text(encoding="utf-8")).get("metadata", {}).get("rlprep", {}).get("lab"):
                labs.append(candidate)
        except (OSError, ValueError):
            continue
    if len(labs) == 1:
        return labs[0]
    raise FileNotFoundError("could not tell which notebook to grade: call grade_here('labNN_name.ipynb') with "
                            "the lab's file name")


def def_names(source: str) -> list[str]:
    """Names of the top-level ``def`` lines in a cell, in order, each once, found by pattern: it works on a cell that
    does not parse (the one helper for this; the grader's ``executor`` uses it too)."""
    return list(dict.fromkeys(re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", source, flags=re.M)))


def unsaved_answers(saved_nb: dict, history: list[str]) -> list[str]:
    """Names of answer functions whose last run (in ``history``, the kernel's ``In``) differs from the saved cell.

    A function that was never run in this kernel is not reported: grading runs the saved cell anyway.
    """
    stale = []
    for cell in saved_nb.get("cells", []):
        if not cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            continue
        source = "".join(cell.get("source", []))
        for name in sorted(def_names(source)):
            ran = [h for h in history if name in def_names(h)]
            if ran and ran[-1].strip() != source.strip():
                stale.append(name)
    return stale


def grade_here(path=None) -> None:
    """Grade the saved copy of this lab notebook with the hidden tests and print the table."""
    nb_path = _notebook_path(path)
    try:
        saved = json.loads(nb_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        print(f"error: cannot read {nb_path} ({err})\nfix: save the notebook (Ctrl+S), then run this cell again")
        return
    history = []
    try:
        history = list(get_ipython().user_ns.get("In", []))  # defined inside IPython
    except NameError:
        pass
    stale = unsaved_answers(saved, history)
    if stale:
        print(f"warning: the saved {nb_path.name} differs from the code you last ran for {', '.join(stale)}. "
              "Grading reads the saved file: press Ctrl+S (Cmd+S on a Mac), then run this cell again.\n")
    print(f"grading the saved {nb_path.name} with the hidden tests (about 30 s)...", flush=True)
    try:
        stdout, stderr = _run_grader(nb_path)
    except KeyboardInterrupt:  # JupyterLab's stop button (■): one line, not a traceback through subprocess.py
        print("interrupted: grading stopped before its verdict; nothing saved was lost (your notebook file is "
              "unchanged). Run this cell again to grade.")
        return
    print(stdout)
    if stderr.strip():  # an error:/fix: message from rlprep, or a crash
        print(stderr)


def _run_grader(nb_path: Path) -> tuple[str, str]:
    """``rlprep grade nb_path``'s (stdout, stderr). A stop (KeyboardInterrupt) stops the grader too, waits for it to
    exit (it keeps what it had saved, as on the command line) and is raised again."""
    proc = subprocess.Popen([sys.executable, "-m", "rlprep", "grade", str(nb_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        return proc.communicate()
    except KeyboardInterrupt:
        if proc.poll() is None:  # the kernel's process group got SIGINT; a lone SIGINT to the kernel did not reach it
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise

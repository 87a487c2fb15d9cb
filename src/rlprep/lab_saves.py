"""What JupyterLab reads and writes in learner mode: a notebook opens clean, and a walkthrough saves without the runs.

JupyterLab sets a notebook's ``language_info`` to what its kernel reports when the kernel starts, and a change to
the metadata marks the notebook unsaved (●) before the learner has touched it. :class:`CourseContentsManager`
(learner mode's ``ServerApp.contents_manager_class``) hands out every Python notebook with the ``language_info`` this
interpreter's kernel reports, so there is nothing to change: a released lab or a walkthrough opens clean whatever
the committed file says and whichever Python the learner has.

``rlprep lab`` (learner mode, :mod:`rlprep.grading.learner_mode`) installs :func:`strip_walkthrough_outputs` as the
server's ``ContentsManager.pre_save_hook``. A walkthrough (``notebooks/*.ipynb`` under the served root) is then
saved without outputs and execution counts, with the notebook metadata its file already had (JupyterLab would write
the kernel's full ``language_info``) and without the cell metadata a run leaves (``execution`` timings, ``scrolled``,
``collapsed``): running and autosaving a walkthrough leaves its file as git has it, so ``git pull`` updates it. An
edit to a cell's source is the learner's own and is saved. Labs keep their outputs: a lab is the learner's work.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

WALKTHROUGH_DIR = "notebooks"
RUN_CELL_METADATA = ("execution", "scrolled", "collapsed")
"""Cell metadata a run or a view leaves behind (JupyterLab's timing, output scroll and collapse state)."""


def is_walkthrough(path: str) -> bool:
    """True for ``notebooks/<name>.ipynb`` (a server API path, relative to the served repository root)."""
    parts = PurePosixPath(path.strip("/")).parts
    return len(parts) == 2 and parts[0] == WALKTHROUGH_DIR and parts[1].endswith(".ipynb")


def strip_walkthrough_outputs(model: dict, path: str, contents_manager=None, **kwargs) -> None:
    """jupyter_server pre-save hook: strip a walkthrough's runs from ``model`` (in place) before it is written."""
    if model.get("type") != "notebook" or not is_walkthrough(path) or not isinstance(model.get("content"), dict):
        return
    nb = model["content"]
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in RUN_CELL_METADATA:
            cell.get("metadata", {}).pop(key, None)
    root = getattr(contents_manager, "root_dir", None)
    on_disk = Path(root) / path.strip("/") if root else None
    if on_disk is not None and on_disk.is_file():  # read directly: an async manager's get() cannot be awaited here
        try:
            nb["metadata"] = json.loads(on_disk.read_text(encoding="utf-8"))["metadata"]
        except (OSError, ValueError, KeyError, TypeError):  # unreadable on disk: save the learner's metadata
            pass


def kernel_language_info() -> dict:
    """The ``language_info`` an IPython kernel of this interpreter reports (the venv's ``python3`` kernel)."""
    import copy

    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(IPythonKernel.language_info)


def _contents_manager_base():
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    return AsyncLargeFileManager


class CourseContentsManager(_contents_manager_base()):
    """jupyter_server's default contents manager, whose Python notebooks carry their kernel's ``language_info``."""

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # jupyter_server names them so
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        nb = model.get("content") if model.get("type") == "notebook" else None
        if isinstance(nb, dict):
            meta = nb.setdefault("metadata", {})
            language = meta.get("kernelspec", {}).get("language") or meta.get("language_info", {}).get("name")
            if language in (None, "python"):
                meta["language_info"] = kernel_language_info()
        return model

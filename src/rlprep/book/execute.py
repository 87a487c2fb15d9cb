"""Run the walkthrough notebooks for the site, once per content hash.

The cache key is the notebook's cells (type, id, source), the profile, this package's widget stand-in and the
question bank and records the notebooks render: a notebook edit re-runs only that notebook, a bank or record edit
re-runs them all, and a rebuild with nothing changed executes nothing. Executed copies live in
``<cache>/<stem>-<key>.ipynb``; a run that fails leaves no cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from rlprep.errors import RlprepError

SETUP_CELL_ID = "book-static-widgets"
SETUP_SOURCE = "from rlprep.book.static_widgets import install\ninstall()"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "*An interactive widget: open this notebook in JupyterLab (`make lab`) to use it.*"


@dataclass(frozen=True)
class Executed:
    path: Path
    """The executed copy in the cache."""
    cached: bool
    """True when it came from the cache (nothing ran)."""
    seconds: float
    """Execution time (0 for a cache hit)."""


def _data_digest() -> bytes:
    """The text a notebook renders from data rather than from its cells: the question bank (``render_spoken`` and
    ``render_section_extras``) and the run records (``rlprep.records.show``). A bank or record edit re-runs the book."""
    from rlprep.interview.bank import default_bank_dir
    from rlprep.records import records_dir

    digest = hashlib.sha256()
    folders = [default_bank_dir()]
    try:
        folders.append(records_dir())
    except RlprepError:  # no course checkout: no records to depend on
        pass
    for folder in folders:
        for path in sorted(Path(folder).glob("*")):
            if path.suffix in (".yaml", ".json"):
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def cache_key(notebook: Path, profile: str) -> str:
    """sha256 (16 hex) of the notebook's cells, the profile, the widget stand-in's source and the bank and records
    the notebook renders (:func:`_data_digest`)."""
    nb = nbformat.read(notebook, as_version=4)
    cells = [[c.cell_type, c.get("id"), c.source] for c in nb.cells]
    stand_in = (Path(__file__).parent / "static_widgets.py").read_bytes()
    digest = hashlib.sha256(json.dumps([cells, profile], ensure_ascii=False).encode() + stand_in + _data_digest())
    return digest.hexdigest()[:16]


def replace_widget_outputs(nb) -> int:
    """Swap every widget view (an empty box without a kernel) for a note; returns how many were swapped."""
    swapped = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for i, out in enumerate(cell.outputs):
            if WIDGET_VIEW in out.get("data", {}):
                cell.outputs[i] = nbformat.v4.new_output("display_data", data={"text/markdown": WIDGET_NOTE})
                swapped += 1
    return swapped


def local_kernel_manager_class():
    """A kernel manager class whose kernels talk over IPC sockets (Unix domain sockets) where the platform has them:
    a kernel on TCP without CurveZMQ keys logs "Kernel is running over TCP without encryption" on every start (one
    warning per notebook of a book build), and nothing here needs a kernel reachable over the network. The sockets'
    path prefix is short and unique (a Unix socket path is limited to ~107 bytes, a checkout's runtime dir may not be);
    jupyter_client removes them when the kernel shuts down. NotebookClient owns a manager it creates from this class,
    so it shuts the kernel down when it is done."""
    import uuid

    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    if os.name != "posix":
        return AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        @default("transport")
        def _transport_default(self):
            return "ipc"

        @default("ip")
        def _ip_default(self):
            return os.path.join(tempfile.gettempdir(), f"rlprep-ipc-{uuid.uuid4().hex[:12]}")

    return IPCKernelManager


def _run(nb, cwd: Path, profile: str, timeout: int, src: Path) -> None:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP_SOURCE, id=SETUP_CELL_ID))
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="rlprep-book-home-") as home:
        from rlprep.lab_env import kernel_threads

        # the kernels' torch threads as in JupyterLab (rlprep.lab_env): two threads on a busy 2-core machine spin
        os.environ.setdefault("OMP_NUM_THREADS", str(kernel_threads()))
        os.environ.update(RLPREP_PROFILE=profile, RLPREP_HOME=home, MPLBACKEND="module://matplotlib_inline.backend_inline",
                          PYTHONPATH=os.pathsep.join(p for p in [str(src), saved.get("PYTHONPATH", "")] if p))
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", kernel_manager_class=local_kernel_manager_class(),
                           resources={"metadata": {"path": str(cwd)}}).execute()
        except CellExecutionError as err:
            raise RlprepError(f"{cwd.name}/{nb.metadata.get('rlprep_book_name', '?')} failed in the {profile} profile: "
                              f"{str(err).strip().splitlines()[-1][:300]}",
                              "run the notebook in JupyterLab (make lab) to see the failing cell, fix it, then rebuild") from None
        finally:
            os.environ.clear()
            os.environ.update(saved)
    assert nb.cells[0].get("id") == SETUP_CELL_ID
    del nb.cells[0]


def execute_cached(notebook: Path, profile: str, cache: Path, *, timeout: int = 1800, refresh: bool = False) -> Executed:
    """The executed notebook for ``profile``: from ``cache`` when its content hash is there, else run and stored.
    ``refresh`` always runs it (and stores it): the notebook tests do, so ``make book`` after ``make test`` reuses them."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"{notebook.stem}-{profile}-{cache_key(notebook, profile)}.ipynb"
    if target.is_file() and not refresh:
        return Executed(target, True, 0.0)
    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["rlprep_book_name"] = notebook.name
    start = time.perf_counter()
    print(f"book: executing {notebook.name} ({profile} profile)", file=sys.stderr, flush=True)
    _run(nb, notebook.parent, profile, timeout, Path(__file__).resolve().parents[2])
    del nb.metadata["rlprep_book_name"]
    replace_widget_outputs(nb)
    for stale in cache.glob(f"{notebook.stem}-{profile}-*.ipynb"):
        stale.unlink()
    tmp = target.with_suffix(".tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, target)
    return Executed(target, False, time.perf_counter() - start)

"""The environment ``rlprep lab`` gives JupyterLab, and so every kernel and terminal it starts.

Torch threads: a notebook kernel gets the thread count the test suite runs with on a small machine (one torch thread
on 2 cores; ``OMP_NUM_THREADS``), unless the learner set ``OMP_NUM_THREADS`` already. The course's models are tiny
(0.25M-0.6M parameters on a CPU), so a second thread gains little when a core is free, and costs a great deal when it
is not: OpenMP threads wait for each other at every operation, and on 2 cores shared with the browser, the server
and anything else, one of them is often descheduled. Measured on this project's 2-core machine under load (issue 38;
``python -m rlprep.bench.first_plot``): notebook 06's first plot, its arithmetic warm start built in the kernel, took
428.8 s with two threads and 48.3 s with one; 100 SFT steps took 171-227 s against 10-16 s.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask, which a container's limit shows up in)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def kernel_threads(cores: int | None = None) -> int:
    """Torch threads for a notebook kernel: 1 on up to 2 cores (measured, see the module docstring); on a larger
    machine half its cores, at most 4 (not measured here: it leaves cores to the browser and the server)."""
    cores = usable_cores() if cores is None else cores
    return 1 if cores <= 2 else min(4, cores // 2)


def kernel_environment(base) -> dict[str, str]:
    """``base`` (an environment mapping) with what learner mode adds: the inline matplotlib backend, this
    interpreter's scripts first on PATH (``rlprep grade`` in JupyterLab's terminal without activating the venv)
    and ``OMP_NUM_THREADS`` from :func:`kernel_threads` unless already set."""
    env = dict(base)
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    env.setdefault("OMP_NUM_THREADS", str(kernel_threads()))
    scripts = str(Path(sys.executable).parent)
    if env.get("PATH", "").split(os.pathsep)[0] != scripts:
        env["PATH"] = os.pathsep.join(p for p in [scripts, env.get("PATH", "")] if p)
    return env


def use_kernel_threads() -> int:
    """Give this process's torch the threads a notebook kernel gets (``OMP_NUM_THREADS`` when set, else
    :func:`kernel_threads`), so a warm-start build outside a notebook (``rlprep models build``, ``make lab``) takes
    what it takes inside one. Returns the count."""
    import torch

    wanted = os.environ.get("OMP_NUM_THREADS", "")
    threads = int(wanted) if wanted.isdigit() and int(wanted) > 0 else kernel_threads()
    torch.set_num_threads(threads)
    return threads

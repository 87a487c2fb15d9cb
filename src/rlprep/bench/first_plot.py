"""The ``first_plot`` section: how long a learner waits, after ``make lab``, for the first figure of lab 1 (and for
its training cell's figure) and for notebook 06's first figure (issue 38: the target is 60 s in the smoke profile
on 2 cores).

Each notebook runs in a fresh kernel started with the environment ``rlprep lab`` gives its kernels
(:func:`rlprep.lab_env.kernel_environment`: one torch thread on 2 cores), cell by cell in order, until the cell asked
for (default: the first that shows a figure, ``image/png``; an ``interact`` slider draws its default figure, as the
book's does, :mod:`rlprep.book.static_widgets`). A lab runs as a learner who has answered it: its answer cells hold
the reference functions. The clock starts before the kernel does. The section gives a fresh checkpoint cache what
``make lab`` builds (:func:`rlprep.course_builds.build_course_starts`, timed too), so a first plot that still waited
on a build would show it: ``built`` lists the cells that printed a build notice.

    python -m rlprep.bench.first_plot --profile smoke     # all three, a fresh cache under /tmp
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

LAB01 = "labs/lab01_gae/lab01_gae.ipynb"
NB06 = "notebooks/06_grpo_dapo.ipynb"
TIMED = (("lab01 first figure", LAB01, None), ("lab01 training figure", LAB01, "ppo-lambda"),
         ("notebook 06 first figure", NB06, None))
"""(label, notebook, cell id to stop after or None for the first figure): what the section and the test time."""
TARGET_S = 60.0
"""Issue 38's target for each, in the smoke profile on 2 cores, from the end of ``make lab``."""
BUILD_NOTICE = "(a one-time build"
"""Words of :func:`rlprep.tinyworld.checkpoints.build_notice`: a cell that printed them waited on a build."""
_PROBE = ("import resource as _r, torch as _t; _u = _r.getrusage(_r.RUSAGE_SELF); "
          "print('cpu_s', _u.ru_utime + _u.ru_stime); print('threads', _t.get_num_threads())")


def learner_notebook(path: Path):
    """``path`` as a learner runs it: a lab's answer cells filled with the reference functions (its grading cell
    dropped), a walkthrough as it is; the book's widget stand-in installed first."""
    import nbformat

    from rlprep.book.execute import SETUP_CELL_ID, SETUP_SOURCE
    from rlprep.grading.authoring import reference_source

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        ref = cell.get("metadata", {}).get("rlprep", {}).get("reference")
        if cell.cell_type == "code" and ref:
            cell.source = reference_source(ref)
    nb.cells = [c for c in nb.cells if "grade_here()" not in c.source]
    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP_SOURCE, id=SETUP_CELL_ID))
    return nb


def _has_figure(cell) -> bool:
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def _text(cell) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def time_to_first_plot(path: Path, profile: str, *, until: str | None = None, env: dict[str, str] | None = None,
                       timeout: int = 900) -> dict:
    """Run ``path`` (a lab or a walkthrough) in a fresh kernel until its first figure (or the end of cell ``until``,
    which must draw one).

    Returns ``{"seconds", "kernel_s", "cell", "cells_run", "cpu_s", "threads", "built"}``: wall seconds from before
    the kernel starts to the end of that cell, the kernel's start alone, the cell's id, how many cells ran, the
    kernel's CPU seconds by then, its torch threads, and the cells that printed a build notice. ``env`` is the
    kernel's environment (default: :func:`rlprep.lab_env.kernel_environment` of this process's). Raises
    :class:`RuntimeError` when a cell fails or no cell draws a figure.
    """
    import nbformat
    from nbclient import NotebookClient

    from rlprep.book.execute import local_kernel_manager_class
    from rlprep.lab_env import kernel_environment

    env = dict(env) if env is not None else kernel_environment(os.environ)
    env["RLPREP_PROFILE"] = profile
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # figures as outputs, as in JupyterLab
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [src, env.get("PYTHONPATH", "")] if p)
    nb = learner_notebook(path)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", kernel_manager_class=local_kernel_manager_class(),
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel(env=env):
        kernel_s = time.perf_counter() - start
        built, found, run = [], None, 0
        for index, cell in enumerate(list(nb.cells)):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            run += 1
            if BUILD_NOTICE in _text(cell):
                built.append(cell.get("id"))
            if (until is None and _has_figure(cell)) or cell.get("id") == until:
                found = cell.get("id")
                break
        seconds = time.perf_counter() - start
        if found is None or not _has_figure(next(c for c in nb.cells if c.get("id") == found)):
            raise RuntimeError(f"{path.name}: " + (f"cell {until} drew no figure" if until else "no cell drew a figure"))
        probe = nbformat.v4.new_code_cell(_PROBE)
        nb.cells.append(probe)
        client.execute_cell(probe, len(nb.cells) - 1)
    values = dict(line.split() for line in _text(probe).splitlines() if line.strip())
    return {"seconds": round(seconds, 1), "kernel_s": round(kernel_s, 1), "cell": found, "cells_run": run,
            "cpu_s": round(float(values["cpu_s"]), 1), "threads": int(values["threads"]), "built": built}


def bench_first_plot(root: Path, profile: str = "smoke", cache: Path | None = None) -> dict:
    """The section: in a fresh checkpoint cache (``cache``, default a new temporary folder), ``make lab``'s build
    step (timed), then each of :data:`TIMED` in a fresh kernel. ``{"profile", "build_s", "timed": {label: ...}}``."""
    from rlprep.course_builds import build_course_starts

    saved = {k: os.environ.get(k) for k in ("RLPREP_CACHE", "RLPREP_HOME")}
    with tempfile.TemporaryDirectory(prefix="rlprep-first-plot-") as tmp:
        os.environ["RLPREP_CACHE"] = str(cache or Path(tmp) / "cache")
        os.environ["RLPREP_HOME"] = str(Path(tmp) / "home")
        try:
            start = time.perf_counter()
            build_course_starts(profile)
            out = {"profile": profile, "build_s": round(time.perf_counter() - start, 1), "timed": {}}
            for label, name, until in TIMED:
                out["timed"][label] = dict(time_to_first_plot(root / name, profile, until=until), notebook=name)
                print(f"first plot: {label}: {out['timed'][label]['seconds']} s", file=sys.stderr, flush=True)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    return out


def render(r: dict, report: dict) -> list[str]:
    """The section's markdown (``report`` is the whole report, unused: the renderers' signature)."""
    lines = ["## Time to the first plot after `make lab`", ""]
    if "skipped" in r or "error" in r:
        return lines + [f"{'skipped' if 'skipped' in r else 'error'}: {r.get('skipped') or r.get('error')}", ""]
    lines += [f"Profile `{r['profile']}`, a fresh checkpoint cache. `make lab`'s build step (`rlprep models build "
              f"--task all`) took {r['build_s']:.0f} s; then each notebook ran in a fresh kernel with learner "
              f"mode's environment, cell by cell, until the figure (target: {TARGET_S:.0f} s each on 2 cores).", "",
              "| figure | cell | seconds from kernel start | kernel CPU s | torch threads | waited on a build |",
              "|---|---|---|---|---|---|"]
    for label, x in r["timed"].items():
        lines.append(f"| {label} (`{x['notebook']}`) | `{x['cell']}` | {x['seconds']:.1f} | {x['cpu_s']:.1f} "
                     f"| {x['threads']} | {', '.join(x['built']) or 'no'} |")
    return lines + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--cache", default=None, help="RLPREP_CACHE to use (default: a fresh one under /tmp)")
    args = parser.parse_args(argv)
    from rlprep.paths import repo_root

    print(json.dumps(bench_first_plot(repo_root(), args.profile, Path(args.cache) if args.cache else None), indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

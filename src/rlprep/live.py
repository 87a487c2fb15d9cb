"""Progress for long training runs: a bar, a live plot in notebooks, and a stop button that loses nothing.

Every trainer in :mod:`rlprep.trainers` drives its steps through :func:`run_steps`:

- a ``tqdm.auto`` bar (a widget in JupyterLab, text in a terminal) showing the latest metrics;
- in a notebook, a matplotlib figure of chosen metrics redrawn in place every ``plot_every`` steps
  through an IPython display handle (in a terminal: just the bar);
- **interrupt safety**: a ``KeyboardInterrupt`` (the notebook's stop button, or Ctrl-C) ends the run
  cleanly after the step in flight. The model keeps its trained weights, a checkpoint is written
  atomically (temp file, then ``os.replace``), the plot is saved, and the history is returned with
  ``history.interrupted = True``.

The history is a :class:`History`: a list of flat metric dicts (``{"step": 3, "reward/mean": 0.41, ...}``).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from rlprep.metrics import unit as metric_unit

def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temp file in the same folder and ``os.replace``.

    A crash or a second interrupt mid-write leaves the previous file intact, never half of one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


class History(list):
    """The metrics of one run: a list of flat dicts, one per logged step.

    Attributes:
        interrupted: True when the run was stopped by a KeyboardInterrupt.
        stop_signum: the signal that stopped it (2 for Ctrl-C, 15 for SIGTERM, 1 for SIGHUP), else None.
        checkpoint: path of the last checkpoint written, if any.
        meta: free-form run facts (config, wall time) saved with :meth:`to_json`.
    """

    def __init__(self, rows: Iterable[dict] = (), *, meta: dict | None = None):
        super().__init__(dict(r) for r in rows)
        self.interrupted = False
        self.stop_signum: int | None = None
        self.checkpoint: Path | None = None
        self.meta: dict = dict(meta or {})

    def keys(self) -> list[str]:
        """Every metric name that appears in any row, in first-seen order."""
        seen: dict[str, None] = {}
        for row in self:
            for key in row:
                seen.setdefault(key, None)
        return list(seen)

    def series(self, key: str) -> tuple[list[float], list[float]]:
        """``(steps, values)`` of one metric, skipping rows where it is missing or not finite."""
        steps, values = [], []
        for i, row in enumerate(self):
            value = row.get(key)
            if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            steps.append(row.get("step", i))
            values.append(float(value))
        return steps, values

    def last(self, key: str, default: float = float("nan")) -> float:
        """The latest finite value of ``key``."""
        _, values = self.series(key)
        return values[-1] if values else default

    def plot(self, keys: Sequence[str] | None = None, *, fig=None, title: str | None = None, ncols: int = 3):
        """One small panel per metric against step, with titles, axis labels and units. Returns the figure."""
        import matplotlib.pyplot as plt

        keys = [k for k in (keys or self.keys()) if k != "step"]
        if not keys:
            raise ValueError("History.plot needs at least one metric key; pass e.g. keys=['reward/mean']")
        ncols = max(1, min(ncols, len(keys)))
        nrows = math.ceil(len(keys) / ncols)
        if fig is None:
            fig = plt.figure(figsize=(4.0 * ncols, 2.8 * nrows))
        fig.clear()
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, key in zip(axes.flat, keys):
            steps, values = self.series(key)
            ax.plot(steps, values, marker="." if len(values) < 30 else None)
            ax.set_title(key)
            ax.set_xlabel("step")
            unit = metric_unit(key)  # from the one table of names and units, docs/metrics.md
            ax.set_ylabel(f"{key.split('/', 1)[-1]}" + (f" ({unit})" if unit else ""))
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(keys):]:
            ax.set_visible(False)
        if title:
            fig.suptitle(title + (" (interrupted)" if self.interrupted else ""))
        fig.tight_layout()
        return fig

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        """The history as JSON text (``{"rows": [...], "interrupted": ..., "meta": {...}}``); written atomically
        to ``path`` when given."""
        text = json.dumps({"rows": list(self), "interrupted": self.interrupted, "meta": self.meta},
                          indent=1, default=str)
        if path is not None:
            atomic_write_bytes(path, text.encode())
        return text

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike) -> "History":
        """Inverse of :meth:`to_json` (accepts the text or a path to it)."""
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text()
        data = json.loads(text)
        history = cls(data["rows"], meta=data.get("meta"))
        history.interrupted = bool(data.get("interrupted", False))
        return history


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where a live plot makes sense)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def save_checkpoint(model, path: str | os.PathLike, extra: dict | None = None) -> Path:
    """Save ``model.state_dict()`` (plus ``extra``) atomically with ``torch.save``."""
    import io

    import torch

    buffer = io.BytesIO()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save({"model": state, **(extra or {})}, buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def _format_postfix(metrics: dict, keys: Sequence[str]) -> dict[str, str]:
    out = {}
    for key in keys:
        value = metrics.get(key)
        if isinstance(value, (int, float)):
            out[key.split("/", 1)[-1]] = f"{value:.3g}"
    return out


def run_steps(
    step_fn: Callable[[int], dict[str, Any]],
    n_steps: int,
    *,
    model=None,
    run_dir: str | os.PathLike | None = None,
    plot_keys: Sequence[str] = (),
    plot_every: int = 10,
    callbacks: Sequence[Callable[[int, dict, History], None]] = (),
    desc: str = "train",
    live: bool | None = None,
    save_on_finish: bool = True,
    history: History | None = None,
    start_step: int | None = None,
) -> History:
    """Run ``step_fn(step)`` for ``step = 0 .. n_steps-1`` with a progress bar, a live plot and interrupt safety.

    Args:
        step_fn: does one optimisation step and returns a flat metric dict.
        n_steps: number of steps.
        model: the torch module to checkpoint (on interrupt, and at the end when ``save_on_finish``).
        run_dir: folder for ``checkpoint.pt``, ``history.json`` and ``plot.png``; None keeps nothing on disk
            except on interrupt, where it falls back to ``<RLPREP_HOME>/runs/<desc>``.
        plot_keys: metrics drawn on the live plot and in ``plot.png``.
        plot_every: redraw the live plot every this many steps.
        callbacks: ``cb(step, metrics, history)`` after every step; raising KeyboardInterrupt stops the run.
        live: force the live plot on or off (default: on in a notebook only).
        history: an existing history to append to (to resume a run).
        start_step: number of the first step (default: ``len(history)``); ``step_fn`` receives it.

    Returns:
        The :class:`History`; ``history.interrupted`` tells whether the run was stopped early.
    """
    from tqdm.auto import tqdm

    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    if plot_every < 1:
        raise ValueError(f"plot_every must be >= 1, got {plot_every}")
    history = history if history is not None else History()
    live = in_notebook() if live is None else live
    handle, fig = None, None
    drawn_rows = -1  # len(history) at the last redraw
    bar = tqdm(total=n_steps, desc=desc, leave=True, disable=os.environ.get("RLPREP_NO_BAR") == "1")

    def redraw() -> None:
        nonlocal handle, fig, drawn_rows
        if not live or not plot_keys or not history or drawn_rows == len(history):
            return
        drawn_rows = len(history)
        import matplotlib.pyplot as plt
        from IPython.display import display

        fig = history.plot(plot_keys, fig=fig, title=desc)
        if handle is None:
            handle = display(fig, display_id=True)
            plt.close(fig)  # the handle owns the drawing; avoid a second copy at cell end
        else:
            handle.update(fig)

    try:
        start = len(history) if start_step is None else start_step
        for step in range(start, start + n_steps):
            metrics = {"step": step, **step_fn(step)}
            history.append(metrics)
            bar.update(1)
            bar.set_postfix(_format_postfix(metrics, plot_keys[:4]), refresh=False)
            for callback in callbacks:
                callback(step, metrics, history)
            if (step + 1) % plot_every == 0:
                redraw()
    except KeyboardInterrupt as stop:
        history.interrupted = True
        history.stop_signum = int(getattr(stop, "signum", 2))  # rlprep.interrupts.Interrupted; else Ctrl-C
        bar.set_description(f"{desc} (interrupted: weights kept)")
    finally:
        bar.close()
    redraw()
    if history.interrupted or (save_on_finish and run_dir is not None):
        saved = _save_run(history, model, run_dir, plot_keys, desc)
        if history.interrupted:
            print(f"{desc}: interrupted after {len(history)} steps; checkpoint, history and plot saved in {saved}")
    return history


def _save_run(history: History, model, run_dir, plot_keys, desc) -> Path:
    """Checkpoint + history + plot, each written atomically; return the folder."""
    if run_dir is None:
        from rlprep.paths import data_dir

        run_dir = data_dir() / "runs" / desc.replace("/", "_").replace(" ", "_")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if model is not None:
        history.checkpoint = save_checkpoint(model, run_dir / "checkpoint.pt",
                                             extra={"steps_done": len(history), "interrupted": history.interrupted})
    history.meta["run_dir"] = str(run_dir)
    history.to_json(run_dir / "history.json")
    if plot_keys and history:
        import io

        import matplotlib.pyplot as plt

        fig = history.plot(plot_keys, title=desc)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90)
        plt.close(fig)
        atomic_write_bytes(run_dir / "plot.png", buffer.getvalue())
    return run_dir

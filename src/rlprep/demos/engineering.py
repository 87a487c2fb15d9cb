"""Engineering demos for notebook 10 (G07, G11, G12, G17): a memory calculator widget and a run dashboard.

The arithmetic lives in :mod:`rlprep.memory` (ZeRO, arXiv 1910.02054; activations, arXiv 2205.05198); this module
only lays it out as a table, a widget and plots.
"""

from __future__ import annotations

import math
import textwrap

from rlprep.memory import GB, training_memory

PANELS: tuple[tuple[str, str, str], ...] = (
    ("reward/mean", "reward (fraction correct)",
     "rises then flattens; a sudden jump with flat held-out accuracy = hacking or a verifier bug"),
    ("stats/kl_k3_token", "KL to reference (nats/token, k3)",
     "grows slowly; exponential growth = learning rate too high or KL term off"),
    ("stats/entropy", "entropy (nats/token)",
     "falls gently; a crash to 0 = collapse (no exploration), a sharp rise = the policy turning noisy (lr)"),
    ("stats/clipfrac_one_sided", "clip fraction",
     "small; a large or growing fraction = updates too large for the trust region"),
    ("stats/grad_norm", "grad norm (pre-clip)",
     "stable; spikes = instability, look at the batch that caused them"),
    ("stats/completion_len", "completion length (tokens)",
     "stable; steady shrink or growth to the cap = length hacking or collapse"),
)
"""The dashboard: (metric key of the trainers' History, panel title with unit, what a bad curve looks like)."""


def memory_rows(n_params: float, n_gpus: int = 8, weight_dtype: str = "bf16", optimizer: str = "adam",
                **activation_kw) -> list[dict[str, float]]:
    """Per-GPU memory (GB) for ZeRO stages 0-3, one dict per stage (keys: stage, weights, grads, optimizer,
    activations, total)."""
    rows = []
    for stage in (0, 1, 2, 3):
        m = training_memory(n_params, n_gpus=n_gpus, zero_stage=stage, weight_dtype=weight_dtype,
                            optimizer=optimizer, **activation_kw)
        rows.append({"stage": stage, **m.as_gb()})
    return rows


def format_memory_rows(rows: list[dict[str, float]]) -> str:
    """A fixed-width text table of :func:`memory_rows`."""
    head = f"{'ZeRO':>5} {'weights':>9} {'grads':>9} {'optimizer':>10} {'activations':>12} {'total GB':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['stage']:>5} {r['weights']:>9.1f} {r['grads']:>9.1f} {r['optimizer']:>10.1f} "
                     f"{r['activations']:>12.1f} {r['total']:>9.1f}")
    return "\n".join(lines)


def memory_widget(gpu_memory_gb: float = 80.0):
    """An ipywidgets calculator: parameters, dtype, optimizer, ZeRO stage, GPUs, checkpointing, s/b/h/L/heads.

    Shows the per-GPU breakdown as a stacked bar against ``gpu_memory_gb`` (80 GB = an A100/H100 80GB card).
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    def show(params_b, weight_dtype, optimizer, zero_stage, n_gpus, checkpointing, seq_len, micro_batch, hidden,
             n_layers, n_heads):
        m = training_memory(params_b * 1e9, n_gpus=n_gpus, zero_stage=zero_stage, weight_dtype=weight_dtype,
                            optimizer=optimizer, seq_len=seq_len, micro_batch=micro_batch, hidden=hidden,
                            n_layers=n_layers, n_heads=n_heads, checkpointing=checkpointing)
        gb = m.as_gb()
        fig, ax = plt.subplots(figsize=(7, 2.2))
        left = 0.0
        for key in ("weights", "grads", "optimizer", "activations"):
            ax.barh([0], [gb[key]], left=left, label=f"{key} {gb[key]:.1f}")
            left += gb[key]
        ax.axvline(gpu_memory_gb, color="k", ls="--", label=f"{gpu_memory_gb:.0f} GB card")
        ax.set_xlabel("memory per GPU (GB, 1 GB = 1e9 bytes)")
        ax.set_yticks([])
        fits = "fits" if gb["total"] <= gpu_memory_gb else "does NOT fit (OOM)"
        ax.set_title(f"{params_b:g}B params, ZeRO-{zero_stage}, {n_gpus} GPU(s): {gb['total']:.1f} GB per GPU, {fits}")
        ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.45))
        plt.show()
        per_param = (m.model_states / (params_b * 1e9)) if params_b else float("nan")
        print(f"model states: {m.model_states / GB:.1f} GB per GPU = {per_param:.2f} bytes/param per GPU")

    return w.interactive(
        show,
        params_b=w.FloatLogSlider(value=7, base=10, min=-1, max=3, step=0.05, description="params (B)"),
        weight_dtype=w.Dropdown(options=["bf16", "fp16", "fp32"], value="bf16", description="weights"),
        optimizer=w.Dropdown(options=["adam", "sgd_momentum", "sgd"], value="adam", description="optimizer"),
        zero_stage=w.IntSlider(value=0, min=0, max=3, description="ZeRO stage"),
        n_gpus=w.IntSlider(value=1, min=1, max=64, description="GPUs"),
        checkpointing=w.Checkbox(value=False, description="activation checkpointing"),
        seq_len=w.IntSlider(value=4096, min=0, max=32768, step=512, description="seq len"),
        micro_batch=w.IntSlider(value=1, min=1, max=16, description="micro-batch"),
        hidden=w.IntSlider(value=4096, min=256, max=16384, step=256, description="hidden"),
        n_layers=w.IntSlider(value=32, min=1, max=128, description="layers"),
        n_heads=w.IntSlider(value=32, min=1, max=128, description="heads"),
    )


def plot_dashboard(histories: dict, title: str, panels=PANELS, ncols: int = 3):
    """One panel per metric of ``panels``, one line per run in ``histories`` ({label: History}); returns the fig.

    Each panel's subtitle says what a bad curve looks like.
    """
    import matplotlib.pyplot as plt

    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (key, label, warning) in zip(axes.flat, panels):
        for name, history in histories.items():
            steps, values = history.series(key)
            ax.plot(steps, values, marker=".", label=name)
        ax.set_title(label + "\n" + textwrap.fill(f"warning: {warning}", 58), fontsize=8)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(label, fontsize=8)
        if "kl" in key:  # a blown-up run reaches 1e6 nats: a symlog axis keeps the healthy runs visible
            ax.set_yscale("symlog", linthresh=1e-2)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if len(histories) > 1:
        axes.flat[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def signature(history, keys=("reward/mean", "stats/kl_k3_token", "stats/entropy", "stats/clipfrac_one_sided", "stats/grad_norm",
                             "stats/completion_len"), tail: int = 3) -> dict[str, float]:
    """The mean of the last ``tail`` finite values of each key: a run's end state for a troubleshooting table."""
    out = {}
    for key in keys:
        _, values = history.series(key)
        out[key] = sum(values[-tail:]) / len(values[-tail:]) if values else float("nan")
    return out


class LengthProxyArithmetic:
    """Arithmetic whose *training* reward is a gameable proxy: 1.0 for any 3-digit answer, right or wrong.

    It stands in for a learned reward model with a length bias (longer answers look more thorough). ``verify``
    (the gold check used for held-out accuracy) stays exact match, so a run logs proxy reward (``reward/mean``)
    and gold accuracy (``eval/accuracy``) side by side: proxy up while gold goes down is reward hacking.
    """

    name = "arithmetic"

    def __init__(self):
        from rlprep.tinyworld import get_task

        self._task = get_task("arithmetic")

    def sample(self, *args, **kwargs):
        return self._task.sample(*args, **kwargs)

    def verify(self, prompt: str, completion: str) -> bool:
        return self._task.verify(prompt, completion)

    def reward(self, prompt: str, completion: str) -> float:
        text = completion.strip()
        return 1.0 if len(text) == 3 and text.isdigit() else 0.0

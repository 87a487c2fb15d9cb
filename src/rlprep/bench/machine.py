"""What the machine a benchmark runs on has: tool availability and the versions stamped on every report."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
from datetime import datetime, timezone


def have(module: str) -> bool:
    """Whether ``module`` can be imported (``sys.modules[module] = None`` hides it, as on a bare GPU image)."""
    return importlib.util.find_spec(module) is not None


def machine_info(device) -> dict:
    """Date, Python/torch/library versions, cores, threads, load and device: the report's first line."""
    import torch

    info = {"date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version(),
            "torch": torch.__version__, "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "device": str(device)}
    with contextlib.suppress(OSError):
        info["loadavg_1m_at_start"] = os.getloadavg()[0]
    from rlprep import prefix_sharing

    info["prefix_sharing"] = prefix_sharing.enabled()  # RLPREP_PREFIX_SHARING=0 measures our loops without it
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    for mod in ("transformers", "trl", "accelerate"):
        if have(mod):
            info[mod] = __import__(mod).__version__
    return info

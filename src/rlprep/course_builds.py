"""What a first run of the course's notebooks would otherwise build, built ahead: ``rlprep models build --task all``,
which ``make lab`` runs before JupyterLab starts (issue 38: the first plot of a lab or walkthrough within a minute of
``make lab`` in the smoke profile).

For one profile: the three SFT warm starts (arithmetic, reviews, multiturn), GRPO's warm start when the profile's
GRPO config stops the arithmetic SFT early (a cached variant; in smoke it is the full run), and the reference reward
model the PPO cells load (``load_reward_model``). Each is cached where its loader looks, so a notebook loads it in
seconds; each already cached is verified and skipped. Each build prints what it builds and shows a progress bar.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rlprep.profiles import Profile, get_profile


@dataclass(frozen=True)
class CourseBuild:
    """One thing the notebooks load, with its builder (a no-op when it is cached)."""

    name: str
    what: str
    build: Callable[[], object]
    path: Path
    """Where it is cached (a checkpoint folder or a reward model's file, under :func:`rlprep.paths.cache_dir`)."""


def _cache_files() -> set[Path]:
    from rlprep.paths import cache_dir

    root = cache_dir()
    return {p for p in list(root.glob("*")) + list(root.glob("checkpoints/*")) if not p.name.startswith(".")}


def course_builds(profile: Profile, seed: int = 0, force: bool = False) -> list[CourseBuild]:
    """What ``rlprep models build --task all`` builds for ``profile``, in order (``force``: rebuild the cached)."""
    from rlprep.tinyworld import TASKS
    from rlprep.tinyworld.checkpoints import checkpoint_dir, ensure_checkpoint

    items = [CourseBuild(task, f"{task} SFT warm start",
                         lambda task=task: ensure_checkpoint(task, profile, seed=seed, force=force),
                         checkpoint_dir(task, profile, seed)) for task in TASKS]
    if seed != 0:  # GRPO's start and the reward model are built from seed 0's warm starts
        return items
    from rlprep.tinyworld.warm_start import load_warm_start, warm_start_kwargs, warm_start_variant
    from rlprep.trainers.grpo import GRPOConfig
    from rlprep.trainers.reward_model import load_reward_model, reward_model_path

    kwargs = warm_start_kwargs(GRPOConfig.for_profile(profile))
    variant = warm_start_variant(profile, **kwargs)
    if variant is not None:
        items.append(CourseBuild("grpo-start", "GRPO warm start (the arithmetic SFT run stopped early: "
                                 + ", ".join(f"{k}={v}" for k, v in kwargs.items() if v is not None) + ")",
                                 lambda: load_warm_start(profile, **kwargs),
                                 checkpoint_dir("arithmetic", profile, 0, variant)))
    items.append(CourseBuild("reward-model", "reference reward model (reviews; the PPO cells' reward)",
                             lambda: load_reward_model(profile, retrain=force), reward_model_path(profile)))
    return items


def copy_course_builds(profile: Profile, source: Path, target: Path) -> list[Path]:
    """Copy what :func:`course_builds` lists for ``profile`` from the cache ``source`` into the cache ``target``
    (the same relative paths); returns the copied paths. What ``make lab`` leaves, without building it again: the
    first-plot test starts from it. Raises FileNotFoundError when ``source`` lacks one."""
    import os
    import shutil

    from rlprep.paths import cache_dir

    saved = os.environ.get("RLPREP_CACHE")
    os.environ["RLPREP_CACHE"] = str(source)
    try:
        root = cache_dir()
        relative = [item.path.relative_to(root) for item in course_builds(profile)]
    finally:
        if saved is None:
            os.environ.pop("RLPREP_CACHE", None)
        else:
            os.environ["RLPREP_CACHE"] = saved
    copied = []
    for rel in relative:
        src, dst = Path(source) / rel, Path(target) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
        copied.append(dst)
    return copied


def build_course_starts(profile: str | Profile | None = None, seed: int = 0, force: bool = False,
                        out=sys.stderr) -> list[dict]:
    """Build (or verify) everything :func:`course_builds` lists; returns ``[{"name", "built", "seconds"}]`` and
    prints a line per item (``[k/n] ...: cached`` or ``built in N s``) to ``out``."""
    from rlprep.lab_env import use_kernel_threads

    use_kernel_threads()
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    items = course_builds(p, seed, force)
    done = []
    for k, item in enumerate(items, 1):
        before, start = _cache_files(), time.perf_counter()
        print(f"[{k}/{len(items)}] {item.what} ({p.name} profile)...", file=out, flush=True)
        item.build()
        seconds = time.perf_counter() - start
        built = force or _cache_files() != before
        print(f"[{k}/{len(items)}] {item.name}: " + (f"built in {seconds:.0f} s" if built else "cached"), file=out,
              flush=True)
        done.append({"name": item.name, "built": built, "seconds": round(seconds, 1)})
    return done

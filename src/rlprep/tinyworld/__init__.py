"""The tiny world: a character tokenizer, a GPT-2 sized by profile, three tasks and their SFT warm starts.

    from rlprep.tinyworld import load_policy, build_tokenizer, get_task
    model, tokenizer = load_policy("arithmetic")          # built on first use, then cached
    task = get_task("arithmetic")
"""

from __future__ import annotations

from rlprep.tinyworld.tasks import TASKS, check_task, get_task
from rlprep.tinyworld.tokenizer import build_tokenizer

__all__ = ["TASKS", "build_tokenizer", "get_task", "load_policy"]


def load_policy(task: str, profile=None, model: str | None = None, *, seed: int = 0):
    """``(model, tokenizer)``: the SFT warm-started GPT-2 for ``task``, in eval mode, on the profile's device.

    Args:
        task: "arithmetic", "reviews" or "multiturn".
        profile: a :class:`~rlprep.profiles.Profile`, its name, or None (``RLPREP_PROFILE``, else auto).
        model: instead of the tiny policy, load this checkpoint (a local directory or a hub id such as
            "gpt2"; offline it must already be cached). It is returned as is, without SFT.
        seed: which deterministic warm start (different seeds = different inits and data order).

    The tiny policy is built on first use (SFT with a progress bar, seconds to minutes by profile) and
    cached under ``rlprep.paths.cache_dir()``; a corrupted cache entry is rebuilt with a warning.
    The tokenizer pads on the left.
    """
    from rlprep.profiles import Profile, get_profile
    from rlprep.tinyworld import checkpoints

    name = check_task(task)
    resolved = profile if isinstance(profile, Profile) else get_profile(profile)
    if model is not None:
        return checkpoints.load_external(model, device=resolved.device)
    path = checkpoints.ensure_checkpoint(name, resolved, seed=seed)
    return checkpoints.load_checkpoint(path, device=resolved.device)

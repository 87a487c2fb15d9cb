"""Run profiles: how big the model is and how long things train, in one readable place.

``smoke`` is for CI (seconds), ``cpu`` for a laptop (minutes), ``gpu`` for real targets.
The profile is picked automatically (CUDA present -> gpu, else cpu); ``RLPREP_PROFILE`` overrides.
Trainers derive their own sizes from the profile: each run config is a dataclass on :class:`ProfileConfig`, whose
``for_profile`` fills in the config's ``budget`` for the profile.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from rlprep.errors import RlprepError


@dataclass(frozen=True)
class Profile:
    """Sizes for one profile. Every field is a plain number so a reader sees the whole budget."""

    name: str
    """smoke, cpu or gpu."""
    n_layer: int
    """GPT-2 transformer blocks."""
    n_embd: int
    """Hidden size."""
    n_head: int
    """Attention heads (n_embd must divide evenly)."""
    n_positions: int
    """Longest sequence, prompt plus completion, in tokens."""
    sft_steps: int
    """Optimizer steps of the supervised warm start."""
    sft_batch: int
    """Sequences per SFT step."""
    sft_lr: float
    """Peak AdamW learning rate of the warm start."""
    device: str
    """torch device the profile trains on."""
    scale: float
    """Multiplier that trainers apply to their step and batch budgets (1.0 = the cpu profile)."""


PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", n_layer=2, n_embd=96, n_head=4, n_positions=128,
                     sft_steps=400, sft_batch=128, sft_lr=5e-3, device="cpu", scale=0.1),
    "cpu": Profile("cpu", n_layer=3, n_embd=128, n_head=4, n_positions=128,
                   sft_steps=700, sft_batch=256, sft_lr=5e-3, device="cpu", scale=1.0),
    "gpu": Profile("gpu", n_layer=6, n_embd=384, n_head=6, n_positions=128,
                   sft_steps=1500, sft_batch=256, sft_lr=1e-3, device="cuda", scale=4.0),
}


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return False
    return torch.cuda.is_available()


def get_profile(name: str | None = None) -> Profile:
    """Return the named profile, else ``$RLPREP_PROFILE``, else gpu when CUDA is present, else cpu."""
    chosen = name or os.environ.get("RLPREP_PROFILE") or ("gpu" if _cuda_available() else "cpu")
    chosen = chosen.strip().lower()
    if chosen not in PROFILES:
        raise RlprepError(
            f"unknown profile {chosen!r}",
            f"use one of {', '.join(PROFILES)} (e.g. RLPREP_PROFILE=cpu, or --profile smoke)",
        )
    profile = PROFILES[chosen]
    if profile.device == "cuda" and not _cuda_available():
        raise RlprepError(
            "the gpu profile was asked for but torch sees no CUDA device",
            "run on a machine with a GPU and a CUDA build of torch, or use RLPREP_PROFILE=cpu",
        )
    return profile


class ProfileConfig:
    """Base of the run-config dataclasses (trainers, demos): a budget per profile and validation on creation.

    A config writes two methods: ``budget(profile) -> dict`` (its field values for that profile) and
    ``checks() -> [(ok, message)]`` (``__post_init__`` raises ``ValueError("<Config>: <message>")`` for the first
    that fails). ``Config.for_profile("cpu", lr=3e-4)`` is the cpu budget with ``lr`` overridden.
    """

    def __post_init__(self) -> None:
        for ok, message in self.checks():
            if not ok:
                raise ValueError(f"{type(self).__name__}: {message}")

    def checks(self) -> list[tuple[bool, str]]:
        """(holds, what must hold) for every rule on the fields."""
        return []

    @classmethod
    def budget(cls, profile: Profile) -> dict:
        """Field values for ``profile`` (the ones that differ from the defaults)."""
        return {}

    @classmethod
    def for_profile(cls, profile: str | Profile | None = None, **overrides):
        """The config for ``profile`` (a name, a Profile, or None for :func:`get_profile`), ``overrides`` last."""
        p = profile if isinstance(profile, Profile) else get_profile(profile)
        values = {"profile": p.name} if "profile" in {f.name for f in dataclasses.fields(cls)} else {}
        values.update(cls.budget(p))
        values.update(overrides)
        return cls(**values)

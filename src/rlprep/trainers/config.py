"""What every trainer's config holds alike: the profile, the seed, the device, where a run is saved, the live plot.

``DPOConfig``, ``PPOConfig``, ``RewardModelConfig`` and ``GRPOConfig`` add their own knobs to :class:`TrainerConfig`;
``for_profile`` and validation come from :class:`rlprep.profiles.ProfileConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlprep.profiles import ProfileConfig


@dataclass
class TrainerConfig(ProfileConfig):
    """The fields every trainer shares (a trainer's config lists its own after these)."""

    profile: str = "smoke"
    """Profile the run is sized for: the SFT policy (and reward model) it loads, and the budget (``rlprep.profiles``)."""
    seed: int = 0
    """Seeds data order, sampling and torch."""
    device: str | None = None
    """torch device; None takes the profile's."""
    run_dir: str | None = None
    """Folder for checkpoint/history/plot; None writes only on interrupt."""
    plot_every: int = 10
    """Redraw the live plot every this many steps."""

    def checks(self) -> list[tuple[bool, str]]:
        return [(self.plot_every >= 1, f"plot_every must be >= 1, got {self.plot_every}")]

"""``rlprep profile``: which profile is active, and why; ``--profile NAME`` shows any profile."""

from __future__ import annotations

import argparse
import dataclasses
import os


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="show this profile (smoke, cpu or gpu) instead of the active one")


def run(args: argparse.Namespace) -> int:
    from rlprep.profiles import PROFILES, _cuda_available, get_profile

    if args.profile:  # showing a profile is not running it: the gpu profile can be read on a machine without CUDA
        profile = PROFILES.get(args.profile.strip().lower()) or get_profile(args.profile)  # unknown: its error/fix
        print(f"profile: {profile.name} (shown with --profile; the active one is what 'rlprep profile' shows)")
    else:
        profile = get_profile()
        source = "RLPREP_PROFILE" if os.environ.get("RLPREP_PROFILE") else "auto: " + (
            "CUDA found" if profile.name == "gpu" else "no CUDA device")
        print(f"profile: {profile.name} (chosen by {source})")
    for field in dataclasses.fields(profile):
        if field.name != "name":
            print(f"  {field.name:<12} {getattr(profile, field.name)}")
    if profile.device == "cuda" and not _cuda_available():
        print("note: torch sees no CUDA device here, so this profile cannot train on this machine "
              "(RLPREP_PROFILE=gpu would stop with an error)")
    return 0

"""``rlprep profile``: which profile is active, and why."""

from __future__ import annotations

import argparse
import dataclasses
import os


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="show this profile instead of the active one")


def run(args: argparse.Namespace) -> int:
    from rlprep.profiles import get_profile

    profile = get_profile(args.profile)
    source = "--profile" if args.profile else ("RLPREP_PROFILE" if os.environ.get("RLPREP_PROFILE") else "auto")
    print(f"profile: {profile.name} (chosen by {source})")
    for field in dataclasses.fields(profile):
        if field.name != "name":
            print(f"  {field.name:<12} {getattr(profile, field.name)}")
    return 0

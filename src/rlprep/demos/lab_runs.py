"""What every lab demo that trains does alike: say what the profile will show, and record the cpu run.

``profile_note`` is printed before a run trains. The smoke profile (≈0.25M parameters, seconds) is too small to learn: its curves show that the code runs and
which way the mechanics point, not the result. The cpu profile is the run the lab's text quotes: ``python -m rlprep.demos.<module> --record`` (``record_cli``)
runs it with the reference functions and ``save_record`` writes ``records/<name>.json`` (``rlprep.records``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from rlprep.profiles import Profile, get_profile

SAYS = {
    "smoke": "smoke profile: a tiny model for seconds, too small to learn; the curves show the mechanics only, "
             "not the result the text quotes (RLPREP_PROFILE=cpu runs that, in minutes)",
    "cpu": "cpu profile: the run the text quotes (minutes on 2 cores); one seed, so expect figures close to the "
           "recorded ones, not equal",
    "gpu": "gpu profile: a larger model and budget than the cpu run the text quotes; expect the same direction, "
           "other figures",
}


def profile_note(run: str, profile: str | Profile | None = None, *, smoke: str | None = None,
                 cpu: str | None = None, gpu: str | None = None) -> str:
    """``"<run>. <profile> profile: what it will show."``, printed by a demo or a notebook cell before it trains.

    ``smoke`` replaces the smoke profile's sentence for a run it does not fit (a toy model that learns in seconds,
    only fewer steps or seeds than the cpu run): what that run can show in smoke. ``cpu`` and ``gpu`` do the same
    for a run the default sentences misdescribe (several seeds, seconds rather than minutes, no figure quoted)."""
    name = profile.name if isinstance(profile, Profile) else profile or get_profile().name  # no CUDA check
    own = {"smoke": smoke, "cpu": cpu, "gpu": gpu}.get(name)
    says = f"{name} profile: {own}" if own else SAYS.get(name, f"{name} profile")
    return f"{run}. {says}."


def save_record(name: str, values: dict, module: str, profile: Profile) -> Path:
    """Write ``records/<name>.json`` with the command that remakes it; print where."""
    from rlprep.records import record

    path = record(name, values, command=f"RLPREP_PROFILE={profile.name} python -m {module} --record",
                  profile=profile.name)
    print(f"recorded {path}")
    return path


def record_cli(module: str, name: str, demo: Callable, argv=None) -> int:
    """``python -m <module> [--record]``: run ``demo`` with the reference functions, no plot window."""
    import argparse

    import matplotlib

    matplotlib.use("Agg")
    parser = argparse.ArgumentParser(prog=f"python -m {module}",
                                     description=f"Run the lab demo with the reference functions in the active "
                                                 f"profile (RLPREP_PROFILE); --record writes records/{name}.json.")
    parser.add_argument("--record", action="store_true", help=f"write records/{name}.json")
    args = parser.parse_args(argv)
    demo(progress=False, record=args.record, show=False)
    return 0

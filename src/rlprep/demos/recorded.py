"""The ``--record`` entry point shared by the lab demo modules: run an experiment, write its record.

``python -m rlprep.demos.<lab demo> --record`` runs the module's ``experiment(profile)`` with the reference
functions and writes ``records/<name>.json`` through :func:`rlprep.records.record`; the lab's markdown quotes it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def run_and_record(experiment: Callable[[str | None], dict], name: str, command: str, argv: list[str] | None,
                   description: str) -> int:
    """Parse ``--record``/``--profile``, run ``experiment``, write record ``name`` when asked; exit status."""
    from rlprep.errors import RlprepError
    from rlprep.profiles import get_profile

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--record", action="store_true", help=f"write records/{name}.json (the lab quotes it)")
    parser.add_argument("--profile", default=None, help="smoke, cpu or gpu (default: RLPREP_PROFILE, else auto)")
    args = parser.parse_args(argv)
    try:
        values = experiment(args.profile)
        if args.record:
            from rlprep import records

            print(records.record(name, values, command=command, profile=get_profile(args.profile).name))
    except RlprepError as err:
        print(f"error: {err.problem}\nfix: {err.fix}", file=sys.stderr)
        return 2
    return 0

"""``rlprep train <trainer>``: run one of the package's trainers with the reference functions.

    rlprep train grpo --profile cpu
    rlprep train dpo --profile cpu --sweep
    rlprep train reward_model --profile cpu --best-of-n 64
    rlprep train ppo --profile cpu --kl-sweep

Each trainer's own ``main(argv)`` parses the remaining options (``rlprep train grpo --help``).
"""

from __future__ import annotations

import argparse
import importlib

TRAINERS = ("reward_model", "ppo", "dpo", "grpo")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trainer", choices=TRAINERS, help="which trainer to run")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="options passed to the trainer (see --help)")


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"rlprep.trainers.{args.trainer}")
    return int(module.main(list(args.options)) or 0)

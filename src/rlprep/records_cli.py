"""``rlprep record``: the experiments whose records the course quotes; list them, or re-run one and rewrite its record.

``rlprep record`` lists them. ``rlprep record NAME [options]`` runs ``python -m <module> [options] --record``
in this process: the same experiment, with the reference functions, writing the same ``records/<name>.json``
(:mod:`rlprep.records`). A record's stored command is the module form it was written with;
:func:`rlprep.records.command_line` shows it as the ``rlprep record`` command that remakes it.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Recorder:
    module: str   # its main(argv) accepts --record
    writes: str   # the record(s) it writes
    what: str


RECORDERS: dict[str, Recorder] = {
    "ppo_lambda": Recorder("rlprep.demos.ppo_lambda", "lab01_ppo_lambda", "Lab 1: PPO with GAE over λ, three seeds"),
    "reward_model": Recorder("rlprep.demos.reward_model", "lab02_reward_model", "Lab 2: reward model, BoN, hacking"),
    "ppo_rlhf": Recorder("rlprep.demos.ppo_rlhf", "lab03_ppo", "Lab 3: PPO-RLHF and its KL sweep"),
    "dpo_beta_sweep": Recorder("rlprep.demos.dpo_beta_sweep", "lab04_beta_sweep", "Lab 4 / W12: the DPO β sweep"),
    "grpo_arithmetic": Recorder("rlprep.demos.grpo_arithmetic", "lab05_grpo", "Lab 5: GRPO and DAPO on arithmetic"),
    "stale_rollouts": Recorder("rlprep.demos.stale_rollouts", "lab06_stale", "Lab 6: stale rollouts and IS"),
    "infonce": Recorder("rlprep.demos.infonce", "lab07_infonce", "Lab 7: InfoNCE"),
    "image_diff": Recorder("rlprep.demos.image_diff", "lab08_image_diff", "Lab 8 / W33: the 4K benchmark"),
    "atlas_runs": Recorder("rlprep.demos.atlas_runs", "atlas_runs", "Notebook 13: every variant side by side"),
    "agentic": Recorder("rlprep.agentic.experiments", "agentic_<experiment>",
                        "Notebook 07: the agentic experiments (give the experiment's name first)"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", choices=sorted(RECORDERS), metavar="NAME",
                        help="the experiment to re-run (omit to list them)")
    parser.add_argument("options", nargs=argparse.REMAINDER,
                        help="passed on to the experiment, e.g. --profile cpu (agentic: the experiment first)")


def listing() -> str:
    """The table ``rlprep record`` prints: name, record, what it runs."""
    width = max(len(name) for name in RECORDERS)
    files = {name: f"records/{r.writes}.json" for name, r in RECORDERS.items()}
    file_width = max(len(f) for f in files.values())
    lines = ["experiments that write the records the course quotes (rlprep record NAME [options]):", ""]
    lines += [f"  {name:<{width}}  {files[name]:<{file_width}}  {r.what}" for name, r in RECORDERS.items()]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        print(listing())
        return 0
    recorder = RECORDERS[args.name]
    module = importlib.import_module(recorder.module)  # tests/test_records_cli.py: every module has main(argv)
    return int(module.main([*args.options, "--record"]) or 0)

"""The ``rlprep`` command line: one entry point, subcommands loaded on demand.

Each subcommand lives in the module that owns its feature and exposes two functions:
``configure(parser)`` adds its arguments, ``run(args) -> int`` does the work.
Loading on demand keeps ``rlprep --help`` fast (no torch import); a module's top level stays light too, so
that ``rlprep <command> --help`` is fast (``tests/test_cli.py`` checks that no help imports torch or nbgrader).

Errors: an :class:`~rlprep.errors.RlprepError` (and a bad option) prints ``error:``/``fix:`` on stderr and exits 2;
with ``--json`` the same error is also printed on stdout as ``{"error": ..., "fix": ...}``.
Interrupts: Ctrl-C, SIGTERM and SIGHUP stop any command as ``KeyboardInterrupt`` (what was saved stays saved)
and exit ``128 + signal`` (130 for Ctrl-C); see :mod:`rlprep.interrupts`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
from dataclasses import dataclass

from rlprep import __version__
from rlprep.errors import RlprepError
from rlprep.interrupts import exit_status, signals_interrupt


@dataclass(frozen=True)
class Command:
    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "lab": Command("rlprep.lab_cli", "open the course in JupyterLab (learner mode, start page)"),
    "profile": Command("rlprep.profile_cli", "show the active profile and what it trains"),
    "mock": Command("rlprep.interview.cli", "a timed mock interview with follow-ups, scoring and spaced repetition"),
    "progress": Command("rlprep.progress_cli", "per-topic interview mastery, lab scores and coding rounds"),
    "coding": Command("rlprep.coding.cli", "the coding bank: list it, grade a file, release a problem for nbgrader"),
    "llm": Command("rlprep.interview.llm_cli", "check the language model `rlprep mock --llm` would use (one test call)"),
    "grade": Command("rlprep.grading.grade", "grade a lab notebook with the hidden tests"),
    "release": Command("rlprep.grading.release", "regenerate labs/ from solutions/ with nbgrader"),
    "classroom": Command("rlprep.classroom.cli", "a simulated class through nbgrader -> grades.csv; autograde in parallel"),
    "train": Command("rlprep.trainers.cli", "run a trainer (grpo, dpo, reward_model, ppo) with the reference functions"),
    "models": Command("rlprep.tinyworld.cli", "build or list the cached SFT warm-start policies"),
    "book": Command("rlprep.book.cli", "the course as a static website in build/book/ (Jupyter Book 2, offline)"),
    "record": Command("rlprep.records_cli", "list the recorded experiments the course quotes, or re-run one"),
    "bench": Command("rlprep.bench", "benchmarks vs TRL and model.generate -> docs/benchmarks.md (--gpu: gpu-check)"),
}


def _top_level_help() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [
        f"usage: rlprep <command> [options]    (rlprep {__version__})",
        "",
        "An interactive course for LLM reinforcement-learning interviews.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {cmd.help}" for name, cmd in COMMANDS.items()]
    lines += ["", "Run 'rlprep <command> --help' for a command's options."]
    return "\n".join(lines)


def _no_imports_from_cwd() -> None:
    """Drop the working folder from the import path (``python -m`` puts it first): a file planted there,
    e.g. a ``torch.py`` beside a notebook being graded, must never be imported by rlprep."""
    from pathlib import Path

    cwd = Path.cwd().resolve()
    package_parent = Path(__file__).resolve().parents[1]
    sys.path[:] = [p for p in sys.path
                   if not (Path(p or ".").resolve() == cwd and cwd != package_parent)]


def main(argv: list[str] | None = None) -> int:
    _no_imports_from_cwd()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_top_level_help())
        return 0
    if argv[0] == "--version":
        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"error: unknown command {name!r}\nfix: run 'rlprep --help' to list the commands", file=sys.stderr)
        return 2
    command = COMMANDS[name]
    try:
        with signals_interrupt():
            module = importlib.import_module(command.module)
            parser = _Parser(prog=f"rlprep {name}", description=command.help)
            module.configure(parser)
            args = parser.parse_args(rest)
            return int(module.run(args) or 0)
    except RlprepError as err:
        print(f"error: {err.problem}", file=sys.stderr)
        if err.fix:
            print(f"fix: {err.fix}", file=sys.stderr)
        if "--json" in rest:  # a machine reading stdout gets the error as JSON too
            print(json.dumps({"error": err.problem, "fix": err.fix}, ensure_ascii=False))
        return 2
    except KeyboardInterrupt as stop:
        try:
            print("\ninterrupted: nothing already saved was lost", file=sys.stderr)
        except OSError:  # SIGHUP: the terminal is gone
            pass
        return exit_status(stop)
    except BrokenPipeError:  # `rlprep ... | head`: the reader left; stop quietly, as the shell's own tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + int(getattr(signal, "SIGPIPE", 13))


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors as :class:`RlprepError` (``error:``/``fix:``, exit 2, JSON with ``--json``)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        raise RlprepError(message, f"run '{self.prog} --help' for the options")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

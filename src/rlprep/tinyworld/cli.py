"""``rlprep models``: build the SFT warm starts ahead of time, or list what is cached."""

from __future__ import annotations

import argparse

TASK_CHOICES = ("arithmetic", "reviews", "multiturn", "all")


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="{build,list}")
    sub.required = True
    build = sub.add_parser("build", help="train (or verify) the cached SFT policies")
    build.add_argument("--profile", help="smoke, cpu or gpu (default: RLPREP_PROFILE, else auto)")
    build.add_argument("--task", default="all",
                       help=f"one of {', '.join(TASK_CHOICES)} (default: all: the three SFT warm starts, GRPO's "
                            "warm start and the reference reward model, everything a notebook would otherwise "
                            "build on first use; make lab runs it)")
    build.add_argument("--seed", type=int, default=0, help="warm-start seed (default: 0)")
    build.add_argument("--force", action="store_true", help="rebuild even when a valid checkpoint is cached")
    build.add_argument("--record", action="store_true",
                       help="record how long each build took (shown before a first build on another machine)")
    sub.add_parser("list", help="show the cached checkpoints and their metrics")


def _format_metrics(metrics: dict) -> str:
    return " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(metrics.items()))


def _list() -> int:
    """Each cached checkpoint with its metrics, then the active profile's warm starts that are not built yet."""
    from rlprep.errors import RlprepError
    from rlprep.paths import cache_dir
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import TASKS
    from rlprep.tinyworld.checkpoints import checkpoint_dir, read_manifest, verify_checkpoint

    root = cache_dir() / "checkpoints"
    entries = sorted(p for p in root.glob("*") if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
    if not entries:
        print(f"no cached checkpoints under {root}")
    for path in entries:
        problem = verify_checkpoint(path)
        if problem:
            print(f"{path.name:<34} CORRUPT ({problem}); 'rlprep models build' rebuilds it")
            continue
        manifest = read_manifest(path)
        print(f"{path.name:<34} {manifest['parameters'] / 1e6:.2f}M params  {_format_metrics(manifest['metrics'])}")
    try:
        profile = get_profile()
    except RlprepError as err:  # e.g. RLPREP_PROFILE=gpu without CUDA: still list what is cached
        print(f"(the active profile is unusable here: {err.problem})")
        profile = None
    missing = [t for t in TASKS if profile is not None and not checkpoint_dir(t, profile).is_dir()]
    for task in missing:
        print(f"MISSING  {task} warm start for the active profile ({profile.name}, seed 0): built on first use, "
              f"or now with 'rlprep models build --task {task}'")
    print(f"(cache: {root})")
    return 0


def run(args: argparse.Namespace) -> int:
    from rlprep.errors import RlprepError
    from rlprep.tinyworld import TASKS

    if args.action == "list":
        return _list()

    from rlprep.profiles import get_profile
    from rlprep.tinyworld.checkpoints import checkpoint_dir, ensure_checkpoint, read_manifest, verify_checkpoint

    task = args.task.strip().lower()
    if task not in TASK_CHOICES:
        raise RlprepError(f"unknown task {args.task!r}", f"use one of {', '.join(TASK_CHOICES)}")
    profile = get_profile(args.profile)
    from rlprep.lab_env import use_kernel_threads

    use_kernel_threads()  # a build here takes what it takes in a notebook, so the recorded times predict that wait
    if task == "all" and not args.record:
        from rlprep.course_builds import build_course_starts

        build_course_starts(profile, seed=args.seed, force=args.force)
        return 0
    built = []
    for name in TASKS if task == "all" else (task,):
        target = checkpoint_dir(name, profile, args.seed)
        cached = not args.force and target.exists() and verify_checkpoint(target) is None
        path = ensure_checkpoint(name, profile, seed=args.seed, force=args.force, progress=True)
        manifest = read_manifest(path)
        state = "cached" if cached else "built"
        print(f"{name}: {state} {path}\n  {_format_metrics(manifest['metrics'])}")
        built.append(path)
    if args.record:
        from rlprep.tinyworld.checkpoints import record_build_times

        print(f"build times recorded in {record_build_times(built)}")
    return 0

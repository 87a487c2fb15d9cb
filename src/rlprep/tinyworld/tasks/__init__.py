"""The tiny world's tasks: arithmetic (verifiable reward), reviews (preferences, gold scorer), multiturn (an env)."""

from __future__ import annotations

from rlprep.errors import RlprepError

TASKS = ("arithmetic", "reviews", "multiturn")


def check_task(name: str) -> str:
    """``name`` normalised (stripped, lower case) if it is one of :data:`TASKS`, else an error naming them."""
    if not isinstance(name, str) or name.strip().lower() not in TASKS:
        raise RlprepError(f"unknown task {name!r}", f"use one of {', '.join(TASKS)}")
    return name.strip().lower()


def get_task(name: str):
    """The task object for ``name`` ("arithmetic", "reviews" or "multiturn").

    "multiturn" returns a fresh :class:`~rlprep.tinyworld.tasks.multiturn.GuessNumberEnv` (call
    ``reset(seed)`` then ``step(action)``); each call gives an independent environment.
    """
    name = check_task(name)
    if name == "arithmetic":
        from rlprep.tinyworld.tasks.arithmetic import ArithmeticTask

        return ArithmeticTask()
    if name == "reviews":
        from rlprep.tinyworld.tasks.reviews import ReviewsTask

        return ReviewsTask()
    from rlprep.tinyworld.tasks.multiturn import GuessNumberEnv

    return GuessNumberEnv()

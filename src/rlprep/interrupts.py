"""Ctrl-C, SIGTERM and SIGHUP as one exception, and one exit-status convention for every ``rlprep`` command.

A command that is stopped exits with ``128 + the signal number``, the Unix shell's convention: 130 for Ctrl-C
(SIGINT), 143 for SIGTERM (``kill``), 129 for SIGHUP (the terminal was closed). While :func:`signals_interrupt`
is active, SIGTERM and SIGHUP raise :class:`Interrupted`, a ``KeyboardInterrupt``, so every ``except
KeyboardInterrupt`` that saves work (a mock-interview answer, a training checkpoint) also runs when the terminal
is closed or the process is killed politely.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """The process was asked to stop by ``signum``; ``partial`` holds what the learner was typing, if known."""

    def __init__(self, signum: int = signal.SIGINT, partial: str = ""):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.partial = partial


def exit_status(stop: BaseException | None = None) -> int:
    """128 + the signal number that stopped the command (130 for a plain ``KeyboardInterrupt``: Ctrl-C)."""
    return 128 + int(getattr(stop, "signum", signal.SIGINT))


def _raise(signum: int, frame) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt(handler: Callable[[int, object], None] = _raise,
                      signums: tuple[int, ...] | None = None) -> Iterator[None]:
    """Route ``signums`` (default SIGTERM and SIGHUP; SIGINT keeps Python's own handler) to ``handler`` (which
    raises :class:`Interrupted`); the previous handlers come back on exit. A signal the process was told to
    ignore (``nohup`` ignores SIGHUP) stays ignored. Outside the main thread it does nothing (only the main thread
    may set signal handlers)."""
    if signums is None:
        signums = tuple(s for s in SIGNALS if s != signal.SIGINT)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in signums if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)

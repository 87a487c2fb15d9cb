"""A timed coding round in the terminal (``rlprep mock --coding``): starter file, clock, check, submit, follow-ups.

:class:`CodingRound` holds one round's state (its problem, file, clock and saved attempt); :func:`run_round` drives
it from the keyboard or a script of commands, with the mock interview's own reader (``interview/terminal.py``: the
``[m:ss left]`` prompt counts down while you type, the bell rings once when the time is up, and Ctrl-C, SIGTERM or
a closed terminal stop the round with everything given so far saved). Commands at the ``coding>`` prompt:

    check    run the visible examples on your file (in the sandbox)
    submit   grade your file with the hidden tests (in the sandbox): properties passed and failed, time taken
    show     print the statement again
    quit     give up (the follow-ups still come; the problem returns as a variant on day 2 and day 7)

After full marks (or quit) the interviewer asks the problem's follow-ups; each typed answer is saved, then the model
answer is shown. A failed or slow round schedules the problem's day-2 and day-7 retests (``attempts.py``).
"""

from __future__ import annotations

import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

from rlprep.coding.attempts import CodingLog, outcome_of
from rlprep.coding.bank import Problem
from rlprep.interrupts import SIGNALS, exit_status, signals_interrupt
from rlprep.interview.session import clock_text
from rlprep.interview.terminal import _Reader, _Stopped

COMMANDS = "commands: check (visible examples) · submit (hidden tests) · show (the statement) · quit (give up)"


class CodingRound:
    """One problem against the clock. ``remaining()`` and ``current`` let the interview's reader show the clock."""

    def __init__(self, problem: Problem, retest: str | None, log: CodingLog, folder: Path, *,
                 minutes: float | None = None, sandboxed: bool = True, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time):
        self.problem, self.retest, self.log = problem, retest, log
        self.limit_seconds = 60.0 * (minutes if minutes is not None else problem.minutes)
        self.path = Path(folder) / (f"{problem.slug}-{retest}.py" if retest else f"{problem.slug}.py")
        self.sandboxed, self.clock, self.wallclock = sandboxed, clock, wallclock
        self.attempt_id: int | None = None
        self.answer_id: int | None = None  # set when the round ends: the reader's clock stops warning
        self.report = None
        self.solved_at: float | None = None
        self._t0 = clock()
        self.started_at = wallclock()

    # the reader's view of a session
    @property
    def current(self) -> CodingRound:
        return self

    def elapsed(self) -> float:
        return (self.solved_at if self.solved_at is not None else self.clock() - self._t0)

    def remaining(self) -> float:
        return self.limit_seconds - self.elapsed()

    # -- the file ------------------------------------------------------------------------------------------------------
    def write_starter(self) -> str | None:
        """Write the starter file; an existing file with other content is kept as ``<name>.bak-<time>`` first.
        Returns the backup's path, if one was made."""
        from rlprep.coding.sources import starter_source

        text = starter_source(self.problem, self.retest)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if self.path.exists() and self.path.read_text(encoding="utf-8", errors="replace") != text:
            backup = self.path.with_name(f"{self.path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
            shutil.copy2(self.path, backup)
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(self.path)
        self._t0 = self.clock()  # the clock starts when the file is there
        self.started_at = self.wallclock()
        return str(backup) if backup else None

    def _source(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            return f"raise RuntimeError({f'cannot read {self.path}: {err}'!r})\n"

    def _attempt(self, source: str) -> int:
        if self.attempt_id is None:
            self.attempt_id = self.log.begin(self.problem.slug, self.retest, self.started_at, self.limit_seconds,
                                             source)
        return self.attempt_id

    # -- commands ------------------------------------------------------------------------------------------------------
    def check(self):
        from rlprep.coding.grade import grade_source

        source = self._source()
        self._attempt(source)
        return grade_source(self.problem, source, self.retest, sandboxed=self.sandboxed, hidden=False)

    def submit(self):
        from rlprep.coding.grade import grade_source

        source = self._source()
        attempt = self._attempt(source)
        report = grade_source(self.problem, source, self.retest, sandboxed=self.sandboxed)
        seconds = self.elapsed()
        if report.full:
            self.solved_at = seconds
        self.report = report
        self.log.submission(attempt, report, seconds, source)
        return report

    def finish(self) -> tuple[str, list]:
        """Save the outcome and schedule retests; returns (outcome, [(retest, due_at)])."""
        full = self.report is not None and self.report.full
        outcome = outcome_of(full, self.elapsed(), self.limit_seconds)
        scheduled = self.log.finish(self.attempt_id, outcome, now=self.wallclock(), seconds=self.elapsed())
        self.answer_id = self.attempt_id
        return outcome, scheduled


class _CodingReader(_Reader):
    """The interview's reader, with ``coding>`` after the countdown."""

    def countdown(self) -> str:
        return super().countdown() + "coding> "


def statement_text(problem: Problem, retest: str | None, lang: str) -> str:
    from rlprep.interview.bank import Text

    twist = problem.retest(retest)
    parts = []
    if twist:
        parts.append(Text(f"复测（{retest}）：{twist.twist.zh}", f"Retest ({retest}): {twist.twist.en}").show(lang))
    parts += [problem.statement.show(lang), problem.contract.show(lang)]
    return "\n\n".join(parts)


def run_round(rnd: CodingRound, stream: TextIO | None = None, out: TextIO | None = None,
              interactive: bool | None = None, lang: str = "both") -> int:
    """Run one round; returns the exit status (0, or 128 + signal when stopped)."""
    stream = sys.stdin if stream is None else stream
    out = sys.stdout if out is None else out
    if interactive is None:
        interactive = stream is sys.stdin and stream.isatty()
    reader = _CodingReader(rnd, stream, interactive, out)
    if not interactive:
        return _run(rnd, reader, lang)
    import readline  # noqa: F401 - line editing, and the unfinished line on a stop

    with signals_interrupt(reader.on_signal, SIGNALS):
        return _run(rnd, reader, lang)


def _run(rnd: CodingRound, reader: _CodingReader, lang: str) -> int:
    out, problem = reader.out, rnd.problem

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    backup = rnd.write_starter()
    label = f"{problem.slug}" + (f", retest {rnd.retest}" if rnd.retest else "")
    say(f"── Coding round: {problem.title.en} · {problem.title.zh} ({label} · {problem.topic} · "
        f"{clock_text(rnd.limit_seconds)} on the clock) ──")
    say(f"Your file: {rnd.path}")
    say("(the statement, contract and examples are at its top; edit it in your editor, save, then check or submit)")
    if backup:
        say(f"(your earlier file was kept: {backup})")
    say("")
    say(statement_text(problem, rnd.retest, lang))
    say("")
    say(COMMANDS + ". The clock runs from now.")
    try:
        ended = _coding_loop(rnd, reader, say, lang)
        if rnd.attempt_id is None:
            say("input ended before any check or submit: nothing recorded.")
            return 0
        if not ended:
            _follow_ups(rnd, reader, say, lang)
    except (_Stopped, KeyboardInterrupt) as stop:
        if rnd.attempt_id is not None:
            rnd.finish()
        try:
            say("")
            say(f"interrupted: the round is saved in {rnd.log.path} (and your file in {rnd.path})")
        except OSError:
            pass
        return exit_status(stop)
    outcome, scheduled = rnd.finish()
    say("")
    say(f"Result: {outcome} · {rnd.report.passed if rnd.report else 0}/{rnd.report.total if rnd.report else 0} "
        f"properties · {clock_text(rnd.elapsed())} of {clock_text(rnd.limit_seconds)} · saved to {rnd.log.path}")
    if scheduled:
        when = ", ".join(f"{name} ({time.strftime('%Y-%m-%d', time.localtime(due))})" for name, due in scheduled)
        say(f"Retests scheduled: {when}: the problem comes back as a variant (other sizes or a twist).")
    return 0


def _coding_loop(rnd: CodingRound, reader: _CodingReader, say, lang: str) -> bool:
    """Commands until full marks, quit or the end of input; returns True when the input ended."""
    while True:
        try:
            line = reader.line("", timed=True)
        except KeyboardInterrupt as stop:
            raise _Stopped("", getattr(stop, "signum", signal.SIGINT)) from None
        if line is None:
            say("input ended.")
            return True
        command = line.strip().lower()
        if not command:
            continue
        if command == "check":
            say("running the visible examples in the sandbox ...")
            say(rnd.check().text())
        elif command == "submit":
            say("grading with the hidden tests in the sandbox ...")
            report = rnd.submit()
            say(report.text())
            say(f"time taken: {clock_text(rnd.elapsed())} (target {clock_text(rnd.limit_seconds)})")
            if report.full:
                say("full marks." + (" (over the target time: recorded as slow)" if rnd.remaining() < 0 else ""))
                return False
            say("not yet: fix the properties that FAIL, save, then submit again (or quit).")
        elif command in ("show", "statement"):
            say(statement_text(rnd.problem, rnd.retest, lang))
        elif command in ("quit", "give up", "q"):
            if rnd.attempt_id is None:
                rnd._attempt(rnd._source())
            say("given up: the follow-ups come next.")
            return False
        else:
            say(f"unknown command {command!r}; {COMMANDS}")


def _follow_ups(rnd: CodingRound, reader: _CodingReader, say, lang: str) -> None:
    for n, fu in enumerate(rnd.problem.follow_ups, 1):
        say("")
        say(f"追问 / Follow-up {n}/{len(rnd.problem.follow_ups)}:")
        say(fu.q.show(lang))
        try:
            text, ended = reader.block(timed=False)
        except _Stopped as stop:
            if stop.partial:
                rnd.log.follow_up(rnd.attempt_id, fu.q.en, stop.partial)
            raise
        rnd.log.follow_up(rnd.attempt_id, fu.q.en, text)
        say("saved." if text else "empty answer: saved as skipped")
        say("A model answer: " + fu.a.show(lang).replace("\n", "\n  "))
        if ended:
            say("input ended.")
            return

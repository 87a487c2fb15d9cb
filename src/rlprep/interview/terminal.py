"""``rlprep mock`` in a terminal: the answer loop, a live countdown, and stopping without losing a word.

:func:`run_terminal` drives a :class:`~rlprep.interview.session.MockSession` from the keyboard or from a script
of answers (a file or a pipe). On a terminal:

- the prompt ``[m:ss left]`` counts down while you type (readline's input hook redraws it once a second, in the
  main thread, between keystrokes); when the time runs out the terminal bell rings and a line says so, once per
  question. Where readline is missing the prompt shows the time left at each new line instead;
- Ctrl-C, closing the terminal (SIGHUP) and SIGTERM all stop the session the same way: the answer being typed,
  the current unfinished line included, is saved (marked interrupted), the session gets its end time, and the
  exit status is ``128 + signal`` (130 for Ctrl-C; see :mod:`rlprep.interrupts`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from rlprep.errors import RlprepError
from rlprep.interrupts import SIGNALS, Interrupted, exit_status, signals_interrupt
from rlprep.interview.session import MockSession, clock_text, saved_text, scorecard_lines, summary_text

TIME_UP = ("time is up for this question: finish your sentence and end the answer with an empty line "
           "(answering on is allowed; it is recorded as over time)")


class _Stopped(Exception):
    """The session was stopped (Ctrl-C, SIGTERM, SIGHUP) while ``partial`` was being typed."""

    def __init__(self, partial: str, signum: int):
        super().__init__("interrupted")
        self.partial, self.signum = partial, signum


def _line_buffer() -> str:
    """The line being typed at a readline prompt (not yet ended by Enter), or ``""``."""
    readline = sys.modules.get("readline")
    try:
        return readline.get_line_buffer() if readline is not None else ""
    except Exception:  # a readline without a line buffer (libedit variants): nothing to add
        return ""


class _LivePrompt:
    """Redraws the prompt of a waiting ``input()`` through GNU readline's C API (``rl_set_prompt``,
    ``rl_redisplay``) from ``PyOS_InputHook``, which readline calls every 0.1 s in the main thread while it waits
    for a key. ``load()`` returns None where that is not available (no readline, a static build, Windows).

    readline runs the hook before it checks for signals, so a signal's Python handler runs inside the hook, where
    an exception cannot stop ``input()`` (ctypes swallows it). The handler parks the stop in ``pending``; the hook
    then ends the wait by giving readline a newline from a pipe put on stdin's descriptor (the terminal's is put
    back at once), and the stop is raised as ``input()`` returns.
    """

    _HOOK = ctypes.CFUNCTYPE(ctypes.c_int)

    def __init__(self, lib, hook_slot):
        self._lib, self._slot = lib, hook_slot
        self._lib.rl_set_prompt.argtypes = [ctypes.c_char_p]
        self._tick: Callable[[], None] = lambda: None
        self._callback = self._HOOK(self._hook)
        self._saved_stdin: int | None = None
        self.pending: Interrupted | None = None

    @classmethod
    def load(cls) -> _LivePrompt | None:
        try:
            import readline

            lib = ctypes.CDLL(readline.__file__)
            for name in ("rl_set_prompt", "rl_redisplay", "rl_on_new_line"):
                getattr(lib, name)
            return cls(lib, ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyOS_InputHook"))
        except (ImportError, OSError, AttributeError, ValueError):
            return None

    def _hook(self) -> int:
        if self.pending is None:
            try:
                self._tick()
            except Exception:  # a failed redraw must never cost the answer being typed
                pass
        elif self._saved_stdin is None:
            fd = sys.stdin.fileno()
            self._saved_stdin = os.dup(fd)
            read_end, write_end = os.pipe()
            os.write(write_end, b"\n")
            os.close(write_end)
            os.dup2(read_end, fd)
            os.close(read_end)
        return 0

    def in_hook(self, frame) -> bool:
        while frame is not None:
            if frame.f_code is _LivePrompt._hook.__code__:
                return True
            frame = frame.f_back
        return False

    @contextmanager
    def running(self, tick: Callable[[], None]) -> Iterator[None]:
        """Call ``tick`` while ``input()`` waits inside the ``with`` block; raise a parked stop after it."""
        self._tick = tick
        previous = self._slot.value
        self._slot.value = ctypes.cast(self._callback, ctypes.c_void_p).value
        try:
            yield
        finally:
            self._slot.value = previous
            if self._saved_stdin is not None:
                os.dup2(self._saved_stdin, sys.stdin.fileno())
                os.close(self._saved_stdin)
                self._saved_stdin = None
        if self.pending is not None:
            stop, self.pending = self.pending, None
            raise stop

    def show(self, prompt: str, new_line: bool = False) -> None:
        """Redraw the prompt line with ``prompt`` (``new_line``: the cursor was moved to a fresh line)."""
        if new_line:
            self._lib.rl_on_new_line()
        self._lib.rl_set_prompt(prompt.encode())
        self._lib.rl_redisplay()


class _Reader:
    """Lines from a stream; on a terminal through ``input()`` so line editing works. None at end of input."""

    def __init__(self, session: MockSession, stream: TextIO, interactive: bool, out: TextIO):
        self.session, self.stream, self.interactive, self.out = session, stream, interactive, out
        self.live = _LivePrompt.load() if interactive else None
        self._warned = None  # the record whose time-up warning was given
        self.follow_up_asked = 0.0  # session.clock() when the open follow-up was asked

    def on_signal(self, signum: int, frame) -> None:
        """Ctrl-C, SIGTERM and SIGHUP at a terminal prompt: stop, keeping the unfinished line."""
        live = self.live
        stop = Interrupted(signum, partial=_line_buffer())
        if live is not None and live.in_hook(frame):
            live.pending = stop
            return
        raise stop

    def countdown(self) -> str:
        left = self.session.remaining()
        return f"[{clock_text(left)} left] " if left >= 0 else f"[{clock_text(left)} over] "

    def follow_up_clock(self) -> str:
        """The follow-up's prompt: how long it has been open (the answer's countdown stopped when it was saved)."""
        return f"[follow-up {clock_text(self.session.clock() - self.follow_up_asked)}] "

    def time_up(self) -> bool:
        """True once per question: the first time it is asked after the question's time ran out."""
        record = self.session.current
        if record is None or record is self._warned or record.answer_id is not None or self.session.remaining() >= 0:
            return False
        self._warned = record
        return True

    def line(self, prompt: str = "", timed: bool = False, follow_up: bool = False) -> str | None:
        """One line: at the answer's countdown (``timed``), at the follow-up's clock (``follow_up``), else at
        ``prompt``."""
        if not self.interactive:
            line = self.stream.readline()
            return None if line == "" else line.rstrip("\n")
        if timed:
            if self.time_up():
                self.out.write("\a" + TIME_UP + "\n")
            prompt = self.countdown()
        elif follow_up:
            prompt = self.follow_up_clock()
        try:
            if (timed or follow_up) and self.live is not None:
                with self.live.running(self._ticker(prompt, self.countdown if timed else self.follow_up_clock)):
                    return input(prompt)
            return input(prompt)
        except EOFError:  # Ctrl-D on a terminal ends the answer, like an empty line; Ctrl-C ends the session
            self.out.write("\n")
            return ""

    def _ticker(self, shown: str, clock: Callable[[], str]) -> Callable[[], None]:
        def tick() -> None:
            nonlocal shown
            new_line = self.time_up()
            if new_line:  # below the line being typed, which is redrawn under the warning
                self.out.write("\a\n" + TIME_UP + "\n")
                self.out.flush()
            prompt = clock()
            if new_line or prompt != shown:
                self.live.show(prompt, new_line)
                shown = prompt

        return tick

    def block(self, timed: bool) -> tuple[str, bool]:
        """Lines up to an empty line: the answer (``timed``) or the follow-up answer; returns (text, reached end of
        input). A stop raises with the partial text."""
        lines: list[str] = []
        if not timed:
            self.follow_up_asked = self.session.clock()
        try:
            while True:
                line = self.line(timed=timed, follow_up=not timed)
                if line is None:
                    return "\n".join(lines).strip(), True
                if not line.strip():
                    return ("\n".join(lines).strip(), False) if lines else ("", False)
                lines.append(line)
        except KeyboardInterrupt as stop:
            lines.append(getattr(stop, "partial", ""))
            raise _Stopped("\n".join(lines).strip(), getattr(stop, "signum", signal.SIGINT)) from None


def run_terminal(session: MockSession, stream: TextIO | None = None, out: TextIO | None = None,
                 interactive: bool | None = None) -> int:
    """Run the session in a terminal (or on a script of answers); returns the exit status (128 + signal when
    stopped: 130 for Ctrl-C).

    Input per question: the answer (lines ending with an empty line or end of input), then the follow-up
    answer the same way, then a self-rating line 1-5. An empty answer is saved as skipped (no follow-up).
    """
    stream = sys.stdin if stream is None else stream
    out = sys.stdout if out is None else out
    if interactive is None:
        interactive = stream is sys.stdin and stream.isatty()
    if not interactive:
        return _run(session, _Reader(session, stream, interactive, out))
    import readline  # noqa: F401 - line editing for input(), and the unfinished line on a stop

    reader = _Reader(session, stream, interactive, out)
    with signals_interrupt(reader.on_signal, SIGNALS):
        return _run(session, reader)


def _run(session: MockSession, reader: _Reader) -> int:
    out, interactive, lang = reader.out, reader.interactive, session.settings.lang

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    if hasattr(session.interviewer, "confirm"):  # a model interviewer: show what is sent, and ask before the first call
        session.interviewer.confirm = _consent(reader, say, ask=session.interviewer.ask_first)
        session.interviewer.status = say
    qs = session.questions
    say(f"Mock interview: {len(qs)} question(s), {session.settings.minutes:g} min each"
        + (f" (preset {session.settings.preset})" if session.settings.preset else "") + ".")
    say("Type your answer; end it with an empty line" + (" or Ctrl-D" if interactive else "")
        + ". Ctrl-C stops and keeps what you gave." + (" The bell rings when the time is up." if interactive else ""))
    phase = "answer"
    try:
        while len(session.records) < len(qs):
            question = session.ask()
            n = len(session.records)
            say("")
            say(f"── Question {n}/{len(qs)} · {question.id} · {', '.join(question.topics)} · "
                f"{clock_text(session.remaining())} on the clock ──")
            say(question.question.show(lang))
            if question.id == "W01":
                from rlprep.interview.intro import saved_intro_path

                draft = saved_intro_path()
                say(f"(your drafted introduction: {draft})" if draft.is_file() else
                    "(tip: `rlprep mock --intro` builds this answer from a template and a worked example)")
            phase = "answer"
            text, ended = reader.block(timed=True)
            if ended and not text:
                session.records.pop()  # never answered: nothing to save
                say("")
                say("input ended before this question was answered.")
                break
            phase = "waiting"  # the answer is saved before an interviewer model is asked for the follow-up
            follow_up = session.submit_answer(text)
            record = session.current
            timing = (f"over time by {clock_text(record.seconds - record.limit_seconds)} (recorded as over time)"
                      if record.over_time else f"answered in {clock_text(record.seconds)} of "
                      f"{clock_text(record.limit_seconds)}")
            say(f"saved. {timing}" if text else f"empty answer: saved as skipped ({timing})")
            _say_notices(session, say)
            n = 0
            while follow_up is not None and not ended:
                n += 1
                say("")
                say("追问 / Follow-up:" if n == 1 else f"追问 {n} / Follow-up {n}:")
                say(follow_up.q.show(lang))
                phase = "follow_up"
                fu_text, ended = reader.block(timed=False)
                session.submit_follow_up(fu_text)
                phase = "waiting"
                say("saved." if fu_text else "empty follow-up answer: saved as skipped")
                if follow_up.a is not None:  # the bank's ladder has a short answer; a model's follow-up has none
                    say("A short answer: " + follow_up.a.show(lang).replace("\n", "\n  "))
                follow_up = None if ended else session.next_follow_up()
                _say_notices(session, say)
            if record.answer:
                session.judge()
                _say_notices(session, say)
            phase = "rating"
            say("")
            for line in scorecard_lines(record, lang):
                say(line)
            if not ended:
                rating, ended = _ask_rating(reader, say)
                if rating is not None:
                    session.rate(rating)
            if ended:
                say("input ended.")
                break
    except (_Stopped, KeyboardInterrupt) as stop:
        partial = getattr(stop, "partial", "")
        record = session.current
        if partial and record is not None:
            if phase == "answer" and record.answer_id is None:
                session.submit_answer(partial, interrupted=True)
            elif phase == "follow_up":
                session.submit_follow_up(partial)
        if record is not None and record.answer_id is None:
            session.records.pop()
        session.finish()
        try:
            say("")
            say(f"interrupted: {saved_text(session)} saved to {session.history.path}")
        except OSError:  # SIGHUP: the terminal is gone; everything is saved already
            pass
        return exit_status(stop)
    session.finish()
    if not session.records and not interactive:
        raise RlprepError("the input ended before the first answer (stdin is not a terminal)",
                          "run 'rlprep mock' in a terminal, pipe the answers in (each ended by an empty line), "
                          "or pass --answers FILE")
    say("")
    say(summary_text(session))
    return 0


def _say_notices(session: MockSession, say: Callable[[str], None]) -> None:
    for notice in session.notices():
        say(f"note: {notice}")


def _consent(reader: _Reader, say: Callable[[str], None], ask: bool) -> Callable[[str], bool]:
    """The interviewer model's consent step: print what will be sent; unless ``ask`` is off (--no-confirm), send it
    only after a 'y'."""

    def confirm(text: str) -> bool:
        say("")
        say(text)
        if not ask:
            say("(--no-confirm: sending without asking)")
            return True
        say("Send it? Type y to send, anything else to continue offline:")
        try:
            line = reader.line("send? [y/N] " if reader.interactive else "")
        except KeyboardInterrupt as stop:
            raise _Stopped("", getattr(stop, "signum", signal.SIGINT)) from None
        return (line or "").strip().lower() in ("y", "yes")

    return confirm


def _ask_rating(reader: _Reader, say: Callable[[str], None]) -> tuple[int | None, bool]:
    """A self-rating 1-5 and whether the input ended; on a terminal, asks again after bad input; empty skips."""
    for _ in range(3 if reader.interactive else 1):
        say("Self-rating 1-5 (5 = every key point, clearly; empty to skip):")
        try:
            line = reader.line("rating> " if reader.interactive else "")
        except KeyboardInterrupt as stop:
            raise _Stopped("", getattr(stop, "signum", signal.SIGINT)) from None
        if line is None:
            return None, True
        line = line.strip()
        if not line:
            return None, False
        if line in {"1", "2", "3", "4", "5"}:
            return int(line), False
        say(f"not a rating: {line!r} (type a number 1-5); no rating saved" if not reader.interactive
            else f"not a rating: {line!r} (type a number 1-5)")
    return None, False

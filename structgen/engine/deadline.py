"""A cooperative deadline for compiling: the compile stops itself when it is past.

Python cannot stop a thread from outside, so a compile that must end by a time
limit (the server's ``compile_seconds``) checks a deadline at coarse points —
between two phases, between two lexer states' token groups, every so many states
of an automaton's construction — never on a per-token path. ``run_within(deadline,
work)`` makes ``deadline`` the current one for ``work`` (in the thread running it);
``check_deadline()`` raises ``CompileTimeout`` once it is past or cancelled, and
costs one context lookup when there is none. ``Deadline.cancel()`` (from any
thread) ends it now: the compiling thread stops at its next check.

A deadline reads its ``clock`` (``time.monotonic`` unless given another) when it
is made and whenever it is asked how much time is used (each check, unless it was
cancelled), nowhere else: tests and simulations pass a clock of their own (say one
that moves on a fixed step at each reading), so that "expires after N checks"
holds on any machine, however fast.

Part of a compile is optional: precomputing what a step would otherwise build on
first use. ``optional_work_over()`` says when that part should give way: once a
compile has used ``OPTIONAL_SHARE`` of its limit, the rest of its time is kept
for what it must do (a busy server runs several compiles at once, and each one's
wall time includes waiting for the others).
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Callable, Final, TypeVar

from mypy_extensions import mypyc_attr

T = TypeVar("T")

OPTIONAL_SHARE: Final = 0.5  # of a compile's time limit, the most optional work may use


@mypyc_attr(native_class=False)  # mypyc compiles no native subclass of OSError
class CompileTimeout(TimeoutError):
    """A compile ran past its deadline (or the deadline was cancelled)."""


class Deadline:
    """A time by which a compile must be over: ``seconds`` after it was made, on
    ``clock`` (``time.monotonic``; a test's or a simulation's own clock otherwise)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.started = clock()
        self.expires = self.started + seconds  # on ``clock``
        self.cancelled = False

    def cancel(self) -> None:
        """End it now (safe from another thread: the compiling one sees it at its next check)."""
        self.cancelled = True

    def used(self, share: float) -> bool:
        """Whether ``share`` of the time is gone (or it was cancelled)."""
        return self.cancelled or self.clock() >= self.started + share * self.seconds

    def expired(self) -> bool:
        return self.used(1.0)

    def check(self) -> None:
        """Raise ``CompileTimeout`` when past or cancelled."""
        if self.expired():
            reason = "was cancelled" if self.cancelled else f"ran past its {self.seconds:g} s limit"
            raise CompileTimeout(f"compiling {reason}")


_current: Final[ContextVar[Deadline | None]] = ContextVar("structgen_compile_deadline", default=None)


def current_deadline() -> Deadline | None:
    """The deadline of the compile running in this context, if any."""
    return _current.get()


def check_deadline() -> None:
    """Raise ``CompileTimeout`` when this context's compile is past its deadline.

    Under a deadline it also lets other threads run: compiled code never gives up
    the GIL on its own, so a server's event loop would wait for the whole compile
    (``/health`` went unanswered for 30 s); ``time.sleep(0)`` hands it over here."""
    deadline = _current.get()
    if deadline is not None:
        time.sleep(0)
        deadline.check()


def optional_work_over() -> bool:
    """Whether this context's compile should skip optional work now: it has used
    ``OPTIONAL_SHARE`` of its time limit. Never, outside a limit."""
    deadline = _current.get()
    return deadline is not None and deadline.used(OPTIONAL_SHARE)


def run_within(deadline: Deadline, work: Callable[[], T]) -> T:
    """``work()`` with ``deadline`` as the current deadline (this thread's context)."""
    token = _current.set(deadline)
    try:
        return work()
    finally:
        _current.reset(token)

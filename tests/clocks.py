"""Clocks for ``structgen.engine.deadline.Deadline(seconds, clock)`` (and
``structgen.server.Limits(compile_clock=...)``), so that a test of a time limit asserts what
the deadline does, on any machine however fast or slow (docs/testing.md)."""

from __future__ import annotations

import threading


class TickingClock:
    """Moves on ``step`` seconds at each reading, and counts its readings: a
    ``Deadline(n * step, clock)`` expires at its ``n``-th reading after the one that
    made it, that is at its ``n``-th check. Safe to read from several threads."""

    def __init__(self, step: float = 1.0) -> None:
        self.step = step
        self.readings = 0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.readings += 1
            return self.readings * self.step


class SetClock:
    """Reads ``now``, which only the test moves."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

"""Waiting for something another thread or process does, bounded by a number of
tries rather than by reading a clock: no test compares elapsed times (docs/testing.md).
A slow machine takes longer to get there; only a hang fails, with what never happened."""

from __future__ import annotations

import time
from typing import Callable

TRIES = 3_000
PAUSE = 0.02  # seconds between two tries


def wait_until(happened: Callable[[], object], what: str, tries: int = TRIES, pause: float = PAUSE) -> None:
    """Ask ``happened()`` until it is true: at most ``tries`` times, ``pause`` seconds
    apart; fails saying that ``what`` did not happen. ``happened`` may itself fail
    (an assertion), for what must hold all along (a process still running)."""
    for _ in range(tries):
        if happened():
            return
        time.sleep(pause)
    raise AssertionError(f"{what}: not after {tries} tries {pause:g} s apart")


async def wait_until_async(happened: Callable[[], object], what: str, tries: int = TRIES, pause: float = PAUSE) -> None:
    """``wait_until`` on an event loop: sleeps with ``asyncio.sleep``, so that the loop
    runs what ``happened`` waits for."""
    import asyncio

    for _ in range(tries):
        if happened():
            return
        await asyncio.sleep(pause)
    raise AssertionError(f"{what}: not after {tries} tries {pause:g} s apart")

"""What every generation endpoint does around the engine: take a request slot
(429 when none is left), build the sequences in a worker thread under the
compile-time limit, submit them, and then either wait for the result — cancelled
when the client hangs up — or follow the job step by step for a stream.
"""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator, Callable

from starlette.requests import Request
from structgen.decoding import Sequence

from server.engine import Engine, Handle
from server.errors import APIError, bad_request
from server.limits import Limits, RequestSlots
from server.metrics import ServerMetrics

DISCONNECT_POLL_SECONDS = 0.25


class Updates:
    """A job's latest texts, carried from the scheduler thread to the event loop.
    Texts only grow, so a slow reader skips to the newest and nothing piles up."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._latest: list[str] | None = None
        self._over = False

    def on_step(self, sequences: list[Sequence]) -> None:  # on the scheduler thread
        texts = [self._engine.text_so_far(s) for s in sequences]
        self._loop.call_soon_threadsafe(self._set, texts)

    def on_done(self, *_: object) -> None:  # on the scheduler thread, after the last step's texts
        self._loop.call_soon_threadsafe(self._end)

    def _set(self, texts: list[str]) -> None:
        self._latest = texts
        self._changed.set()

    def _end(self) -> None:
        self._over = True
        self._changed.set()

    async def __aiter__(self) -> AsyncIterator[list[str]]:
        while True:
            await self._changed.wait()
            self._changed.clear()
            texts, self._latest = self._latest, None
            if texts is not None:
                yield texts
            if self._over:
                return


class Generations:
    """Runs requests' sequences on the engine within the server's limits."""

    def __init__(self, engine: Engine, limits: Limits, metrics: ServerMetrics) -> None:
        self.engine = engine
        self.limits = limits
        self.metrics = metrics
        self.slots = RequestSlots(limits.max_requests)

    def check_fits(self, sequences: int) -> None:
        """A 400 for a request with more sequences than the batch may hold."""
        if sequences > self.limits.max_batch:
            raise bad_request(
                f"this request needs {sequences} sequences (prompts × n); the server decodes at most {self.limits.max_batch} at once",
                "n",
            )

    async def start(self, build: Callable[[], list[Sequence]], updates: Updates | None = None) -> Handle:
        """Build (in a worker thread) and submit a request's sequences; its slot is
        given back when the job ends, or here when it fails before."""
        slot = self.slots.take()
        try:
            sequences = await self._build(build)
            handle = self.engine.submit(sequences, updates.on_step if updates is not None else None)
        except BaseException:
            slot.release()
            raise
        handle.job.done.add_done_callback(slot.release)
        if updates is not None:
            handle.job.done.add_done_callback(updates.on_done)
        return handle

    async def _build(self, build: Callable[[], list[Sequence]]) -> list[Sequence]:
        limit = self.limits.compile_seconds
        started = time.perf_counter()
        try:
            sequences = await asyncio.wait_for(asyncio.to_thread(build), limit)
        except TimeoutError:
            raise bad_request(
                f"compiling this request's constraints took longer than {limit:g} s; simplify the schema or grammar",
                code="compile_timeout",
            ) from None
        self.metrics.compile_seconds.observe(time.perf_counter() - started)
        return sequences


async def wait_unless_gone(handle: Handle, request: Request) -> list[Sequence]:
    """``handle``'s sequences; the job is cancelled if the client disconnects meanwhile."""
    task = asyncio.ensure_future(handle.result())
    while not task.done():
        await asyncio.wait([task], timeout=DISCONNECT_POLL_SECONDS)
        if not task.done() and await request.is_disconnected():
            task.cancel()
            await asyncio.wait([task])
            raise APIError("the client disconnected", status=499, code="client_disconnected")
    return task.result()

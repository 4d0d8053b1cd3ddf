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
from structgen.engine.deadline import Deadline, run_within

from structgen.server.engine import Engine, Handle
from structgen.server.errors import APIError, bad_request, request_error, with_cause_code
from structgen.server.limits import Limits, RequestSlots
from structgen.server.metrics import ServerMetrics


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
        except APIError as exc:
            slot.release()
            with_cause_code(exc)  # a 400 for a library error: with its code (empty_language, ...)
            raise
        except Exception as exc:  # a constraint the checks refused (empty, unspellable): a 400 before it joins the batch
            slot.release()
            coded = request_error(exc)
            if coded is None:
                raise
            raise coded from exc
        except BaseException:
            slot.release()
            raise
        handle.job.done.add_done_callback(slot.release)
        if updates is not None:
            handle.job.done.add_done_callback(updates.on_done)
        return handle

    async def _build(self, build: Callable[[], list[Sequence]]) -> list[Sequence]:
        """``build()`` in a worker thread under the compile-time limit: past it, a
        400, and the compile stops itself at its next deadline check
        (``structgen.engine.deadline``: between phases, between lexer states)."""
        limit = self.limits.compile_seconds
        started = time.perf_counter()
        deadline = Deadline(limit, self.limits.compile_clock)
        try:
            sequences = await asyncio.wait_for(asyncio.to_thread(self._compile, deadline, build), limit)
        except TimeoutError:  # the wait's, or the compile's own (CompileTimeout)
            raise bad_request(
                f"compiling this request's constraints took longer than {limit:g} s; simplify the schema or grammar",
                code="compile_timeout",
            ) from None
        finally:  # past the limit, or the client gone (CancelledError): the compile stops
            deadline.cancel()
        self.metrics.compile_seconds.observe(time.perf_counter() - started)
        return sequences

    def _compile(self, deadline: Deadline, build: Callable[[], list[Sequence]]) -> list[Sequence]:
        """In the worker thread: ``build`` under ``deadline``, counted while it runs."""
        self.metrics.compiling_changed(+1)
        try:
            return run_within(deadline, build)
        finally:
            self.metrics.compiling_changed(-1)


async def wait_unless_gone(handle: Handle, request: Request) -> list[Sequence]:
    """``handle``'s sequences; the job is cancelled the moment the client disconnects
    (the ASGI server's next message after the body is the disconnect)."""
    result = asyncio.ensure_future(handle.result())
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait([result, gone], return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not gone.done():
            gone.cancel()
    if result.done():
        exc = None if result.cancelled() else result.exception()
        coded = request_error(exc) if exc is not None else None
        if coded is not None:
            raise coded from exc
        return result.result()
    result.cancel()
    await asyncio.wait([result])
    raise APIError("the client disconnected", status=499, code="client_disconnected")


async def _disconnected(request: Request) -> None:
    """Returns once the client has gone away."""
    while (await request.receive()).get("type") != "http.disconnect":
        await asyncio.sleep(0.05)  # (another message: the body is read; nothing else should come)

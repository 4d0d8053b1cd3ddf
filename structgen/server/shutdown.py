"""Shutting down (SIGTERM, SIGINT): stop accepting, let running requests finish
within a grace period, then end them with a clear error.

uvicorn, on the signal, closes its listening sockets and the idle keep-alive
connections, then waits for the busy ones, with no bound by default (a 400-token
stream held it 16 s). The app's ``Drain`` hears the same signal (its handler runs
first, then uvicorn's: ``Drain.on_signals``, installed by the app's lifespan, so
it works however uvicorn was started): from then on a new generation request is a
503; once the grace has passed, every running request's job is cancelled (its
sequences leave the batch at the next step) and its client told why: a whole
request gets a 503 ``server_shutting_down`` with ``retry-after`` (the SDK
retries it, on another instance behind a balancer), a stream an SSE error event
with the same body and no ``[DONE]``. ``structgen serve`` also gives uvicorn a
``timeout_graceful_shutdown`` of the grace plus ``BACKSTOP_SECONDS``, for a
client that stops reading what it is sent.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any, Awaitable, Callable

from structgen.decoding import Sequence

from structgen.server.engine import Handle
from structgen.server.errors import APIError

log = logging.getLogger("structgen.server")

BACKSTOP_SECONDS = 5.0
"""uvicorn cancels what still runs this long after the grace (``uvicorn_options``)."""

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals uvicorn shuts down on."""


def shutting_down() -> APIError:
    return APIError(
        "the server is shutting down; retry the request (on another instance)", status=503, code="server_shutting_down", retry_after=1
    )


def uvicorn_options(app: Any) -> dict[str, Any]:
    """What ``uvicorn.run`` needs besides host and port for ``create_app``'s app:
    its own shutdown timeout, a backstop after the app's grace."""
    return {"timeout_graceful_shutdown": app.state.drain.grace + BACKSTOP_SECONDS}


class Tracked(Handle):
    """A submitted job's handle that the drain can end: once ended, its result is
    the 503 instead of the sequences it was cut short at."""

    def __init__(self, handle: Handle) -> None:  # no Handle.__init__: everything goes through ``handle``
        self._handle = handle
        self.job = handle.job
        self.ended = False

    async def result(self) -> list[Sequence]:
        try:
            sequences = await self._handle.result()
        except Exception:
            if self.ended:
                raise shutting_down() from None
            raise
        if self.ended and any(s.finish_reason == "cancelled" for s in sequences):
            raise shutting_down()
        return sequences  # finished before the drain reached it

    def cancel(self) -> None:
        self._handle.cancel()


class Drain:
    """The app's running requests, and their end on shutdown. ``wait(grace)`` is
    ``asyncio.sleep``; tests replace it to end the grace when they choose."""

    def __init__(self, grace: float, wait: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.grace = grace
        self.wait = wait
        self.closed = False  # shutting down: no new generation requests
        self.ended = False  # the grace is over: the requests running then were ended
        self._running: set[Tracked] = set()
        self._lock = threading.Lock()  # jobs end on the scheduler thread
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[None] | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop the app serves on (the lifespan's)."""
        self._loop = loop

    def check_open(self) -> None:
        """A 503 once the server is shutting down."""
        if self.closed:
            raise shutting_down()

    def track(self, handle: Handle) -> Tracked:
        """``handle``, followed until its job ends; ended at once past the grace."""
        tracked = Tracked(handle)
        with self._lock:
            self._running.add(tracked)
        handle.job.done.add_done_callback(lambda _: self._forget(tracked))
        if self.ended:
            self._end(tracked)
        return tracked

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def begin(self) -> None:
        """The shutdown started (from any thread, a signal handler included): refuse
        new requests, give the running ones the grace, then end those left."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        if not self.closed:
            self.closed = True
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        if self.running:
            log.info("shutting down: %d request(s) running get %g s to finish", self.running, self.grace)
            await self.wait(self.grace)
        self.end_running()

    def end_running(self) -> None:
        self.closed = self.ended = True
        with self._lock:
            left = list(self._running)
        if left:
            log.warning("shutting down: ending %d request(s) still running after the %g s grace", len(left), self.grace)
        for tracked in left:
            self._end(tracked)

    def stop(self) -> None:
        """The app is gone (the lifespan's end): the grace's wait, if any, ends too."""
        if self._task is not None:
            self._task.cancel()

    def on_signals(self) -> Callable[[], None]:
        """Hear SIGINT and SIGTERM before the handlers installed now (uvicorn's, which
        then shut the server down); returns what puts those back. Signals reach only
        the main thread: elsewhere (a server run in a thread, as in tests) nothing is
        installed and ``begin`` is for the caller to call."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {sig: signal.getsignal(sig) for sig in SIGNALS}

        def heard(sig: int, frame: Any) -> None:
            self.begin()
            handler = previous[signal.Signals(sig)]
            if callable(handler):
                handler(sig, frame)
            elif handler == signal.SIG_DFL:  # nobody else listens: what the signal does by default
                signal.signal(sig, signal.SIG_DFL)
                signal.raise_signal(sig)

        for sig in SIGNALS:
            signal.signal(sig, heard)

        def restore() -> None:
            for sig, handler in previous.items():
                if signal.getsignal(sig) is heard:
                    signal.signal(sig, handler)

        return restore

    def _end(self, tracked: Tracked) -> None:
        tracked.ended = True
        tracked.cancel()

    def _forget(self, tracked: Tracked) -> None:
        with self._lock:
            self._running.discard(tracked)

"""Issue 42, deliverable 3 (SIGTERM): the server stops accepting, lets running
requests go on for a grace period, then ends them with a clear error — a 503
``server_shutting_down`` for a whole request, an SSE error event with that body
for a stream — instead of waiting for them without bound (a 400-token stream
held a SIGTERM 16 s).

The live test runs uvicorn in a thread, where no signal arrives: it does what the
signal handlers do (``Drain.begin``, then uvicorn's ``should_exit``), and ends the
grace itself (``Drain.wait`` replaced), so nothing depends on how fast the machine
decodes. ``test_the_signal_starts_the_drain_then_reaches_uvicorn`` checks the
handlers' chaining on the main thread.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import threading
from concurrent.futures import Future
from typing import Any

import pytest

import structgen
from test_server import ASK, KEY, MODEL, NoStop, metrics
from tiny_model import tiny_model
from waiting import wait_until

HEADERS = {"Authorization": f"Bearer {KEY}"}
LONG = {"model": MODEL, "messages": ASK, "max_tokens": 3_000}  # NoStop: it runs to its max_tokens


def refused(url: str) -> bool:
    """True once a new connection is refused. A connection accepted in the instant
    before uvicorn closes its socket is then dropped unanswered (closed or reset,
    while the request is written or its answer read): that is not yet a refusal, so
    the caller asks again."""
    import httpx2

    try:
        httpx2.get(url, headers=HEADERS, timeout=10)
    except httpx2.ConnectError:
        return True
    except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError):
        return False
    return False


class HeldGrace:
    """A ``Drain.wait`` that returns when the test lets it (from its own thread)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.over = threading.Event()

    async def __call__(self, seconds: float) -> None:
        self.started.set()
        while not self.over.is_set():
            await asyncio.sleep(0.01)


@pytest.mark.server
def test_shutdown_lets_running_requests_go_on_then_ends_them_with_a_503() -> None:
    import httpx2
    import uvicorn

    from structgen.server import Limits, create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer, seed=1)
    NoStop(model, tokenizer)
    app = create_app(model, tokenizer, model_id=MODEL, api_key=KEY, limits=Limits(max_batch=4, shutdown_grace_seconds=30.0))
    grace = HeldGrace()
    app.state.drain.wait = grace
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, "the server started")
    base = f"http://127.0.0.1:{port}/v1"

    streamed: list[str] = []
    whole: Future[Any] = Future()

    def stream() -> None:
        with httpx2.stream("POST", base + "/chat/completions", json={**LONG, "stream": True}, headers=HEADERS, timeout=300) as response:
            streamed.extend(line for line in response.iter_lines() if line.startswith("data: "))

    def ask() -> None:
        try:
            whole.set_result(httpx2.post(base + "/chat/completions", json=LONG, headers=HEADERS, timeout=300))
        except Exception as exc:
            whole.set_exception(exc)

    streaming = threading.Thread(target=stream)
    streaming.start()
    threading.Thread(target=ask).start()
    wait_until(lambda: metrics(base)["structgen_running_sequences"] == 2, "both requests decoding")

    app.state.drain.begin()  # what SIGTERM does: the app's handler, then uvicorn's
    server.should_exit = True
    assert grace.started.wait(60), "the grace did not start"
    # uvicorn closes its listening socket on its next tick after ``should_exit``: from
    # then on, no new connection is accepted (while the running requests go on).
    wait_until(lambda: refused(base + "/models"), "new connections refused during the grace")
    during = len(streamed)
    wait_until(lambda: len(streamed) > during + 5, "the stream going on during the grace")
    assert not whole.done()

    grace.over.set()  # the grace is over
    answer = whole.result(timeout=120)
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    error = answer.json()["error"]
    assert error["code"] == "server_shutting_down" and error["type"] == "server_error" and "shutting down" in error["message"]
    streaming.join(timeout=120)
    assert not streaming.is_alive()
    last = json.loads(streamed[-1].removeprefix("data: "))
    assert last == {"error": error}  # the same error, as the stream's last event
    assert all("[DONE]" not in line for line in streamed)
    thread.join(timeout=120)
    assert not thread.is_alive(), "the server did not finish shutting down"


class Job:
    def __init__(self) -> None:
        self.done: Future[list[Any]] = Future()


class FakeHandle:
    """A submitted job as ``Drain`` sees it; ``cancel`` ends it as the scheduler does."""

    def __init__(self) -> None:
        self.job = Job()
        self.sequences = [type("Sequence", (), {"finish_reason": None})()]

    async def result(self) -> list[Any]:
        return await asyncio.wrap_future(self.job.done)

    def cancel(self) -> None:
        if not self.job.done.done():
            self.sequences[0].finish_reason = "cancelled"
            self.job.done.set_result(self.sequences)


def test_a_request_that_finishes_within_the_grace_is_answered() -> None:
    from structgen.server.errors import APIError
    from structgen.server.shutdown import Drain

    async def scenario() -> None:
        released = asyncio.Event()

        async def wait(seconds: float) -> None:
            await released.wait()

        drain = Drain(10.0, wait)
        drain.attach(asyncio.get_running_loop())
        finishing, cut = FakeHandle(), FakeHandle()
        tracked_finishing, tracked_cut = drain.track(finishing), drain.track(cut)  # type: ignore[arg-type]
        drain.begin()
        await asyncio.sleep(0)
        assert drain.closed and drain.running == 2
        with pytest.raises(APIError) as refused:
            drain.check_open()  # a new request
        assert refused.value.status == 503 and refused.value.code == "server_shutting_down"
        finishing.sequences[0].finish_reason = "stop"
        finishing.job.done.set_result(finishing.sequences)
        assert await tracked_finishing.result() == finishing.sequences
        assert drain.running == 1
        released.set()
        with pytest.raises(APIError) as ended:
            await tracked_cut.result()
        assert ended.value.status == 503 and drain.running == 0
        late = FakeHandle()  # submitted after the grace (its compile ran long): ended at once
        with pytest.raises(APIError):
            await drain.track(late).result()  # type: ignore[arg-type]
        drain.stop()

    asyncio.run(scenario())


def test_the_signal_starts_the_drain_then_reaches_uvicorn() -> None:
    """``Drain.on_signals`` (installed by the app's lifespan, after uvicorn's own
    handlers) runs before the handler it found, and puts it back after."""
    from structgen.server.shutdown import Drain

    heard: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda sig, frame: heard.append(sig))
    loop = asyncio.new_event_loop()
    try:
        drain = Drain(5.0)
        drain.attach(loop)
        restore = drain.on_signals()
        signal.raise_signal(signal.SIGTERM)
        loop.run_until_complete(asyncio.sleep(0.01))
        assert heard == [signal.SIGTERM] and drain.closed
        restore()
        signal.raise_signal(signal.SIGTERM)
        assert heard == [signal.SIGTERM] * 2
        drain.stop()
    finally:
        signal.signal(signal.SIGTERM, before)
        loop.close()

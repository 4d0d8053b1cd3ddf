"""The server's explicit limits, and the checks that enforce them.

Each one turns what would be a slow failure (memory, a minutes-long compile, a
queue nobody drains) into an immediate, clear answer: a 400 for a request that
is too big, a 429 (with ``retry-after``, which the SDK honours) while too many
requests are in flight.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from starlette.requests import Request

from server.errors import APIError, bad_request
from server.protocol import ChatCompletionRequest, GenerationRequest, JSONObjectFormat, JSONSchemaResponseFormat


@dataclass(frozen=True)
class Limits:
    max_batch: int = 16  # sequences decoded together; more wait in the queue
    max_requests: int = 64  # requests in flight (compiling, queued or decoding); more get a 429
    max_body_bytes: int = 1 << 20  # a request's JSON body
    max_schema_bytes: int = 64 << 10  # each JSON Schema, grammar or regex, as compact JSON text
    compile_seconds: float = 30.0  # turning a request's constraints into compiled grammars
    max_tokens: int = 4096  # max_tokens / max_completion_tokens a request may ask for
    default_max_tokens: int = 512  # when a chat request does not say
    # the clock a compile's deadline checks count compile_seconds on, for tests and simulations to
    # replace (docs/testing.md); the server's own wait for a compile is always in real seconds
    compile_clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        for name in ("max_batch", "max_requests", "max_body_bytes", "max_schema_bytes", "max_tokens", "default_max_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.compile_seconds <= 0:
            raise ValueError(f"compile_seconds must be positive, got {self.compile_seconds}")


class RequestSlots:
    """Counts requests in flight; one more than allowed is a 429."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._taken = 0
        self._lock = threading.Lock()

    def take(self) -> Slot:
        with self._lock:
            if self._taken >= self.limit:
                raise APIError(
                    f"the server is busy: {self.limit} requests are in flight; retry shortly",
                    status=429,
                    code="too_many_requests",
                    retry_after=1,
                )
            self._taken += 1
        return Slot(self)

    def _give_back(self) -> None:
        with self._lock:
            self._taken -= 1


class Slot:
    """One request's place; given back once, however often ``release`` is called
    (on the scheduler thread when its job ends, or where it failed before)."""

    def __init__(self, slots: RequestSlots) -> None:
        self._slots: RequestSlots | None = slots
        self._lock = threading.Lock()

    def release(self, *_: Any) -> None:
        with self._lock:
            slots, self._slots = self._slots, None
        if slots is not None:
            slots._give_back()


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, or a 400 as soon as it is longer than ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_big(int(declared), limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_big(len(body), limit)
    return bytes(body)


def _too_big(size: int, limit: int) -> APIError:
    return bad_request(f"the request body is {size} bytes or more; the limit is {limit}", code="request_too_large")


def check_size(value: Any, param: str, limit: int) -> None:
    """A 400 when a schema, grammar or regex is larger than ``limit`` bytes (as compact JSON)."""
    size = len(value.encode("utf-8")) if isinstance(value, str) else len(json.dumps(value, separators=(",", ":")).encode("utf-8"))
    if size > limit:
        raise bad_request(f"{param} is {size} bytes; the limit is {limit}", param, "schema_too_large")


def check_constraint_sizes(request: GenerationRequest, limit: int) -> None:
    """A 400 for the first schema, grammar, regex or choice list larger than ``limit`` bytes."""
    given: list[tuple[str, Any]] = []
    if isinstance(request.response_format, JSONSchemaResponseFormat):
        given.append(("response_format", request.response_format.json_schema.schema_))
    for param in ("guided_json", "guided_regex", "guided_grammar", "guided_choice"):
        given.append((param, getattr(request, param)))
    extra = request.model_extra or {}
    for param in ("structured_outputs", "regex", "json_schema"):  # other servers' fields (grammars.extension_formats)
        given.append((param, extra.get(param)))
    if isinstance(request.response_format, JSONObjectFormat):
        given.append(("response_format", (request.response_format.model_extra or {}).get("schema")))
    if isinstance(request, ChatCompletionRequest):
        for index, tool in enumerate(request.tools or ()):
            given.append((f"tools[{index}].function.parameters", tool.function.parameters))
    for param, value in given:
        if value is not None:
            check_size(value, param, limit)

"""The server's explicit limits, and the checks that enforce them.

Each one turns what would be a slow failure (memory, a minutes-long compile, a
queue nobody drains) into an immediate, clear answer: a 400 for a request that
is too big or nests too deep, a 429 (with ``retry-after``, which the SDK honours)
while too many requests are in flight, a 408 for a body that stalls, a 415 for
one that is not JSON.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from starlette.requests import Request
from structgen.tool_calls import MAX_JSON_DEPTH, json_depth, value_depth

from structgen.server.errors import APIError, bad_request
from structgen.server.protocol import (
    ChatCompletionRequest,
    CustomToolParam,
    GenerationRequest,
    JSONObjectFormat,
    JSONSchemaResponseFormat,
    StructuralTagFormat,
)


@dataclass(frozen=True)
class Limits:
    max_batch: int = 16  # sequences decoded together; more wait in the queue
    max_requests: int = 64  # requests in flight (compiling, queued or decoding); more get a 429
    max_body_bytes: int = 1 << 20  # a request's JSON body
    max_schema_bytes: int = 64 << 10  # each JSON Schema, grammar or regex, as compact JSON text
    compile_seconds: float = 30.0  # turning a request's constraints into compiled grammars
    max_tokens: int = 4096  # max_tokens / max_completion_tokens a request may ask for
    default_max_tokens: int = 512  # when a chat request does not say
    max_tools: int = 128  # tools one request may declare (OpenAI's own limit); each is one more grammar to compile
    max_json_depth: int = MAX_JSON_DEPTH  # arrays and objects nested in a schema, tool parameters or a past call's arguments (at most the default)
    body_seconds: float = 30.0  # a request's body must have arrived this long after its reading began: else a 408
    shutdown_grace_seconds: float = 25.0  # on SIGTERM, running requests' time to finish before they end with a 503
    max_compiled_grammars: int = 64  # compiled grammars kept for reuse, in this process (structgen.compiled_budget)
    max_compiled_bytes: int = 2 << 30  # bytes their tables may hold together; past either, the least recently used go
    max_stored_responses: int = 1000  # Responses API answers kept (store: true) for GET and previous_response_id; the oldest goes first
    stored_response_seconds: float = 3600.0  # how long a stored response is kept
    # the clock a compile's deadline checks count compile_seconds on, for tests and simulations to
    # replace (docs/testing.md); the server's own wait for a compile is always in real seconds
    compile_clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        for name in ("max_batch", "max_requests", "max_body_bytes", "max_schema_bytes", "max_tools", "max_tokens", "default_max_tokens", "max_json_depth", "max_compiled_grammars", "max_compiled_bytes", "max_stored_responses"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("compile_seconds", "body_seconds", "stored_response_seconds"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_json_depth > MAX_JSON_DEPTH:  # deeper overflows Python's stack in the checks that walk them
            raise ValueError(f"max_json_depth is at most {MAX_JSON_DEPTH} (structgen.tool_calls.MAX_JSON_DEPTH), got {self.max_json_depth}")
        if self.shutdown_grace_seconds < 0:
            raise ValueError(f"shutdown_grace_seconds must not be negative, got {self.shutdown_grace_seconds}")


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


def check_content_type(request: Request) -> None:
    """A 415 unless the body is declared JSON (``application/json``, in UTF-8 when a
    charset is given); a request without ``Content-Type`` is read as JSON."""
    given = request.headers.get("content-type")
    if given is None:
        return
    media, *parameters = (part.strip().lower() for part in given.split(";"))
    charsets = [value.strip('"') for name, _, value in (p.partition("=") for p in parameters) if name.strip() == "charset"]
    if media != "application/json" or any(charset not in ("utf-8", "utf8") for charset in charsets):
        shown = given if len(given) <= 80 else given[:77] + "..."
        raise APIError(
            f"the body must be JSON sent as Content-Type: application/json, not {shown!r}", status=415, code="unsupported_media_type"
        )


async def read_body(request: Request, limit: int, seconds: float | None = None) -> bytes:
    """The request's body, or a 400 as soon as it is longer than ``limit`` bytes, or
    a 408 (and the connection closed) when it has not all arrived ``seconds`` after
    the reading began: a client that stalls mid-body holds no request slot and no
    connection for longer."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_big(int(declared), limit)
    body = bytearray()
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise _too_big(len(body), limit)
    except TimeoutError:
        raise APIError(
            f"the request body did not arrive within {seconds:g} s", status=408, code="request_timeout", headers={"connection": "close"}
        ) from None
    return bytes(body)


def _too_big(size: int, limit: int) -> APIError:
    return bad_request(f"the request body is {size} bytes or more; the limit is {limit}", code="request_too_large")


def check_size(value: Any, param: str, limit: int) -> None:
    """A 400 when a schema, grammar or regex is larger than ``limit`` bytes (as compact JSON)."""
    size = len(value.encode("utf-8")) if isinstance(value, str) else len(json.dumps(value, separators=(",", ":")).encode("utf-8"))
    if size > limit:
        raise bad_request(f"{param} is {size} bytes; the limit is {limit}", param, "schema_too_large")


def check_tool_count(request: GenerationRequest, limit: int) -> None:
    """A 400 ``too_many_tools`` for a request declaring more than ``limit`` tools:
    each is compiled into the calls' grammar, whose size (and memory) grows with
    the tool set, so a thousand small tools under the body limit are refused here,
    before anything is built."""
    tools = getattr(request, "tools", None)
    if tools is not None and len(tools) > limit:
        raise bad_request(f"tools: {len(tools)} tools given; at most {limit} are allowed in one request",
                          "tools", "too_many_tools")


def check_constraint_sizes(request: GenerationRequest, limit: int) -> None:
    """A 400 for the first schema, grammar, regex or choice list larger than ``limit`` bytes."""
    for param, value in _constraints(request):
        if value is not None:
            check_size(value, param, limit)


JSON_TEXT_FIELDS = frozenset({"guided_json", "json_schema", "response_format", "structured_outputs.json",
                              "structured_outputs.structural_tag"})
"""Constraint fields whose string value is JSON text (read with ``json.loads``)."""


def check_nesting(request: GenerationRequest, limit: int) -> None:
    """A 400 ``json_too_deep`` naming the first schema, tool ``parameters`` or past
    call's ``arguments`` whose arrays and objects nest more than ``limit`` deep.
    Checked before anything parses or walks them: checking a schema, translating
    it and a chat template's rendering recurse once per level (a past call nested
    100,000 deep was a ``RecursionError``). The body's own nesting is bounded by its
    JSON parser (about 200 levels; deeper is a 400 ``invalid_json``), but JSON
    inside strings is not."""
    given: list[tuple[str, Any]] = []
    for param, value in _constraints(request):
        if param == "structured_outputs" and isinstance(value, dict):  # each of its keys on its own
            given += [(f"structured_outputs.{key}", inner) for key, inner in value.items()]
        else:
            given.append((param, value))
    if isinstance(request, ChatCompletionRequest):
        for index, message in enumerate(request.messages):
            for number, call in enumerate(message.tool_calls or ()):
                if call.function is not None:
                    where = f"messages[{index}].tool_calls[{number}].function.arguments"
                    given.append((where, call.function.arguments))
    for param, value in given:
        if value is None:
            continue
        if isinstance(value, str):
            json_text = param in JSON_TEXT_FIELDS or param.endswith(".function.arguments")
            depth = json_depth(value) if json_text else 0
        else:
            depth = value_depth(value, limit)
        if depth > limit:
            raise bad_request(f"{param} nests more than {limit} arrays and objects deep", param, "json_too_deep")


def _constraints(request: GenerationRequest) -> list[tuple[str, Any]]:
    """Each field that carries a schema, grammar, regex or choice list: its name and value."""
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
    if isinstance(request.response_format, StructuralTagFormat):
        given.append(("response_format", request.response_format.model_dump()))
    if isinstance(request, ChatCompletionRequest):
        for index, tool in enumerate(request.tools or ()):
            if isinstance(tool, CustomToolParam):
                grammar = tool.custom.format.grammar if tool.custom.format is not None else None
                given.append((f"tools[{index}].custom.format.grammar.definition", grammar.definition if grammar else None))
            else:
                given.append((f"tools[{index}].function.parameters", tool.function.parameters))
    return given

"""Counts HTTP requests by endpoint and status code (ASGI middleware).

Pure ASGI rather than Starlette's ``BaseHTTPMiddleware``: that one wraps
streaming responses and hides client disconnects from the endpoints, which must
see them to free a hung-up client's place in the batch. It is the outermost of
the app's own middleware, so every status is counted: a 500 for an unexpected
exception is answered inside it (``errors.InternalErrors``).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, MutableMapping

from structgen.server.metrics import Counter

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

ENDPOINTS = frozenset({"/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/models", "/health", "/metrics", "/openapi.json"})
BY_ID = ("/v1/responses/", "/v1/models/")
"""Paths that end in an id, counted as one endpoint each (``/v1/responses/{id}``)."""


def endpoint_of(path: str) -> str:
    """The endpoint label of ``path``: unknown paths are ``other``, so that they
    cannot grow the label set."""
    if path in ENDPOINTS:
        return path
    for prefix in BY_ID:
        if path.startswith(prefix) and len(path) > len(prefix):
            return prefix + "{id}"
    return "other"


class RequestMetrics:
    def __init__(self, app: ASGIApp, counter: Counter) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        endpoint = endpoint_of(scope.get("path", ""))

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.counter.add(endpoint=endpoint, status=str(message["status"]))
            await send(message)

        await self.app(scope, receive, counted)

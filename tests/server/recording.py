"""An ASGI wrapper that keeps the path and JSON body of every POST the app gets:
what a client library really sent, for the client tests to assert on."""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable


class Recorder:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks: list[bytes] = []

        async def recording() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.requests.append((scope["path"], json.loads(b"".join(chunks) or b"{}")))
            return message

        await self.app(scope, recording, send)

    def paths(self) -> set[str]:
        return {path for path, _ in self.requests}

    def bodies(self, path: str) -> list[dict[str, Any]]:
        """The bodies sent to ``path``, in order."""
        return [body for at, body in self.requests if at == path]

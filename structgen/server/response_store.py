"""The responses kept for ``GET /v1/responses/{id}`` and ``previous_response_id``.

In memory and bounded: at most ``max_entries`` responses, each kept at most
``max_seconds``; the oldest goes first when the store is full. A response past
either bound is gone: fetching it is a 404, continuing it a 400
``previous_response_not_found`` that says what the bounds are. A request with
``store: false`` leaves nothing here.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from structgen.server.errors import APIError, bad_request
from structgen.server.responses_protocol import Response


@dataclass(frozen=True)
class Stored:
    response: Response
    conversation: list[dict[str, Any]]  # chat messages: the input's, then the output's
    at: float


class ResponseStore:
    def __init__(self, max_entries: int, max_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_entries = max_entries
        self.max_seconds = max_seconds
        self._clock = clock
        self._kept: OrderedDict[str, Stored] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._kept)

    def put(self, response: Response, conversation: list[dict[str, Any]]) -> None:
        with self._lock:
            self._expire()
            self._kept[response.id] = Stored(response, conversation, self._clock())
            while len(self._kept) > self.max_entries:
                self._kept.popitem(last=False)

    def get(self, response_id: str) -> Stored | None:
        with self._lock:
            self._expire()
            return self._kept.get(response_id)

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._kept.pop(response_id, None) is not None

    def fetch(self, response_id: str) -> Stored:
        """The stored response, or a 404 naming the bounds it may have passed."""
        found = self.get(response_id)
        if found is None:
            raise APIError(f"no response with id {response_id!r}: {self._bounds()}", status=404, code="not_found")
        return found

    def history(self, response_id: str) -> list[dict[str, Any]]:
        """The conversation ``previous_response_id`` continues, or a 400 naming it."""
        found = self.get(response_id)
        if found is None:
            raise bad_request(f"previous response {response_id!r} not found: {self._bounds()}",
                              "previous_response_id", "previous_response_not_found")
        return found.conversation

    def _bounds(self) -> str:
        return (f"this server keeps the last {self.max_entries} responses stored (store: true) for "
                f"{self.max_seconds:g} s, in memory")

    def _expire(self) -> None:
        oldest = self._clock() - self.max_seconds
        while self._kept:
            first = next(iter(self._kept.values()))
            if first.at >= oldest:
                break
            self._kept.popitem(last=False)

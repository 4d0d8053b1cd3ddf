"""Server-sent events as the OpenAI client reads them: ``data: <json>`` and a blank line."""

from __future__ import annotations

import json
from typing import AsyncIterator, Callable

from pydantic import BaseModel

from structgen.server.errors import APIError, internal_error, request_error


def event(chunk: BaseModel) -> str:
    return f"data: {chunk.model_dump_json()}\n\n"


def error_event(error: APIError) -> str:
    """A failure after the stream started (the status line is long gone)."""
    return f"data: {json.dumps(error.body(), ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"


async def guarded(
    stream_id: str,
    events: AsyncIterator[str],
    cancel: Callable[[], None],
    done: str | None = DONE,
    on_error: Callable[[APIError], str] = error_event,
) -> AsyncIterator[str]:
    """``events``, then ``done`` (chat and text completions end with ``data: [DONE]``;
    the Responses API with its last event). A failure after the stream started
    becomes an error event, ``on_error``'s (headers are sent: the only way left to
    report it); ``cancel`` runs at the end either way, a no-op once the job is over,
    else the client went away and its place in the batch is freed."""
    try:
        async for chunk in events:
            yield chunk
        if done is not None:
            yield done
    except APIError as exc:
        yield on_error(exc)
    except Exception as exc:
        coded = request_error(exc)  # a library error about the request: a 400's body
        if coded is not None:
            yield on_error(coded)
        else:  # logged with its traceback; the client gets only "internal error" and the request's id
            yield on_error(internal_error(exc, f"stream {stream_id}"))
    finally:
        cancel()

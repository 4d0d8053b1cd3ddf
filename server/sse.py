"""Server-sent events as the OpenAI client reads them: ``data: <json>`` and a blank line."""

from __future__ import annotations

import json

from pydantic import BaseModel

from server.errors import APIError


def event(chunk: BaseModel) -> str:
    return f"data: {chunk.model_dump_json()}\n\n"


def error_event(error: APIError) -> str:
    """A failure after the stream started (the status line is long gone)."""
    return f"data: {json.dumps(error.body(), ensure_ascii=False)}\n\n"

"""Errors as the OpenAI client reads them: ``{"error": {message, type, param, code}}``.

The SDK maps the status to an exception class (400 ``BadRequestError``, 401
``AuthenticationError``, 404 ``NotFoundError``...) and retries 408/409/429/5xx, so a
deterministic failure must be a 4xx, or say ``x-should-retry: false``.
"""

from __future__ import annotations

from typing import Any

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error", 429: "rate_limit_error"}


class APIError(Exception):
    """A request the server answers with an OpenAI-shaped error body."""

    def __init__(
        self, message: str, *, status: int = 400, param: str | None = None, code: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code
        self.retry_after = retry_after  # seconds, for a 429

    @property
    def type(self) -> str:
        return _TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def headers(self) -> dict[str, str]:
        if self.retry_after is not None:
            return {"retry-after": str(self.retry_after)}
        # a server error that would fail again the same way: the SDK must not retry it
        return {"x-should-retry": "false"} if self.status >= 500 else {}


def bad_request(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(message, status=400, param=param, code=code)

"""Errors as the OpenAI client reads them: ``{"error": {message, type, param, code}}``.

The SDK maps the status to an exception class (400 ``BadRequestError``, 401
``AuthenticationError``, 404 ``NotFoundError``...) and retries 408/409/429/5xx, so a
deterministic failure must be a 4xx, or say ``x-should-retry: false``. Client
libraries (pydantic-ai, langchain) report a 404 as an unknown model whatever it
says, so both 404s carry a code and a message that tell them apart: an unknown
model ``model_not_found``, an unknown path ``not_found`` naming the path.
"""

from __future__ import annotations

from typing import Any

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error", 429: "rate_limit_error"}


class APIError(Exception):
    """A request the server answers with an OpenAI-shaped error body."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        retry_after: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code
        self.retry_after = retry_after  # seconds, for a 429
        self.extra_headers = dict(headers or {})  # e.g. a 405's ``allow``

    @property
    def type(self) -> str:
        return _TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def headers(self) -> dict[str, str]:
        headers = dict(self.extra_headers)
        if self.retry_after is not None:
            headers["retry-after"] = str(self.retry_after)
        elif self.status >= 500:
            # a server error that would fail again the same way: the SDK must not retry it
            headers["x-should-retry"] = "false"
        return headers


def bad_request(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(message, status=400, param=param, code=code)


def model_not_found(requested: str, model_id: str) -> APIError:
    """OpenAI's answer for a model it does not serve (in a request's ``model``, or ``GET /v1/models/{id}``)."""
    return APIError(f"the model {requested!r} does not exist (this server has {model_id!r})", status=404, param="model", code="model_not_found")


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def route_error(status: int, detail: str, method: str, path: str, headers: dict[str, str] | None = None, *, under_v1: bool = False) -> APIError:
    """A routing failure (Starlette's ``HTTPException``) as an OpenAI error with a
    code: 404 ``not_found`` naming the path (``under_v1``: ``/v1`` + the path is an
    endpoint, so the client's base URL lacks its ``/v1``), 405 ``method_not_allowed``
    naming the methods the path takes (its ``allow`` header)."""
    code = _HTTP_CODES.get(status, f"http_{status}")
    if status == 404:
        message = f"no such endpoint: {method} {path}"
        if under_v1:
            message += f" (did you mean /v1{path}? a client's base_url ends in /v1)"
    elif status == 405:
        allowed = {name.lower(): value for name, value in (headers or {}).items()}.get("allow")
        message = f"{path} does not take {method}" + (f", only {allowed}" if allowed else "")
    else:
        message = detail
    return APIError(message, status=status, code=code, headers=headers)

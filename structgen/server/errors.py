"""Errors as the OpenAI client reads them: ``{"error": {message, type, param, code}}``.

The SDK maps the status to an exception class (400 ``BadRequestError``, 401
``AuthenticationError``, 404 ``NotFoundError``...) and retries 408/409/429/5xx, so a
deterministic failure must be a 4xx, or say ``x-should-retry: false``. Client
libraries (pydantic-ai, langchain) report a 404 as an unknown model whatever it
says, so both 404s carry a code and a message that tell them apart: an unknown
model ``model_not_found``, an unknown path ``not_found`` naming the path.

Every request gets an id (``x-request-id`` on every response; ``REQUEST_ID`` while
it runs). An unexpected exception is logged with that id and answered with a 500
that says only "internal error" and the id (``InternalErrors``): exception text can
hold paths, file names or other requests' data, and belongs in the server's log.
"""

from __future__ import annotations

import logging
import uuid
from contextvars import ContextVar
from typing import Any, Awaitable, Callable, MutableMapping

from starlette.responses import JSONResponse
from structgen.engine.stack import AmbiguityLimitError
from structgen.lark_rules import GrammarError

log = logging.getLogger("structgen.server")

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
        """OpenAI's error body; ``code`` is never null (client libraries tell errors
        apart by it): where no particular one was given, the status's own."""
        code = self.code if self.code is not None else _DEFAULT_CODES.get(self.status, f"http_{self.status}")
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": code}}

    def headers(self) -> dict[str, str]:
        headers = dict(self.extra_headers)
        if self.retry_after is not None:
            headers["retry-after"] = str(self.retry_after)
        elif self.status >= 500:
            # a server error that would fail again the same way: the SDK must not retry it
            headers["x-should-retry"] = "false"
        return headers


_DEFAULT_CODES = {400: "invalid_value", 401: "invalid_api_key", 404: "not_found", 408: "request_timeout",
                  413: "request_too_large", 415: "unsupported_media_type", 429: "too_many_requests",
                  499: "client_disconnected", 500: "internal_error", 503: "server_shutting_down"}
"""The code of an error that names no more particular one."""


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


def request_error(exc: BaseException) -> APIError | None:
    """A library error that says what is wrong with the request — structgen's checks
    of a constraint's language carry a ``code``: ``empty_language``
    (``structgen.productive.EmptyLanguage``, a schema's ``NoFiniteValue``),
    ``unspellable`` (``structgen.spelling.Unspellable``) — as a 400 with that code;
    None for any other error."""
    code = getattr(exc, "code", None)
    if isinstance(exc, GrammarError) and isinstance(code, str):
        return bad_request(str(exc), getattr(exc, "param", None), code)
    if isinstance(exc, AmbiguityLimitError):  # found while decoding: the grammar's, not the server's
        return bad_request(f"the grammar is too ambiguous to follow while generating: {exc}", None, "grammar_too_ambiguous")
    return None


def with_cause_code(error: APIError) -> APIError:
    """``error``, a 400 raised for a library error (the endpoints name the field),
    given that error's ``code`` where it has none."""
    cause = error.__cause__ or error.__context__
    if error.status == 400 and error.code is None and cause is not None:
        coded = request_error(cause)
        if coded is not None:
            error.code = coded.code
    return error


REQUEST_ID: ContextVar[str | None] = ContextVar("structgen_request_id", default=None)
"""The id of the request being served (set by ``InternalErrors``; worker threads
started with ``asyncio.to_thread`` see it too)."""


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


def internal_error(exc: BaseException, what: str = "request") -> APIError:
    """An unexpected failure: logged with its traceback and the request's id, and
    answered with only "internal error" and that id (for a stream, as its error event)."""
    request_id = REQUEST_ID.get() or new_request_id()
    log.error("%s %s failed: %s: %s", what, request_id, type(exc).__name__, exc, exc_info=exc)
    return APIError(f"internal error (request id {request_id})", status=500, code="internal_error")


_VALIDATION_CODES = {"missing": "missing_required_parameter", "json_invalid": "invalid_json"}


def validation_error(errors: list[Any]) -> APIError:
    """The first of pydantic's errors (FastAPI's 422) as a 400 naming the field:
    ``param`` its path without pydantic's union-member tags (``messages.0.content``,
    not ``messages.0.content.str``); ``code`` ``missing_required_parameter``,
    ``invalid_json``, ``invalid_type`` or ``invalid_value``."""
    first = errors[0] if errors else {}
    location = [str(part) for part in first.get("loc", ()) if part != "body" and not _union_tag(part)]
    param = ".".join(location) or None
    message = str(first.get("msg", "invalid request"))
    kind = str(first.get("type", ""))
    code = _VALIDATION_CODES.get(kind) or ("invalid_type" if kind.endswith(("_type", "_parsing")) else "invalid_value")
    return bad_request(f"{param}: {message}" if param else message, param, code)


def _union_tag(part: Any) -> bool:
    """Whether a location part is the member of a union pydantic tried (``str``,
    ``list[ContentPart]``), not a field: no request field has such a name."""
    return isinstance(part, str) and (part in ("str", "int", "float", "bool") or "[" in part)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class InternalErrors:
    """ASGI middleware: gives each request its id (``REQUEST_ID``, an ``x-request-id``
    header), and answers an exception the app did not handle with a 500 "internal
    error" body naming the id, its details logged. Handled here rather than by an
    ``exception_handler(Exception)``: Starlette runs those in its outermost
    middleware and re-raises, so uvicorn closed the keep-alive connection after
    every 500 and the request metrics (inside) never saw its status."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        token = REQUEST_ID.set(request_id)
        started = False

        async def with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", ()), (b"x-request-id", request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, with_id)
        except Exception as exc:
            error = internal_error(exc, f"{scope.get('method', '')} {scope.get('path', '')} request")
            if not started:  # else the status line is gone, and the unfinished response ends the connection
                await JSONResponse(error.body(), status_code=error.status, headers=error.headers())(scope, receive, with_id)
        finally:
            REQUEST_ID.reset(token)

"""Issue 42, deliverable 5: ``/metrics`` and the OpenAPI document behind the API
key on request (``protect_metrics``), the key compared in constant time, a body
that stalls cut off with a 408, ``Content-Type`` checked (415)."""

from __future__ import annotations

import hmac
import json
import socket
from typing import Any, Iterator

import pytest

import structgen
from test_server import ASK, KEY, MODEL, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

BODY_SECONDS = 1.0
"""The server's wait for a body here: only the stalled client below waits it out
(every other request sends its body with its headers)."""


@pytest.fixture(scope="module")
def protected() -> Iterator[str]:
    """A server with ``protect_metrics`` and a short body wait; yields its root URL."""
    from structgen.server import Limits, create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    app = create_app(model, tokenizer, model_id=MODEL, api_key=KEY, protect_metrics=True, limits=Limits(body_seconds=BODY_SECONDS))
    with serving(app) as base:
        yield base.removesuffix("/v1")


def get(root: str, path: str, key: str | None = None) -> Any:
    import httpx2

    return httpx2.get(root + path, headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=60)


def chat(root: str, content: bytes, content_type: str | None) -> Any:
    import httpx2

    headers = {"Authorization": f"Bearer {KEY}"} | ({"Content-Type": content_type} if content_type else {})
    return httpx2.post(root + "/v1/chat/completions", content=content, headers=headers, timeout=60)


def test_protect_metrics_puts_metrics_and_the_openapi_document_behind_the_key(protected: str) -> None:
    for path in ("/metrics", "/openapi.json"):
        for key in (None, "wrong"):
            refused = get(protected, path, key)
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key", (path, key)
    assert get(protected, "/metrics", KEY).text.startswith("# HELP")
    assert get(protected, "/openapi.json", KEY).json()["paths"]["/v1/chat/completions"]
    assert get(protected, "/health").json() == {"status": "ok"}  # probes carry no key
    for path in ("/docs", "/redoc"):
        assert get(protected, path, KEY).status_code == 404  # not served at all


def test_by_default_metrics_and_the_openapi_document_are_open() -> None:
    """The default keeps Prometheus scrapers that send no key working."""
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    with serving(create_app(tiny_model(tokenizer), tokenizer, model_id=MODEL, api_key=KEY)) as base:
        root = base.removesuffix("/v1")
        assert get(root, "/metrics").status_code == 200 and get(root, "/openapi.json").status_code == 200


def test_protect_metrics_needs_a_key() -> None:
    from structgen.server import create_app

    with pytest.raises(ValueError, match="api_key"):
        create_app(None, structgen.load_tokenizer(), protect_metrics=True, engine=object())


def test_the_key_is_compared_in_constant_time(protected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(given: bytes, expected: bytes) -> bool:
        compared.append((given, expected))
        return real(given, expected)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert get(protected, "/v1/models", "x" * len(KEY)).status_code == 401
    assert get(protected, "/v1/models", KEY).status_code == 200
    assert compared == [(f"Bearer {'x' * len(KEY)}".encode(), f"Bearer {KEY}".encode()), (f"Bearer {KEY}".encode(),) * 2]
    host, port = protected.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as raw:  # a header that is no ASCII: a 401, not a 500
        raw.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xe9\xff\r\nConnection: close\r\n\r\n")
        assert read_all(raw).startswith(b"HTTP/1.1 401 ")


def read_all(raw: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := raw.recv(65536):
        received += chunk
    return received


def test_a_body_that_stalls_is_cut_off_with_a_408(protected: str) -> None:
    """Headers and part of a body, then nothing: the server answers 408 once its
    ``body_seconds`` have passed, and closes the connection (the socket's own
    timeout only guards against a hang)."""
    host, port = protected.removeprefix("http://").split(":")
    part = b'{"model": "tiny", '
    with socket.create_connection((host, int(port)), timeout=120) as raw:
        raw.sendall(
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(part) + 100}\r\n\r\n".encode() + part
        )
        answer = read_all(raw)  # returns: the server closed the connection
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b"connection: close" in head.lower()
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout" and error["type"] == "invalid_request_error" and error["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"])
def test_a_body_not_declared_json_is_a_415(protected: str, content_type: str) -> None:
    response = chat(protected, json.dumps({"model": MODEL, "messages": ASK, "max_tokens": 1}).encode(), content_type)
    assert response.status_code == 415, response.text
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type" and error["type"] == "invalid_request_error" and "application/json" in error["message"]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", None])
def test_json_bodies_are_accepted(protected: str, content_type: str | None) -> None:
    response = chat(protected, json.dumps({"model": MODEL, "messages": ASK, "max_tokens": 1}).encode(), content_type)
    assert response.status_code == 200, response.text

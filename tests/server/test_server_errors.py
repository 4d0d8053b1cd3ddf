"""Issue 42, robust errors: what used to be a 500 is a 400 naming the field, and
a 500 that is left says only "internal error" and a request id, leaves the
keep-alive connection usable and is counted in ``/metrics``.

Each test failed before its fix: ``seed`` past torch's range ("Overflow when
unpacking long long"), a past call nested 100,000 deep (a ``RecursionError``), a
guided grammar's ``%import`` of a missing module (``FileNotFoundError`` naming a
path), content parts other than text (pydantic's "Input should be a valid
string"), a 500 echoing the exception and dropping the connection.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
from typing import Any, Iterator

import pytest

import structgen
from test_server import ASK, KEY, MODEL, metrics, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


class Failing:
    """A forward hook that raises while ``armed``: a decoding step that fails as an
    internal error would, its message holding what must not reach a client."""

    SECRET = "secret detail in /srv/structgen/private.txt"

    def __init__(self, model: Any) -> None:
        self.armed = False
        model.register_forward_hook(self._hook)

    def _hook(self, module: Any, args: Any, output: Any) -> Any:
        if self.armed:
            raise RuntimeError(self.SECRET)
        return output


@pytest.fixture(scope="module")
def app_server() -> Iterator[tuple[str, Failing]]:
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    failing = Failing(model)
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield base, failing


def post(base: str, body: dict[str, Any]) -> Any:
    import httpx2

    return httpx2.post(base + "/chat/completions", json={"model": MODEL, "max_tokens": 2, **body}, headers=HEADERS, timeout=120)


def error_of(response: Any, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"] and error["code"]
    return error


def nested_items(levels: int) -> dict[str, Any]:
    """A schema of ``levels`` ``items`` in one another: JSON ``levels + 1`` deep, the
    shape that costs ``jsonschema`` the most stack per level."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


def past_call(arguments: str) -> list[dict[str, Any]]:
    return [*ASK, {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}]


@pytest.mark.parametrize("seed", [2**70, 2**64, -(2**63) - 1])
def test_a_seed_outside_torchs_range_is_a_400_naming_seed(app_server: tuple[str, Failing], seed: int) -> None:
    base, _ = app_server
    error = error_of(post(base, {"messages": ASK, "seed": seed, "temperature": 1}))
    assert error["param"] == "seed" and error["code"] == "invalid_value"


@pytest.mark.parametrize("seed", [2**64 - 1, -(2**63), 0])
def test_seeds_torch_takes_are_accepted(app_server: tuple[str, Failing], seed: int) -> None:
    base, _ = app_server
    response = post(base, {"messages": ASK, "seed": seed, "temperature": 1})
    assert response.status_code == 200, response.text


def test_a_past_call_nested_100000_deep_is_a_400(app_server: tuple[str, Failing]) -> None:
    base, _ = app_server
    deep = "[" * 100_000 + "]" * 100_000
    error = error_of(post(base, {"messages": past_call(json.dumps({"a": 1})[:-1] + ', "b": ' + deep + "}")}))
    assert error["param"] == "messages[1].tool_calls[0].function.arguments" and error["code"] == "json_too_deep"


def test_json_at_the_depth_limit_is_served_and_one_deeper_is_a_400(app_server: tuple[str, Failing]) -> None:
    """``Limits.max_json_depth`` (64) levels are read everywhere JSON comes in (no
    500 from a recursion on the way); one more is a 400 naming the field."""
    from structgen.server import Limits

    base, _ = app_server
    limit = Limits().max_json_depth
    value: Any = 1
    for _ in range(limit - 1):
        value = [value]
    at_limit = {
        "guided_json": nested_items(limit - 1),  # the schema itself is one level
        "response_format": {"type": "json_schema", "json_schema": {"name": "deep", "schema": nested_items(limit - 1)}},
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": nested_items(limit - 3)}}}}],
        "structured_outputs": {"json": nested_items(limit - 1)},
    }
    for field, given in at_limit.items():
        assert post(base, {"messages": ASK, field: given}).status_code == 200, field
    assert post(base, {"messages": past_call(json.dumps({"a": value}))}).status_code == 200
    over = {
        "guided_json": ("guided_json", json.dumps(nested_items(limit))),  # as JSON text too
        "response_format": ("response_format", {"type": "json_schema", "json_schema": {"name": "deep", "schema": nested_items(limit)}}),
        "tools": ("tools[0].function.parameters", [{"type": "function", "function": {"name": "f", "parameters": nested_items(limit)}}]),
        "structured_outputs": ("structured_outputs.json", {"json": json.dumps(nested_items(limit))}),
    }
    for field, (param, given) in over.items():
        error = error_of(post(base, {"messages": ASK, field: given}))
        assert (error["param"], error["code"]) == (param, "json_too_deep"), field
    error = error_of(post(base, {"messages": past_call(json.dumps({"a": [value]}))}))
    assert error["code"] == "json_too_deep"


def test_a_grammar_imports_only_the_grammars_that_ship(
    app_server: tuple[str, Failing], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a file from the server's working directory, even one that is there
    (lark read ``%import .secret.X`` from it, and named a missing module's path)."""
    base, _ = app_server
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret.lark").write_text('LEAKED: "the secret"\n')
    (tmp_path / "nosuchmodule.lark").write_text('FOO: "the secret"\n')
    for grammar, named in (
        ("start: FOO\n%import nosuchmodule.FOO\n", "nosuchmodule"),
        ("start: LEAKED\n%import .secret.LEAKED\n", ".secret"),
        ("start: x\n%import grammars.json.value -> x\n", "grammars.json"),
    ):
        error = error_of(post(base, {"messages": ASK, "guided_grammar": grammar}))
        assert error["param"] == "guided_grammar" and error["code"] == "import_not_allowed"
        assert f"%import {named}" in error["message"] and error["message"].endswith("common, json, lark, python, unicode")
        assert str(tmp_path) not in error["message"] and ".lark" not in error["message"] and "secret" not in error["message"].replace(named, "")
    for grammar in ("start: NUMBER\n%import common.NUMBER\n", "start: value\n%import json.value\n%import json.WS\n%ignore WS\n"):
        assert post(base, {"messages": ASK, "guided_grammar": grammar}).status_code == 200, grammar


def test_content_parts_are_read_as_openai_reads_them(app_server: tuple[str, Failing]) -> None:
    base, _ = app_server
    whole = post(base, {"messages": [{"role": "user", "content": "What is the weather?"}]})
    parts = [{"type": "text", "text": "What is"}, {"type": "text", "text": " the weather?"}]
    joined = post(base, {"messages": [{"role": "user", "content": parts}]})
    assert whole.status_code == joined.status_code == 200
    assert joined.json()["usage"]["prompt_tokens"] == whole.json()["usage"]["prompt_tokens"]  # the same prompt
    for part in (
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-1"}},
    ):
        error = error_of(post(base, {"messages": [{"role": "user", "content": [parts[0], part]}]}))
        assert (error["param"], error["code"]) == ("messages[0].content[1]", "unsupported_content")
        assert part["type"] in error["message"]
    error = error_of(post(base, {"messages": [{"role": "user", "content": [{"type": "text"}]}]}))
    assert error["param"] == "messages[0].content[0].text"


def test_validation_errors_name_the_field_and_carry_a_code(app_server: tuple[str, Failing]) -> None:
    base, _ = app_server
    error = error_of(post(base, {"messages": [{"role": "user", "content": 5}]}))
    assert (error["param"], error["code"]) == ("messages.0.content", "invalid_type")  # no pydantic union tag (".str")
    error = error_of(post(base, {}))
    assert (error["param"], error["code"]) == ("messages", "missing_required_parameter")


def exchange(connection: http.client.HTTPConnection, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    connection.request("POST", "/v1/chat/completions", body=json.dumps(body), headers=HEADERS)
    response = connection.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read())


def test_a_500_says_internal_error_with_a_request_id_and_keeps_the_connection(
    app_server: tuple[str, Failing], caplog: pytest.LogCaptureFixture
) -> None:
    base, failing = app_server
    before = metrics(base).get('structgen_requests_total{endpoint="/v1/chat/completions",status="500"}', 0)
    host, port = base.removeprefix("http://").removesuffix("/v1").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    body = {"model": MODEL, "messages": ASK, "max_tokens": 2}
    failing.armed = True
    try:
        with caplog.at_level(logging.ERROR, logger="structgen.server"):
            status, headers, answer = exchange(connection, body)
    finally:
        failing.armed = False
    request_id = headers["x-request-id"]
    assert status == 500 and request_id.startswith("req_")
    assert answer == {"error": {"message": f"internal error (request id {request_id})", "type": "server_error", "param": None, "code": "internal_error"}}
    assert headers.get("connection", "").lower() != "close"
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert logged and Failing.SECRET in logged[0].getMessage() + str(logged[0].exc_info)  # the details: in the log only
    sock = connection.sock
    status, headers, answer = exchange(connection, body)  # the same connection, still open
    assert status == 200 and connection.sock is sock and answer["choices"]
    assert headers["x-request-id"] != request_id
    connection.close()
    after = metrics(base)['structgen_requests_total{endpoint="/v1/chat/completions",status="500"}']
    assert after == before + 1


LOOKBEHIND = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(?<=a)b"}}, "required": ["code"]}
"""A schema whose grammar takes more than it allows: a lookbehind no automaton holds."""


def test_strict_schemas_the_grammar_cannot_enforce_are_a_400(app_server: tuple[str, Failing]) -> None:
    """strict promises valid outputs: where the grammar would only approximate the
    schema, a 400 ``schema_not_enforceable`` naming the place, before generating
    (rather than a 500 after it, for an output the server's own constraint allowed).
    Without strict the request is served; narrowing (closed objects) is no obstacle."""
    base, _ = app_server
    fmt = {"type": "json_schema", "json_schema": {"name": "c", "schema": LOOKBEHIND, "strict": True}}
    error = error_of(post(base, {"messages": ASK, "response_format": fmt}))
    assert error["code"] == "schema_not_enforceable" and error["param"] == "response_format"
    assert "/properties/code pattern" in error["message"]
    weather = {"type": "function", "function": {"name": "w", "parameters": {"type": "object", "properties": {}}}}
    tool = {"type": "function", "function": {"name": "f", "parameters": LOOKBEHIND, "strict": True}}
    error = error_of(post(base, {"messages": ASK, "tools": [weather, tool]}))
    assert error["code"] == "schema_not_enforceable" and error["param"] == "tools[1].function.parameters"
    closed = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    ok = {"type": "json_schema", "json_schema": {"name": "c", "schema": closed, "strict": True}}
    assert post(base, {"messages": ASK, "response_format": ok}).status_code == 200
    loose = {"type": "json_schema", "json_schema": {"name": "c", "schema": LOOKBEHIND}}
    assert post(base, {"messages": ASK, "response_format": loose}).status_code == 200


def test_a_budget_too_small_for_any_valid_output_is_a_400(app_server: tuple[str, Failing]) -> None:
    """Issue 42: a request whose max_tokens cannot hold even the shortest output its
    constraint allows (at most the longest token's bytes per token) could only end
    cut, breaking its constraint: a 400 naming the budget's field. A budget that
    could hold it is served (the bound is a lower one: never a request that could end)."""
    base, _ = app_server
    long_name = {"type": "object", "properties": {"name": {"type": "string", "minLength": 300}}, "required": ["name"]}
    fmt = {"type": "json_schema", "json_schema": {"name": "c", "schema": long_name}}
    error = error_of(post(base, {"messages": ASK, "response_format": fmt, "max_tokens": 3}))
    assert error["code"] == "max_tokens_too_small" and error["param"] == "max_tokens"
    assert "the shortest output response_format allows is 311 bytes" in error["message"]
    error = error_of(post(base, {"messages": ASK, "response_format": fmt, "max_completion_tokens": 3}))
    assert error["param"] == "max_completion_tokens"
    assert post(base, {"messages": ASK, "response_format": fmt, "max_tokens": 300}).status_code == 200
    import httpx2

    text = httpx2.post(base + "/completions", json={"model": MODEL, "prompt": "x", "max_tokens": 2,
                                                     "response_format": fmt}, headers=HEADERS, timeout=120)
    assert error_of(text)["code"] == "max_tokens_too_small"
    tool = {"type": "function", "function": {"name": "f", "parameters": long_name}}
    error = error_of(post(base, {"messages": ASK, "tools": [tool], "tool_choice": "required", "max_tokens": 3}))
    assert error["code"] == "max_tokens_too_small" and "tools" in error["message"]


def test_a_grammar_too_ambiguous_to_follow_is_a_400(app_server: tuple[str, Failing]) -> None:
    """fuzz case request-5xx-0-1353: a grammar so ambiguous that following every
    parse passes the engine's bound while decoding (``AmbiguityLimitError``) was a 500;
    it is the request's grammar: a 400 ``grammar_too_ambiguous``."""
    import httpx2

    base, _ = app_server
    grammar = ('start: "a" [r1? "a"? r0 r1]\nr0: (["a"] r1 | "b")* "a" r1? (r0+ | ("b"*)+ "b"+ | "b")? | "a" "b"? r1\n'
               'r1: "b"* r1 r1 ["a"] |  | r1* r0* ("b" | r1* r1 | "b")* [("b" | "b"?)+ "b"*]\n%ignore " "')
    body = {"model": MODEL, "max_tokens": 25, "prompt": "<|im_start|>", "guided_grammar": grammar, "seed": 918}
    answer = httpx2.post(base + "/completions", json=body, headers=HEADERS, timeout=120)
    error = error_of(answer)
    assert error["code"] == "grammar_too_ambiguous" and "too ambiguous" in error["message"]
    assert post(base, {"messages": ASK}).status_code == 200  # the server goes on

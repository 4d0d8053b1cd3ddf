"""``/v1/responses``: the Responses API on the live server with the tiny model,
through the official ``openai`` client (its pydantic models are the contract:
every raw body and event is validated by them), whole and streamed, with
structured outputs, function tools and their round trip, the store, and every
malformed request a 4xx naming the field."""

from __future__ import annotations

import json
from typing import Any, Iterator

import jsonschema
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import BaseModel, TypeAdapter

import structgen
from clocks import SetClock
from test_server import KEY, MODEL, Script, metrics, serving
from test_server import client, script  # noqa: F401 - fixtures, on this module's ``live``
from tiny_model import tiny_model

pytestmark = pytest.mark.server

HEADERS = {"Authorization": f"Bearer {KEY}"}
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Berlin", "Tokyo"]}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True,
}
TIME = {
    "type": "function",
    "name": "get_time",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}}, "required": ["zone"]},
    "strict": False,
}
CALL_BERLIN = '<tool_call>\n{"name":"get_weather","arguments":{"city":"Berlin"}}\n</tool_call>'
EVENTS = TypeAdapter(ResponseStreamEvent)


class City(BaseModel):
    name: str
    population: int


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[openai.OpenAI, Script, str]]:
    from structgen.server import Limits, create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    script = Script(model, tokenizer)
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY, limits=Limits(max_stored_responses=3))) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), script, base


def post(base: str, body: dict[str, Any]) -> Any:
    import httpx2

    return httpx2.post(base + "/responses", json={"model": MODEL, **body}, headers=HEADERS, timeout=120)


def raw_events(base: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """A streamed request's events as sent, each checked against the SDK's event
    models and its ``event:`` line."""
    import httpx2

    events: list[dict[str, Any]] = []
    kind = None
    with httpx2.stream("POST", base + "/responses", json={"model": MODEL, **body, "stream": True}, headers=HEADERS,
                       timeout=120) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: "):
                event = json.loads(line[len("data: "):])
                assert event["type"] == kind
                EVENTS.validate_python(event)
                events.append(event)
    return events


def test_a_string_input_answers_a_message(live: tuple[openai.OpenAI, Script, str], client: openai.OpenAI, script: Script) -> None:
    script.text = "Hello there, friend."
    reply = client.responses.create(model=MODEL, input="hi", instructions="Be brief.", max_output_tokens=30,
                                    metadata={"k": "v"}, user="u1", temperature=0)
    assert reply.status == "completed" and reply.output_text == "Hello there, friend."
    assert [item.type for item in reply.output] == ["message"]
    assert reply.id.startswith("resp") and reply.output[0].id.startswith("msg_")
    assert reply.instructions == "Be brief." and reply.metadata == {"k": "v"} and reply.user == "u1"
    assert reply.max_output_tokens == 30 and reply.temperature == 0
    usage = reply.usage
    assert usage is not None and usage.total_tokens == usage.input_tokens + usage.output_tokens and usage.output_tokens > 0
    raw = post(live[2], {"input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], "max_output_tokens": 30})
    assert raw.status_code == 200
    parsed = Response.model_validate(raw.json())  # strict: every field the SDK requires is there
    assert parsed.output_text == "Hello there, friend."


def test_max_output_tokens_makes_it_incomplete(client: openai.OpenAI, script: Script) -> None:
    script.text = "one two three four five six seven eight nine ten"
    reply = client.responses.create(model=MODEL, input="count", max_output_tokens=3)
    assert reply.status == "incomplete" and reply.incomplete_details is not None
    assert reply.incomplete_details.reason == "max_output_tokens"
    assert reply.usage is not None and reply.usage.output_tokens == 3
    assert reply.output[0].status == "incomplete"


def test_parse_with_a_pydantic_model(client: openai.OpenAI, script: Script) -> None:
    script.text = '{"name": "Paris", "population": 2100000}'
    reply = client.responses.parse(model=MODEL, input="A city", text_format=City, max_output_tokens=60)
    assert reply.output_parsed == City(name="Paris", population=2100000)
    assert reply.text is not None and reply.text.format is not None and reply.text.format.type == "json_schema"


def test_the_format_holds_whatever_the_model_prefers(client: openai.OpenAI, script: Script) -> None:
    """The random model writes what the grammar lets it: valid every time."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}, "required": ["a", "b"],
              "additionalProperties": False}
    for seed in range(3):
        reply = client.responses.create(model=MODEL, input="x", max_output_tokens=200, temperature=1.0,
                                        text={"format": {"type": "json_schema", "name": "ab", "schema": schema, "strict": True}},
                                        extra_body={"seed": seed})
        assert reply.status == "completed", reply.output_text
        jsonschema.validate(json.loads(reply.output_text), schema)
    script.text = '{\n  "a": 1\n}'
    reply = client.responses.create(model=MODEL, input="x", max_output_tokens=50, text={"format": {"type": "json_object"}})
    assert reply.status == "completed" and json.loads(reply.output_text) == {"a": 1}


def test_a_required_function_call_and_its_round_trip(client: openai.OpenAI, script: Script) -> None:
    reply = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[WEATHER, TIME], tool_choice="required",
                                    parallel_tool_calls=False)
    calls = [item for item in reply.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].status == "completed" and calls[0].call_id.startswith("call_")
    tool = {t["name"]: t for t in (WEATHER, TIME)}[calls[0].name]
    jsonschema.validate(json.loads(calls[0].arguments), tool["parameters"])
    script.text = "It is sunny in Paris."
    follow = client.responses.create(
        model=MODEL, tools=[WEATHER, TIME], max_output_tokens=30,
        input=[{"role": "user", "content": "Weather in Paris?"}, calls[0].model_dump(exclude_none=True),
               {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"}],
    )
    assert follow.output_text == "It is sunny in Paris." and follow.status == "completed"


def test_auto_text_then_a_call_and_a_named_choice(client: openai.OpenAI, script: Script) -> None:
    script.text = "Let me check." + CALL_BERLIN
    reply = client.responses.create(model=MODEL, input="Weather?", tools=[WEATHER], max_output_tokens=60)
    assert [item.type for item in reply.output] == ["message", "function_call"]
    assert reply.output_text == "Let me check."
    call = reply.output[1]
    assert call.type == "function_call" and call.name == "get_weather" and json.loads(call.arguments) == {"city": "Berlin"}
    script.text = None
    named = client.responses.create(model=MODEL, input="Time?", tools=[WEATHER, TIME],
                                    tool_choice={"type": "function", "name": "get_time"})
    assert [(item.type, getattr(item, "name", None)) for item in named.output] == [("function_call", "get_time")]
    assert named.status == "completed"


def test_allowed_tools_limit_the_calls(client: openai.OpenAI) -> None:
    for _ in range(2):
        reply = client.responses.create(
            model=MODEL, input="Time?", tools=[WEATHER, TIME], temperature=1.0,
            tool_choice={"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]},
        )
        assert {item.name for item in reply.output if item.type == "function_call"} == {"get_time"}
        assert reply.tool_choice.type == "allowed_tools"  # echoed as given


def test_streamed_text_events_in_order(live: tuple[openai.OpenAI, Script, str], client: openai.OpenAI, script: Script) -> None:
    script.text = "Streaming some text."
    events = raw_events(live[2], {"input": "hi", "max_output_tokens": 30})
    kinds = [e["type"] for e in events]
    assert kinds[:5] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added", "response.output_text.delta"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert text == "Streaming some text."
    final = events[-1]["response"]
    assert final["output"][0]["content"][0]["text"] == text and final["output"][0]["id"] == events[2]["item"]["id"]
    assert final["usage"]["output_tokens"] > 0
    with client.responses.stream(model=MODEL, input="hi", max_output_tokens=30) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        response = stream.get_final_response()
    assert "".join(deltas) == response.output_text == "Streaming some text."


def test_streamed_calls_and_parsed_output(live: tuple[openai.OpenAI, Script, str], client: openai.OpenAI, script: Script) -> None:
    script.text = "Checking." + CALL_BERLIN
    events = raw_events(live[2], {"input": "Weather?", "tools": [WEATHER], "max_output_tokens": 60})
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert [item["type"] for item in added] == ["message", "function_call"]
    arguments = "".join(e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta")
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert json.loads(arguments) == {"city": "Berlin"} and done[0]["arguments"] == arguments
    final = Response.model_validate(events[-1]["response"])
    assert [item.id for item in final.output] == [item["id"] for item in added]
    script.text = '{"name": "Oslo", "population": 700000}'
    with client.responses.stream(model=MODEL, input="A city", text_format=City, max_output_tokens=60) as stream:
        for _ in stream:
            pass
        parsed = stream.get_final_response()
    assert parsed.output_parsed == City(name="Oslo", population=700000)


def test_the_store_keeps_answers_for_get_and_previous_response_id(live: tuple[openai.OpenAI, Script, str], client: openai.OpenAI,
                                                                  script: Script) -> None:
    script.text = "The answer is 42."
    first = client.responses.create(model=MODEL, input="What is the answer?", max_output_tokens=20)
    again = client.responses.retrieve(first.id)
    assert again.id == first.id and again.output_text == "The answer is 42."
    script.text = "Yes."
    fresh = client.responses.create(model=MODEL, input="Sure?", max_output_tokens=5, store=False)
    follow = client.responses.create(model=MODEL, input="Sure?", max_output_tokens=5, previous_response_id=first.id)
    assert follow.previous_response_id == first.id
    assert follow.usage is not None and fresh.usage is not None
    assert follow.usage.input_tokens > fresh.usage.input_tokens  # the earlier turn is in the prompt
    with pytest.raises(openai.NotFoundError):  # store: false keeps nothing
        client.responses.retrieve(fresh.id)
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="x", previous_response_id=first.id)
    assert caught.value.code == "previous_response_not_found" and caught.value.param == "previous_response_id"
    assert "keeps the last" in caught.value.message


def test_the_oldest_stored_response_goes_first(client: openai.OpenAI) -> None:
    """This module's server keeps three (``Limits.max_stored_responses``)."""
    kept = [client.responses.create(model=MODEL, input="x", max_output_tokens=2).id for _ in range(4)]
    with pytest.raises(openai.NotFoundError):  # the oldest went first
        client.responses.retrieve(kept[0])
    assert client.responses.retrieve(kept[-1]).id == kept[-1]


def test_a_stored_response_expires() -> None:
    from structgen.server.response_store import ResponseStore
    from structgen.server.responses_protocol import Response as Answer

    clock = SetClock()
    store = ResponseStore(10, 60.0, clock)
    store.put(Answer(id="resp_1", created_at=0, model="m", status="completed", output=[]), [{"role": "user", "content": "x"}])
    clock.now = 59.0
    assert store.history("resp_1") == [{"role": "user", "content": "x"}]
    clock.now = 61.0
    assert store.get("resp_1") is None and len(store) == 0


BAD = [
    ({"input": "x", "tools": [{"type": "web_search"}]}, "tools[0].type", "unsupported_value"),
    ({"input": "x", "tool_choice": {"type": "file_search"}, "tools": [WEATHER]}, "tool_choice", "unsupported_value"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}]}, "input[0].content[0]",
     "unsupported_content"),
    ({"input": [{"type": "web_search_call", "id": "ws_1"}]}, "input[0].type", "unsupported_value"),
    ({"input": [{"type": "function_call", "name": "f"}]}, "input[0].call_id", "invalid_value"),
    ({"input": [{"role": "wizard", "content": "x"}]}, "input[0].role", "invalid_value"),
    ({"input": []}, "input", "invalid_value"),
    ({"input": "x", "background": True}, "background", "unsupported_parameter"),
    ({"input": "x", "max_output_tokens": 10**6}, "max_output_tokens", None),
    ({"input": "x", "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object", "properties": {"a": {"type": "nope"}}}}}},
     "text.format", None),
    ({"input": "x", "text": {"format": {"type": "json_schema", "name": "s", "strict": True,
                                        "schema": {"type": "string", "pattern": "^(?=a)b$"}}}}, "text.format", None),
    ({"input": "x", "tools": [WEATHER], "tool_choice": {"type": "function", "name": "nope"}}, "tool_choice", None),
    ({"input": "x", "tools": [WEATHER], "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "nope"}]}},
     "tool_choice.tools", "invalid_value"),
    ({"input": "x", "tools": [TIME, {**WEATHER, "parameters": {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}}]},
     "tools[1].parameters", None),
    ({"input": [{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{not json"}], "tools": [WEATHER]},
     "input[0].arguments", "invalid_json"),
    ({"input": "x", "stream_options": {"include_obfuscation": False}}, "stream_options", "invalid_value"),
    ({"input": "x", "temperature": 5}, "temperature", None),
]


@pytest.mark.parametrize("body, param, code", BAD, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD)])
def test_a_malformed_request_is_a_400_naming_the_field(live: tuple[openai.OpenAI, Script, str], body: dict[str, Any], param: str,
                                                        code: str | None) -> None:
    answer = post(live[2], body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == param, error
    assert error["code"] and (code is None or error["code"] == code), error
    assert "response_format" not in error["message"] and "messages[" not in error["message"], error


def test_keys_models_and_unknown_ids(live: tuple[openai.OpenAI, Script, str]) -> None:
    import httpx2

    base = live[2]
    assert httpx2.post(base + "/responses", json={"model": MODEL, "input": "x"}).status_code == 401
    wrong = post(base, {"model": "other", "input": "x"})
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "model_not_found"
    missing = httpx2.get(base + "/responses/resp_nope", headers=HEADERS)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert httpx2.delete(base + "/responses/resp_nope", headers=HEADERS).status_code == 404


def test_metrics_count_responses(live: tuple[openai.OpenAI, Script, str], client: openai.OpenAI) -> None:
    base = live[2]
    before = metrics(base)
    reply = client.responses.create(model=MODEL, input="x", max_output_tokens=2)
    client.responses.retrieve(reply.id)
    after = metrics(base)
    for endpoint in ("/v1/responses", "/v1/responses/{id}"):
        sample = f'structgen_requests_total{{endpoint="{endpoint}",status="200"}}'
        assert after[sample] == before.get(sample, 0) + 1, sample
    assert reply.usage is not None
    assert after["structgen_completion_tokens_total"] == before["structgen_completion_tokens_total"] + reply.usage.output_tokens
    assert after["structgen_prompt_tokens_total"] == before["structgen_prompt_tokens_total"] + reply.usage.input_tokens


def test_more_tools_than_the_limit_are_a_400(client: openai.OpenAI) -> None:
    """``Limits.max_tools`` (128 by default, OpenAI's own limit) holds on the
    Responses API too: a thousand small tools fit under the body limit, and each
    would be one more grammar in the calls' automaton."""
    tools: Any = [{"type": "function", "name": f"tool_{i}", "parameters": {"type": "object"}} for i in range(1_000)]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="x", tools=tools, max_output_tokens=2)
    assert caught.value.code == "too_many_tools" and caught.value.param == "tools"
    assert "1000 tools given; at most 128" in caught.value.message

"""The OpenAI-compatible server, through the official ``openai`` client, against a
live uvicorn server on a free port.

The model is the tiny random-weight Llama on the real SmolLM2 tokenizer: whatever
it writes must come back in the right shape and valid. Where a test needs the
model to *want* something (free text, then a call; two calls; a hostile string),
``Script`` biases its logits toward a given text: the grammar still decides what
is allowed, so a script the grammar refuses cannot get through.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Literal

import jsonschema
import openai
import pytest
from pydantic import BaseModel

import structgen
from clocks import SetClock, TickingClock
from tiny_model import tiny_model
from waiting import wait_until

pytestmark = pytest.mark.server

MODEL = "tiny"
KEY = "test-key"
CITY = {"type": "string", "enum": ["Paris", "Berlin", "Tokyo"]}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": CITY}, "required": ["city"]},
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}, "hours": {"type": "integer", "minimum": 0, "maximum": 9}},
            "required": ["zone", "hours"],
        },
    },
}
NOTE = {
    "type": "function",
    "function": {"name": "note", "parameters": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 40}}, "required": ["text"]}},
}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
ASSISTANT_TURN = "<|im_start|>assistant\n"


class Script:
    """Makes the model prefer to write ``text`` (then stop): a forward hook adds a
    large bias to the logit of the next token of what is left of it."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.text: str | None = None
        self.fed: list[int] = []
        self.forward_passes = 0
        model.register_forward_hook(self._hook, with_kwargs=True)

    def _hook(self, module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        self.forward_passes += 1
        if self.text is None:
            return output
        ids = kwargs["input_ids"]
        assert ids.shape[0] == 1, "a script drives one sequence"
        if int(kwargs["position_ids"][0, 0]) == 0:
            self.fed = []
        self.fed += [int(i) for i in ids[0]]
        written = self.tokenizer.decode(self.fed).split(ASSISTANT_TURN)[-1]
        if self.text.startswith(written):
            rest = self.text[len(written) :]
            wanted = self.tokenizer.encode(rest, add_special_tokens=False)[0] if rest else self.tokenizer.eos_token_id
            output.logits[0, -1, wanted] += 1000.0
        return output


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` on a live uvicorn server on a free port; yields its base URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    def started() -> bool:
        assert thread.is_alive(), "the server did not start"
        return bool(server.started)

    wait_until(started, "the server started")
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[openai.OpenAI, Script, str]]:
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    script = Script(model, tokenizer)
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), script, base


@pytest.fixture
def client(live: tuple[openai.OpenAI, Script, str]) -> Iterator[openai.OpenAI]:
    yield live[0]
    live[1].text = None


@pytest.fixture
def script(live: tuple[openai.OpenAI, Script, str]) -> Script:
    return live[1]


def arguments_of(call: Any, tool: dict[str, Any]) -> Any:
    """A call's arguments, parsed and valid against its tool."""
    assert call.type == "function" and call.function.name == tool["function"]["name"]
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}|[A-Za-z0-9]{9}", call.id)  # OpenAI's ids; Mistral's templates want 9 characters
    value = json.loads(call.function.arguments)
    jsonschema.validate(value, tool["function"]["parameters"])
    return value


def test_models_and_health(live: tuple[openai.OpenAI, Script, str]) -> None:
    client, _, base = live
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL]
    import httpx2

    assert httpx2.get(base.removesuffix("/v1") + "/health").json() == {"status": "ok"}


def test_chat_without_tools(client: openai.OpenAI, script: Script) -> None:
    script.text = "Hello there, friend."
    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=30)
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.tool_calls is None
    assert choice.message.content == "Hello there, friend." and choice.finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.usage.completion_tokens > 0 and reply.object == "chat.completion"


def test_stop_and_length(client: openai.OpenAI, script: Script) -> None:
    script.text = "Hello there. Goodbye."
    stopped = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=30, stop=["."])
    assert (stopped.choices[0].message.content, stopped.choices[0].finish_reason) == ("Hello there", "stop")
    cut = client.chat.completions.create(model=MODEL, messages=ASK, max_completion_tokens=2)
    assert cut.choices[0].finish_reason == "length" and cut.usage is not None and cut.usage.completion_tokens == 2


def test_tool_choice_required(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice="required", max_tokens=80)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    calls = choice.message.tool_calls or []
    assert calls and len({c.id for c in calls}) == len(calls)
    for call in calls:
        arguments_of(call, WEATHER if call.function.name == "get_weather" else TIME)


def test_tool_choice_named(client: openai.OpenAI) -> None:
    named = {"type": "function", "function": {"name": "get_time"}}
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice=named, max_tokens=60)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop"  # as OpenAI answers a named tool_choice
    [call] = choice.message.tool_calls or []
    arguments_of(call, TIME)


def test_tool_choice_none_writes_text(client: openai.OpenAI, script: Script) -> None:
    script.text = 'Sure.<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>'
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="none", max_tokens=60)
    choice = reply.choices[0]
    assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert choice.message.content == script.text  # with tool_choice none a tag is only text


def test_auto_text_then_call(client: openai.OpenAI, script: Script) -> None:
    script.text = 'Let me check.<tool_call>\n{"name":"get_weather","arguments":{"city":"Berlin"}}\n</tool_call>'
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], max_tokens=60)
    choice = reply.choices[0]
    assert choice.message.content == "Let me check." and choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert arguments_of(call, WEATHER) == {"city": "Berlin"}


def test_auto_text_only(client: openai.OpenAI, script: Script) -> None:
    script.text = "It is sunny <tool in Paris."
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="auto", max_tokens=40)
    assert reply.choices[0].message.content == script.text and reply.choices[0].message.tool_calls is None
    assert reply.choices[0].finish_reason == "stop"


def test_auto_cannot_call_an_unknown_tool(client: openai.OpenAI, script: Script) -> None:
    """The model wants to call delete_files: once its tag is written the grammar
    allows only get_weather's name, so the call it ends up making is get_weather,
    with arguments valid for it (whatever city the model then picks). One call: once
    the script is off its text, a model free to go on (SmolLM2 on vLLM) would write
    more calls until max_tokens."""
    script.text = '<tool_call>\n{"name":"delete_files","arguments":{}}\n</tool_call>'
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], max_tokens=40, parallel_tool_calls=False)
    choice = reply.choices[0]
    calls = choice.message.tool_calls or []
    assert calls and choice.finish_reason == "tool_calls" and not choice.message.content
    for call in calls:
        arguments_of(call, WEATHER)  # named get_weather, with arguments valid against its schema


PAIR = (
    '<tool_call>\n{"name":"get_weather","arguments":{"city":"Tokyo"}}\n</tool_call>\n'
    '<tool_call>\n{"name":"get_time","arguments":{"zone":"CET","hours":3}}\n</tool_call>'
)


def test_parallel_calls(client: openai.OpenAI, script: Script) -> None:
    script.text = PAIR
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice="required", max_tokens=80)
    weather, clock = reply.choices[0].message.tool_calls or []
    assert arguments_of(weather, WEATHER) == {"city": "Tokyo"}
    assert arguments_of(clock, TIME) == {"zone": "CET", "hours": 3}


def test_parallel_tool_calls_false_gives_one_call(client: openai.OpenAI, script: Script) -> None:
    script.text = PAIR
    for choice in ("required", "auto"):
        reply = client.chat.completions.create(
            model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice=choice, parallel_tool_calls=False, max_tokens=80
        )
        [call] = reply.choices[0].message.tool_calls or []
        assert arguments_of(call, WEATHER) == {"city": "Tokyo"}
        assert reply.choices[0].finish_reason == "tool_calls"


def test_response_format_json_schema(client: openai.OpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {"city": CITY, "days": {"type": "integer", "minimum": 1, "maximum": 7}, "rain": {"type": "boolean"}},
        "required": ["city", "days", "rain"],
        "additionalProperties": False,
    }
    reply = client.chat.completions.create(
        model=MODEL,
        messages=ASK,
        max_tokens=60,
        response_format={"type": "json_schema", "json_schema": {"name": "forecast", "schema": schema, "strict": True}},
        extra_body=COMPACT,
    )
    assert reply.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(reply.choices[0].message.content or ""), schema)
    anything = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=60, response_format={"type": "json_object"},
                                              extra_body=COMPACT)
    assert isinstance(json.loads(anything.choices[0].message.content or ""), dict)


def test_guided_aliases(client: openai.OpenAI) -> None:
    choices = client.chat.completions.create(
        model=MODEL, messages=ASK, max_tokens=10, n=3, temperature=1.0, seed=7, extra_body={"guided_choice": ["yes", "no"]}
    )
    assert len(choices.choices) == 3 and {c.message.content for c in choices.choices} <= {"yes", "no"}
    regex = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=10, extra_body={"guided_regex": r"[0-9]{3}-[0-9]{2}"})
    assert regex.choices[0].message.content is not None
    assert re.fullmatch(r"[0-9]{3}-[0-9]{2}", regex.choices[0].message.content)


TRIPLES = {"type": "integer", "multipleOf": 1009}  # multipleOf: approximated (a factor prime to ten past 1,000)


def test_an_output_failing_the_after_check_is_an_error_not_a_200(live: tuple[openai.OpenAI, Script, str], script: Script) -> None:
    client, _, base = live
    script.text = "4"  # the grammar lets it through; jsonschema does not
    body = {"model": MODEL, "messages": ASK, "max_tokens": 10, "guided_json": TRIPLES}
    try:
        with pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=10, extra_body={"guided_json": TRIPLES})
        assert raised.value.response.headers["x-should-retry"] == "false"
        assert isinstance(raised.value.body, dict) and raised.value.body["code"] == "output_validation_failed"
        events = stream_chunks(base, body)
    finally:
        script.text = None
    assert events[-1]["error"]["code"] == "output_validation_failed"  # after the stream started: an SSE error event
    assert "[DONE]" not in events


class Forecast(BaseModel):
    city: str
    rain: bool


def test_parse_with_a_pydantic_model(client: openai.OpenAI, script: Script) -> None:
    script.text = '{"city":"Oslo","rain":true}'
    reply = client.chat.completions.parse(model=MODEL, messages=ASK, response_format=Forecast, max_tokens=60)
    assert reply.choices[0].message.parsed == Forecast(city="Oslo", rain=True)


def test_response_format_with_tools_is_an_answer_or_calls(client: openai.OpenAI, script: Script) -> None:
    tool = openai.pydantic_function_tool(Forecast, name="forecast")
    for city in ("Rome", "<tool_call>"):  # the tag inside the answer is only text
        script.text = json.dumps({"city": city, "rain": False}, separators=(",", ":"))
        answer = client.chat.completions.parse(model=MODEL, messages=ASK, tools=[tool], response_format=Forecast, max_tokens=60)
        assert answer.choices[0].message.parsed == Forecast(city=city, rain=False)
        assert answer.choices[0].message.tool_calls is None and answer.choices[0].finish_reason == "stop"
        with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[tool], response_format=Forecast, max_tokens=60) as stream:
            assert stream.get_final_completion().choices[0].message.parsed == Forecast(city=city, rain=False)
    script.text = '<tool_call>\n{"name":"forecast","arguments":{"city":"Oslo","rain":true}}\n</tool_call>'
    called = client.chat.completions.parse(model=MODEL, messages=ASK, tools=[tool], response_format=Forecast, max_tokens=60)
    [call] = called.choices[0].message.tool_calls or []
    assert call.function.parsed_arguments == Forecast(city="Oslo", rain=True)
    assert called.choices[0].message.content is None and called.choices[0].finish_reason == "tool_calls"


def test_hostile_arguments_streamed_and_whole(client: openai.OpenAI, script: Script) -> None:
    text = 'a } "x" </tool_call> {'
    script.text = "<tool_call>\n" + json.dumps({"name": "note", "arguments": {"text": text}}, separators=(",", ":")) + "\n</tool_call>"
    whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[NOTE], tool_choice="required", max_tokens=60)
    [call] = whole.choices[0].message.tool_calls or []
    assert arguments_of(call, NOTE) == {"text": text}
    with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[NOTE], tool_choice="required", max_tokens=60) as stream:
        final = stream.get_final_completion()
    [streamed] = final.choices[0].message.tool_calls or []
    assert streamed.function.arguments == call.function.arguments


def whole_and_streamed(client: openai.OpenAI, **fields: Any) -> list[Any]:
    """The first choice of a request, answered whole and streamed (its deltas put
    together as the SDK does, which refuses to for a "length")."""
    from types import SimpleNamespace

    whole = client.chat.completions.create(model=MODEL, messages=ASK, **fields).choices[0]
    content: str | None = None
    calls: dict[int, Any] = {}
    reason = None
    for chunk in client.chat.completions.create(model=MODEL, messages=ASK, stream=True, **fields):
        delta = chunk.choices[0].delta
        if delta.content is not None:
            content = (content or "") + delta.content
        for part in delta.tool_calls or []:
            if part.index not in calls:
                calls[part.index] = SimpleNamespace(id=part.id, type=part.type, function=SimpleNamespace(name=part.function.name, arguments=""))
            calls[part.index].function.arguments += part.function.arguments or ""
        reason = chunk.choices[0].finish_reason or reason
    message = SimpleNamespace(content=content, tool_calls=[calls[i] for i in sorted(calls)] or None)
    return [whole, SimpleNamespace(message=message, finish_reason=reason)]


def test_a_tool_that_takes_any_value_is_called_with_an_object(client: openai.OpenAI, script: Script) -> None:
    """A tool whose parameters allow any value (``{}``): the model would write a
    string holding the envelope's ``}`` and closing tag as the arguments; they are
    a JSON object (the parameters in conjunction with ``{"type": "object"}``)."""
    anything = {"type": "function", "function": {"name": "anything", "parameters": {}}}
    script.text = '<tool_call>\n{"name":"anything","arguments":"][\\"}\n</tool_call>"}\n</tool_call>'
    for choice in whole_and_streamed(client, tools=[anything], tool_choice="required", max_tokens=40):
        [call] = choice.message.tool_calls or []
        assert call.function.name == "anything" and call.function.arguments.startswith("{")
        if choice.finish_reason != "length":
            assert isinstance(json.loads(call.function.arguments), dict)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, tool_choice="none",
                                       tools=[{"type": "function", "function": {"name": "s", "parameters": {"type": "string"}}}])
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == "tools[0].function.parameters"


def test_stop_strings_end_the_content_never_a_call(client: openai.OpenAI, script: Script) -> None:
    """A stop string ends the content; it is not looked for in a call, which is the
    constraint's: a forced call (required, named) runs to its end whatever the stop
    strings, or to max_tokens ("length", its arguments as far as they got, as
    without stop strings); in ``auto`` the text before the call can be cut."""
    call = '<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>'
    named = {"type": "function", "function": {"name": "get_weather"}}
    script.text = call
    for tool_choice, reason in (("required", "tool_calls"), (named, "stop")):
        for choice in whole_and_streamed(client, tools=[WEATHER], tool_choice=tool_choice, stop=["}", "Paris", "<"], max_tokens=60):
            [made] = choice.message.tool_calls or []
            assert arguments_of(made, WEATHER) == {"city": "Paris"} and choice.finish_reason == reason
            assert not choice.message.content
    for choice in whole_and_streamed(client, tools=[WEATHER], tool_choice=named, stop="}", max_tokens=19):
        [made] = choice.message.tool_calls or []
        assert choice.finish_reason == "length" and '{"city":"Paris"}'.startswith(made.function.arguments)
    script.text = "Let me check." + call
    for stops, content in ((["}", "Paris"], "Let me check."), (["<"], "Let me check."), (["check"], "Let me ")):
        for choice in whole_and_streamed(client, tools=[WEATHER], stop=stops, max_tokens=60):
            assert choice.message.content == content, stops
            if stops == ["check"]:  # the content was cut: no call came
                assert choice.message.tool_calls is None and choice.finish_reason == "stop"
            else:  # a stop string that the tag or the call holds is no stop
                [made] = choice.message.tool_calls or []
                assert arguments_of(made, WEATHER) == {"city": "Paris"} and choice.finish_reason == "tool_calls"
    script.text = "It is sunny <tool"  # the start of a tag, then the end: it was content after all
    for choice in whole_and_streamed(client, tools=[WEATHER], stop=["<"], max_tokens=60):
        assert (choice.message.content, choice.message.tool_calls, choice.finish_reason) == ("It is sunny ", None, "stop")


def stream_chunks(base: str, body: dict[str, Any], path: str = "/chat/completions") -> list[Any]:
    """The raw SSE events of a streamed request (``[DONE]`` as the string)."""
    import httpx2

    events: list[Any] = []
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx2.stream("POST", base + path, json={**body, "stream": True}, headers=headers, timeout=60) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                events.append(data if data == "[DONE]" else json.loads(data))
    return events


def test_stream_shape_for_tool_calls(live: tuple[openai.OpenAI, Script, str], script: Script) -> None:
    client, _, base = live
    script.text = "Checking." + "\n" + PAIR
    body = {"model": MODEL, "messages": ASK, "tools": [WEATHER, TIME], "max_tokens": 80, "stream_options": {"include_usage": True}}
    events = stream_chunks(base, body)
    try:
        assert events[-1] == "[DONE]"
        usage = events[-2]
        assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
        chunks = events[:-2]
        assert {c["id"] for c in chunks} == {usage["id"]} and {c["object"] for c in chunks} == {"chat.completion.chunk"}
        deltas = [c["choices"][0]["delta"] for c in chunks]
        assert [i for i, d in enumerate(deltas) if "role" in d] == [0]
        assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"][0]["finish_reason"]] == ["tool_calls"]
        headers = [t for d in deltas for t in d.get("tool_calls", []) if "id" in t]
        assert [(t["index"], t["function"]["name"], t["function"]["arguments"]) for t in headers] == [
            (0, "get_weather", ""),
            (1, "get_time", ""),
        ]
        fragments = [t for d in deltas for t in d.get("tool_calls", []) if "id" not in t]
        assert all(set(t) == {"index", "function"} and set(t["function"]) == {"arguments"} for t in fragments)
        # the SDK's own accumulation gives what the whole response gives
        with client.chat.completions.stream(**{k: v for k, v in body.items() if k != "stream_options"}) as stream:
            streamed = stream.get_final_completion().choices[0]
        whole = client.chat.completions.create(**{k: v for k, v in body.items() if k != "stream_options"}).choices[0]
        assert streamed.finish_reason == whole.finish_reason == "tool_calls"
        assert streamed.message.content == whole.message.content == "Checking.\n"
        pairs = [(c.function.name, c.function.arguments) for c in whole.message.tool_calls or []]
        assert [(c.function.name, c.function.arguments) for c in streamed.message.tool_calls or []] == pairs
        assert len(pairs) == 2
    finally:
        script.text = None


def test_stream_text_without_usage(live: tuple[openai.OpenAI, Script, str], script: Script) -> None:
    _, _, base = live
    script.text = "Hi, how can I help?"
    try:
        events = stream_chunks(base, {"model": MODEL, "messages": ASK, "max_tokens": 30})
    finally:
        script.text = None
    assert events[-1] == "[DONE]" and all(e["usage"] is None for e in events[:-1])
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1]) == "Hi, how can I help?"
    assert events[-2]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}


def test_stream_holds_back_a_stop_string(client: openai.OpenAI, script: Script) -> None:
    script.text = "Hello there. Goodbye."
    with client.chat.completions.stream(model=MODEL, messages=ASK, max_tokens=30, stop="there.") as stream:
        pieces = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(pieces) == final.choices[0].message.content == "Hello "


def test_tool_round_trip(client: openai.OpenAI) -> None:
    messages = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": ""}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 21}'},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "12:00"}]},
    ]
    reply = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER, TIME], tool_choice="none", max_tokens=5)
    assert reply.choices[0].message.tool_calls is None


@pytest.mark.parametrize(
    ("request_fields", "param"),
    [
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "strng"}}}}, "response_format"),
        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": []}, "tools"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}}]}, "tools"),
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages.0.role"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        ({"guided_regex": "(unclosed"}, "guided_regex"),
        ({"guided_json": {"type": "object"}, "guided_regex": "a"}, "guided_regex"),
        ({"tools": [WEATHER], "guided_regex": "a+"}, "guided_regex"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 10**9}, "max_tokens"),
        ({"temperature": 5}, "temperature"),
    ],
)
def test_bad_requests_are_400(client: openai.OpenAI, request_fields: dict[str, Any], param: str) -> None:
    body: dict[str, Any] = {"model": MODEL, "messages": ASK, "max_tokens": 5, **request_fields}
    extra = {k: body.pop(k) for k in list(body) if k.startswith("guided_")}  # not the SDK's own fields
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(**body, extra_body=extra)
    error = raised.value.body
    assert isinstance(error, dict) and error["param"] == param and error["type"] == "invalid_request_error"
    assert error["message"]


def test_unknown_model_and_wrong_key(live: tuple[openai.OpenAI, Script, str]) -> None:
    client, _, base = live
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-9", messages=ASK, max_tokens=5)
    assert isinstance(missing.value.body, dict) and missing.value.body["code"] == "model_not_found"
    stranger = openai.OpenAI(base_url=base, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        stranger.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5)


def test_invalid_json_body_is_400(live: tuple[openai.OpenAI, Script, str]) -> None:
    import httpx2

    _, _, base = live
    response = httpx2.post(
        base + "/chat/completions", content=b"{not json", headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    )
    assert response.status_code == 400 and set(response.json()["error"]) == {"message", "type", "param", "code"}


def hang_up_after_the_first_chunk(base: str, body: dict[str, Any], headers: dict[str, str]) -> None:
    """A streamed chat request whose client goes away once its decode is running."""
    import httpx2

    with httpx2.stream("POST", base + "/chat/completions", json=body, headers=headers) as response:
        lines = response.iter_lines()
        while not next(lines).startswith("data: "):
            pass  # the first chunk came: the decode is running


@pytest.mark.parametrize("stream", [True, False])
def test_disconnect_cancels_the_decode(live: tuple[openai.OpenAI, Script, str], script: Script, stream: bool) -> None:
    client, _, base = live
    script.text = "word " * 400
    before = script.forward_passes
    body = {"model": MODEL, "messages": ASK, "max_tokens": 400, "stream": stream}
    headers = {"Authorization": f"Bearer {KEY}"}
    if stream:
        hang_up_after_the_first_chunk(base, body, headers)
    else:
        host, port = base.removeprefix("http://").removesuffix("/v1").split(":")
        payload = json.dumps(body).encode()
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload
            )
            # until the decode is running; then the client hangs up
            wait_until(lambda: script.forward_passes >= before + 3, "the decode running")
    script.text = None
    wait_for_idle(base)  # the cancelled sequence left the batch
    spent = script.forward_passes - before
    assert 0 < spent < 300, spent
    client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=1)  # the server goes on serving


def test_concurrent_requests_are_not_mixed_up(client: openai.OpenAI) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def ask(choice: str) -> Any:
        named = {"type": "function", "function": {"name": choice}}
        reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice=named, max_tokens=60)
        return reply.choices[0].message.tool_calls[0].function  # type: ignore[index]

    alone = {name: ask(name) for name in ("get_weather", "get_time")}
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(ask, ["get_weather", "get_time"] * 3))
    assert together == [alone["get_weather"], alone["get_time"]] * 3


def test_streamed_choices(live: tuple[openai.OpenAI, Script, str]) -> None:
    _, _, base = live
    body = {"model": MODEL, "messages": ASK, "max_tokens": 10, "n": 2, "temperature": 1.0, "seed": 3, "guided_choice": ["yes", "no"]}
    events = stream_chunks(base, body)
    assert events[-1] == "[DONE]"
    for index in (0, 1):
        mine = [e["choices"][0] for e in events[:-1] if e["choices"][0]["index"] == index]
        assert [c["delta"].get("role") for c in mine].count("assistant") == 1
        assert [c["finish_reason"] for c in mine if c["finish_reason"]] == ["stop"]
        assert "".join(c["delta"].get("content") or "" for c in mine) in ("yes", "no")


@pytest.mark.parametrize(
    ("tool_choice", "parallel", "reason", "count"),
    [
        ("required", True, "tool_calls", 2),
        ("required", False, "tool_calls", 1),
        ("auto", False, "tool_calls", 1),
        ({"type": "function", "function": {"name": "get_weather"}}, True, "stop", 1),
    ],
)
def test_finish_reason_and_calls_alike_streamed_and_whole(
    live: tuple[openai.OpenAI, Script, str], script: Script, tool_choice: Any, parallel: bool, reason: str, count: int
) -> None:
    """vLLM/SGLang answered named/required/auto differently streamed and whole, and
    let parallel_tool_calls: false through (research §7 P3, P4)."""
    client, _, base = live
    body = {"model": MODEL, "messages": ASK, "tools": [WEATHER, TIME], "tool_choice": tool_choice, "parallel_tool_calls": parallel, "max_tokens": 80}
    script.text = PAIR
    try:
        whole = client.chat.completions.create(**body).choices[0]
        events = stream_chunks(base, body)
    finally:
        script.text = None
    assert whole.finish_reason == reason and len(whole.message.tool_calls or []) == count
    chunks = [e for e in events if e != "[DONE]"]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"][0]["finish_reason"]] == [reason]
    headers = [t for c in chunks for t in c["choices"][0]["delta"].get("tool_calls", []) if "id" in t]
    assert [t["index"] for t in headers] == list(range(count))
    assert [t["function"]["name"] for t in headers] == [c.function.name for c in whole.message.tool_calls or []]


def test_streamed_choices_with_tool_calls(live: tuple[openai.OpenAI, Script, str]) -> None:
    """n > 1 streamed: each choice its own role, call indexes from 0, arguments and finish_reason."""
    _, _, base = live
    body = {
        "model": MODEL, "messages": ASK, "tools": [WEATHER, TIME], "tool_choice": "required", "parallel_tool_calls": False,
        "n": 2, "temperature": 1.0, "seed": 11, "max_tokens": 80, "stream_options": {"include_usage": True},
    }
    events = stream_chunks(base, body)
    assert events[-1] == "[DONE]" and events[-2]["choices"] == []
    for index in (0, 1):
        mine = [e["choices"][0] for e in events[:-2] if e["choices"][0]["index"] == index]
        assert [c["delta"].get("role") for c in mine].count("assistant") == 1
        assert [c["finish_reason"] for c in mine if c["finish_reason"]] == ["tool_calls"]
        calls = [t for c in mine for t in c["delta"].get("tool_calls", [])]
        assert {t["index"] for t in calls} == {0} and sum("id" in t for t in calls) == 1
        name = calls[0]["function"]["name"]
        arguments = json.loads("".join(t["function"]["arguments"] for t in calls))
        jsonschema.validate(arguments, (WEATHER if name == "get_weather" else TIME)["function"]["parameters"])


def test_stop_string_across_tokens_and_max_completion_tokens_first(client: openai.OpenAI, script: Script) -> None:
    script.text = "Hello there. Goodbye."
    stopped = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=30, stop=["re. Go"])  # " there" "." " Good"
    assert (stopped.choices[0].message.content, stopped.choices[0].finish_reason) == ("Hello the", "stop")
    both = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=30, max_completion_tokens=2)
    assert both.choices[0].finish_reason == "length" and both.usage is not None and both.usage.completion_tokens == 2


PING = {"type": "function", "function": {"name": "ping", "description": "No parameters at all"}}


def test_a_tool_without_parameters(live: tuple[openai.OpenAI, Script, str]) -> None:
    """Omitted parameters are an empty parameter list; its arguments are "{}",
    streamed too (clients dropped empty arguments: research §7 P1)."""
    client, _, base = live
    body = {"model": MODEL, "messages": ASK, "tools": [PING], "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 30}
    [call] = client.chat.completions.create(**body).choices[0].message.tool_calls or []
    assert call.function.name == "ping" and json.loads(call.function.arguments) == {}
    events = stream_chunks(base, body)
    calls = [t for e in events[:-1] for t in e["choices"][0]["delta"].get("tool_calls", [])]
    assert json.loads("".join(t["function"]["arguments"] for t in calls)) == {}


class Weather(BaseModel):
    city: Literal["Paris", "Berlin", "Tokyo"]


def test_pydantic_function_tool_required_and_named(client: openai.OpenAI) -> None:
    tool = openai.pydantic_function_tool(Weather, name="get_weather")
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        reply = client.chat.completions.parse(model=MODEL, messages=ASK, tools=[tool], tool_choice=choice, parallel_tool_calls=False, max_tokens=60)  # type: ignore[arg-type]
        [call] = reply.choices[0].message.tool_calls or []
        assert isinstance(call.function.parsed_arguments, Weather)


COMPACT = {"structured_outputs": {"disable_any_whitespace": True}}
"""Asks for JSON without whitespace: a random model left a layout spends its tokens on it."""


class Outlook(BaseModel):
    city: Literal["Paris", "Berlin", "Tokyo"]
    rain: bool


def test_json_keeps_the_models_layout(client: openai.OpenAI, script: Script) -> None:
    """An answer's JSON is laid out as the model writes it, newlines and indentation
    included; each gap is bounded (no runaway whitespace, research §7 P6: 64 bytes,
    ``Options.max_whitespace``); asked compact (``disable_any_whitespace``), none."""
    laid_out = '{\n\n    "city" :   "Paris",\n\n\n\n    "rain" : true\n\n}'
    runaway = '{"city":' + "\n" * 100 + '"Paris","rain":true}'
    answers = []
    try:
        for text, extra in ((laid_out, {}), (runaway, {}), (laid_out, COMPACT)):
            script.text = text
            reply = client.chat.completions.parse(model=MODEL, messages=ASK, response_format=Outlook, max_tokens=60,
                                                  extra_body=extra)
            assert reply.choices[0].finish_reason == "stop" and reply.choices[0].message.parsed is not None
            answers.append(reply.choices[0].message.content or "")
    finally:
        script.text = None
    assert answers[0] == laid_out
    assert answers[1].startswith('{"city":' + "\n" * 64) and "\n" * 65 not in answers[1]
    assert answers[2] == json.dumps(json.loads(answers[2]), separators=(",", ":"))  # the script's newlines refused


@pytest.mark.parametrize(
    ("fields", "check"),
    [
        ({"structured_outputs": {"regex": "[0-9]{3}"}}, r"[0-9]{3}"),
        ({"regex": "[a-c]{4}"}, r"[a-c]{4}"),  # SGLang's field
        ({"structured_outputs": {"choice": ["yes", "no"]}}, r"yes|no"),
        ({"response_format": {"type": "json_object", "schema": {"type": "object", "properties": {"n": {"enum": ["a", "b"]}}, "required": ["n"], "additionalProperties": False}}}, r'\s*\{\s*"n"\s*:\s*"[ab]"\s*\}'),
    ],
)
def test_other_servers_constraint_fields_are_honoured(
    client: openai.OpenAI, fields: dict[str, Any], check: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Constraints in vLLM's and SGLang's fields are applied, not accepted and
    ignored (research §7 P5); the log names only the fields really ignored."""
    import logging

    caplog.set_level(logging.INFO, logger="structgen.server")
    body: dict[str, Any] = {"model": MODEL, "messages": ASK, "max_tokens": 200, "temperature": 0, "extra_body": {"unheard_of": 1}}
    if "response_format" in fields:
        body.update(fields)
    else:
        body["extra_body"].update(fields)
    reply = client.chat.completions.create(**body)
    assert re.fullmatch(check, reply.choices[0].message.content or ""), reply.choices[0].message.content
    ignored = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ignored request fields")]
    assert ignored == ["ignored request fields: unheard_of"]


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"functions": [{"name": "f", "parameters": {}}]}, "functions"),
        ({"function_call": "auto"}, "function_call"),
        ({"ebnf": 'root ::= "a"'}, "ebnf"),
        ({"structured_outputs": {"structural_tag": "{}"}}, "structured_outputs.structural_tag"),
        ({"logit_bias": {"42": 10}}, "logit_bias"),
        ({"structured_outputs": {"regex": "a"}, "guided_json": {"type": "object"}}, "structured_outputs.regex"),
    ],
)
def test_constraint_fields_not_built_are_400(client: openai.OpenAI, fields: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, extra_body=fields)
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == param


def test_seeded_sampling_roles_and_a_cut_parse(client: openai.OpenAI) -> None:
    """Research §5.4: same seed, same output (alone or beside another request);
    developer role and content parts; .parse() raises on a cut output."""
    from concurrent.futures import ThreadPoolExecutor

    messages = [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": [{"type": "text", "text": "Name"}, {"type": "text", "text": " a city."}]},
    ]
    ask = {"model": MODEL, "messages": messages, "max_tokens": 12, "temperature": 1.0, "seed": 1234}
    first = client.chat.completions.create(**ask).choices[0].message.content
    with ThreadPoolExecutor(2) as pool:
        again, _ = pool.map(lambda body: client.chat.completions.create(**body).choices[0].message.content, [ask, {**ask, "seed": 99}])
    assert first and again == first
    with pytest.raises(openai.LengthFinishReasonError):
        client.chat.completions.parse(model=MODEL, messages=ASK, response_format=Forecast, max_tokens=3)


def test_serve_command_reports_a_missing_model(capsys: pytest.CaptureFixture[str]) -> None:
    from structgen.cli import main

    assert main(["serve", "--model", "/nonexistent/model.gguf"]) == 1
    assert "not a model folder" in capsys.readouterr().err


QWEN_LIKE_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>"
    "Call them in <tool_call></tool_call> tags.<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}"
    "\n</tool_call>{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_a_template_that_knows_tools_renders_them() -> None:
    import copy

    from structgen.server.chat import ChatPrompt
    from structgen.server.protocol import Message
    from structgen.server.tool_syntax import HERMES
    from structgen.tool_calls import ToolSet

    tokenizer = copy.deepcopy(structgen.load_tokenizer())
    tokenizer.chat_template = QWEN_LIKE_TEMPLATE
    prompt = ChatPrompt(tokenizer, HERMES)
    assert prompt.native_tools
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    messages = [Message.model_validate(m) for m in ASK + [{"role": "assistant", "tool_calls": [call]}]]
    text = tokenizer.decode(prompt.token_ids(messages, ToolSet.read([WEATHER])))
    assert '"name": "get_weather"' in text and "<tools>" in text
    assert '"arguments": {"city": "Paris"}' in text  # a dict for the template, not the JSON string


def metrics(base: str) -> dict[str, float]:
    """``GET /metrics`` as {sample name with its labels: value}."""
    import httpx2

    response = httpx2.get(base.removesuffix("/v1") + "/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = {}
    for line in response.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def wait_for_idle(base: str) -> None:
    """Until no sequence is queued or running (a bounded number of polls only guards against a hang)."""

    def idle() -> bool:
        samples = metrics(base)
        return not samples["structgen_running_sequences"] and not samples["structgen_queued_sequences"]

    wait_until(idle, "the batch emptied")


def one_counted_request(live: tuple[openai.OpenAI, Any, str]) -> tuple[dict[str, float], dict[str, float]]:
    """The metrics before and after one constrained chat request, which they
    count: one more 200 on its endpoint, and its completion tokens (on vLLM too)."""
    client, _, base = live
    before = metrics(base)
    client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=3, extra_body={"guided_regex": "[a-z]{1,9}"})
    after = metrics(base)
    chat_ok = 'structgen_requests_total{endpoint="/v1/chat/completions",status="200"}'
    assert after[chat_ok] == before.get(chat_ok, 0) + 1
    assert after["structgen_completion_tokens_total"] >= before.get("structgen_completion_tokens_total", 0) + 1
    return before, after


def test_metrics_in_prometheus_format(live: tuple[openai.OpenAI, Script, str]) -> None:
    _, _, base = live
    before, after = one_counted_request(live)
    assert after["structgen_prompt_tokens_total"] > before.get("structgen_prompt_tokens_total", 0)
    for histogram in ("structgen_compile_seconds", "structgen_mask_seconds", "structgen_step_seconds", "structgen_batch_size"):
        assert after[f"{histogram}_count"] > before[f"{histogram}_count"], histogram
        assert after[f'{histogram}_bucket{{le="+Inf"}}'] == after[f"{histogram}_count"]
    assert after["structgen_queued_sequences"] == after["structgen_running_sequences"] == 0
    import httpx2

    text = httpx2.get(base.removesuffix("/v1") + "/metrics").text
    assert "# TYPE structgen_batch_size histogram" in text and "# TYPE structgen_queued_sequences gauge" in text


def own_schema(client_index: int) -> dict[str, Any]:
    """A different schema per client; ``id`` says whose answer it is. Every
    part is bounded, so the answer is complete within 200 tokens."""
    shapes: list[dict[str, Any]] = [
        {"type": "integer", "minimum": 0, "maximum": 999},
        {"type": "string", "maxLength": 20},
        {"type": "array", "items": {"type": "boolean"}, "maxItems": 4},
        {"enum": ["red", "green", "blue"]},
    ]
    return {
        "type": "object",
        "properties": {"id": {"const": f"client {client_index}"}, "value": shapes[client_index % len(shapes)], "note": {"type": "string", "maxLength": 30}},
        "required": ["id", "value", "note"],
        "additionalProperties": False,
    }


@pytest.mark.slow  # 8 clients × 3 requests of up to 200 tokens: about 30 s on two cores
def test_concurrent_clients_share_one_batch(live: tuple[openai.OpenAI, Script, str]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    client, _, base = live
    before = metrics(base)

    def ask(client_index: int) -> list[tuple[dict[str, Any], Any]]:
        schema = own_schema(client_index)
        answers = []
        for turn in range(3):
            fields = {"response_format": {"type": "json_schema", "json_schema": {"name": f"c{client_index}", "schema": schema}}}
            if turn == 1:
                fields = {"extra_body": {"guided_json": schema}}
            reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=200, stream=turn == 2, **fields)
            if turn == 2:
                text = "".join(chunk.choices[0].delta.content or "" for chunk in reply if chunk.choices)
            else:
                text = reply.choices[0].message.content
            answers.append((schema, json.loads(text)))
        return answers

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(ask, range(8)))
    for client_index, answers in enumerate(results):
        for schema, value in answers:
            jsonschema.validate(value, schema)
            assert value["id"] == f"client {client_index}"
    after = metrics(base)
    steps = after["structgen_batch_size_count"] - before["structgen_batch_size_count"]
    alone = after['structgen_batch_size_bucket{le="1"}'] - before['structgen_batch_size_bucket{le="1"}']
    assert steps > alone, "no step decoded two sequences at once"


def test_text_completions(live: tuple[openai.OpenAI, Script, str], script: Script) -> None:
    check_text_completions(live, script, {"type": "integer"})


def check_text_completions(live: tuple[openai.OpenAI, Any, str], script: Any, number: dict[str, Any]) -> None:
    """Text completions, whole, streamed, several and formatted (as an object whose
    one property has the schema ``number``). test_server_vllm's runs on vLLM too;
    ``script`` is a ``Script``, or its ``ScriptFile``."""
    client, _, base = live
    script.text = "Once upon a time."
    try:
        whole = client.completions.create(model=MODEL, prompt="<|im_start|>assistant\n", max_tokens=20)
        assert whole.object == "text_completion" and whole.choices[0].text == "Once upon a time."
        assert whole.choices[0].finish_reason == "stop" and whole.usage is not None and whole.usage.completion_tokens > 0
        streamed = client.completions.create(model=MODEL, prompt="<|im_start|>assistant\n", max_tokens=20, stream=True, stop=[" a "])
        chunks = list(streamed)
        assert "".join(c.choices[0].text for c in chunks) == "Once upon"
        assert [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason] == ["stop"]
    finally:
        script.text = None
    many = client.completions.create(model=MODEL, prompt=["Name a color:", "Pick one:"], n=2, max_tokens=5, extra_body={"guided_choice": ["red", "blue"]})
    assert sorted(c.index for c in many.choices) == [0, 1, 2, 3] and {c.text for c in many.choices} <= {"red", "blue"}
    schema = {"type": "object", "properties": {"n": number}, "required": ["n"], "additionalProperties": False}
    formatted = client.completions.create(
        model=MODEL, prompt=[1, 2, 3], max_tokens=30,
        extra_body={"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}}, **COMPACT}
    )
    jsonschema.validate(json.loads(formatted.choices[0].text), schema)
    usage = stream_chunks(base, {"model": MODEL, "prompt": "hi", "max_tokens": 3, "stream_options": {"include_usage": True}}, "/completions")
    assert usage[-1] == "[DONE]" and usage[-2]["choices"] == [] and usage[-2]["usage"]["prompt_tokens"] > 0
    cut = client.completions.create(model=MODEL, prompt="hi", max_tokens=2, extra_body={"guided_regex": "[a-z]{10}"})
    assert cut.choices[0].finish_reason == "length"


@pytest.mark.parametrize(
    ("request_fields", "param"),
    [
        ({"prompt": ""}, "prompt"),
        ({"prompt": []}, "prompt"),
        ({"prompt": [10**9]}, "prompt"),
        ({"echo": True}, "echo"),
        ({"logprobs": 2}, "logprobs"),
        ({"guided_regex": "(unclosed"}, "guided_regex"),
        ({"n": 17}, "n"),
    ],
)
def test_bad_completions_are_400(live: tuple[openai.OpenAI, Script, str], request_fields: dict[str, Any], param: str) -> None:
    import httpx2

    _, _, base = live
    body = {"model": MODEL, "prompt": "hi", "max_tokens": 3, **request_fields}
    response = httpx2.post(base + "/completions", json=body, headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


SLOW_TO_COMPILE = "[a-z ]*a[a-z ]{14}"
"""32,769 lexer states (the automaton remembers the last 15 letters' a's): building
them is work a compile must do, and it checks its deadline every 256 of them, so
far more than ``COMPILE_CHECKS`` times. Precomputing token groups would not do: it
is optional, and gives way once half the limit is gone
(``engine.deadline.optional_work_over``)."""

COMPILE_CHECKS = 64
COMPILE_CLOCK = TickingClock(step=1.0)
"""``LIMITS``' compile clock: one second at each reading, so that its limit of
``COMPILE_CHECKS`` seconds is a number of deadline checks, the same on any machine
(a compile that needs fewer, as every other one here, is never stopped). The
server's own wait for a compile stays real seconds: 64 of them only guard against a hang."""

LIMITS: dict[str, Any] = {
    "max_batch": 1, "max_requests": 2, "max_body_bytes": 20_000, "max_schema_bytes": 2_000, "max_tokens": 3_000,
    "max_tools": 3, "compile_seconds": float(COMPILE_CHECKS), "compile_clock": COMPILE_CLOCK,
}  # fmt: skip


class NoStop:
    """Makes the model never want to stop: free text runs to ``max_tokens``, so a
    request stays in flight as long as a test needs."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.ids = list(tokenizer.all_special_ids)
        model.register_forward_hook(self._hook)

    def _hook(self, module: Any, args: Any, output: Any) -> Any:
        output.logits[..., self.ids] = -1000.0
        return output


@pytest.fixture(scope="module")
def limited() -> Iterator[tuple[openai.OpenAI, str]]:
    from structgen.server import Limits, create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer, seed=1)
    NoStop(model, tokenizer)
    with serving(create_app(model, tokenizer, model_id=MODEL, limits=Limits(**LIMITS))) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), base


def test_too_many_requests_is_429_and_max_batch_queues(limited: tuple[openai.OpenAI, str]) -> None:
    import httpx2

    client, base = limited
    long = {"model": MODEL, "messages": ASK, "max_tokens": 3_000, "stream": True}
    with httpx2.stream("POST", base + "/chat/completions", json=long, timeout=60) as first:
        lines = first.iter_lines()
        while not next(lines).startswith("data: "):
            pass  # decoding
        with httpx2.stream("POST", base + "/chat/completions", json=long, timeout=60) as second:
            assert second.status_code == 200
            # max_batch 1: the second waits
            wait_until(lambda: metrics(base)["structgen_queued_sequences"] == 1, "the second request queued")
            assert metrics(base)["structgen_running_sequences"] == 1
            with pytest.raises(openai.RateLimitError) as refused:
                client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=3)
            assert refused.value.response.headers["retry-after"] == "1"
            assert isinstance(refused.value.body, dict) and refused.value.body["code"] == "too_many_requests"
            assert refused.value.body["type"] == "rate_limit_error" and refused.value.body["message"]
    wait_for_idle(base)  # hanging up freed both places, queued or running
    assert client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=3).choices[0].finish_reason == "length"
    assert metrics(base)['structgen_requests_total{endpoint="/v1/chat/completions",status="429"}'] == 1


@pytest.mark.parametrize(
    ("request_fields", "param", "code"),
    [
        ({"max_tokens": 3_001}, "max_tokens", "invalid_value"),
        ({"max_completion_tokens": 3_001}, "max_completion_tokens", "invalid_value"),
        ({"guided_regex": "a" * 2_001}, "guided_regex", "schema_too_large"),
        ({"structured_outputs": {"regex": "a" * 2_001}}, "structured_outputs", "schema_too_large"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "big", "schema": {"enum": ["x" * 2_000]}}}}, "response_format", "schema_too_large"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"enum": ["x" * 2_000]}}}]}, "tools[0].function.parameters", "schema_too_large"),
        ({"messages": [{"role": "user", "content": "x" * 20_001}]}, None, "request_too_large"),
        ({"tools": [{"type": "function", "function": {"name": f"f{i}"}} for i in range(4)]}, "tools", "too_many_tools"),
        ({"n": 2}, "n", "invalid_value"),  # more sequences than max_batch
        ({"guided_regex": SLOW_TO_COMPILE}, None, "compile_timeout"),
    ],
)
def test_limits_are_400(limited: tuple[openai.OpenAI, str], request_fields: dict[str, Any], param: str | None, code: str | None) -> None:
    client, _ = limited
    body: dict[str, Any] = {"model": MODEL, "messages": ASK, "max_tokens": 3, **request_fields}
    extra = {k: body.pop(k) for k in list(body) if k.startswith(("guided_", "structured_"))}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(**body, extra_body=extra)
    error = raised.value.body
    assert isinstance(error, dict) and error["param"] == param and error["code"] == code and error["message"]


def test_a_compile_past_its_limit_stops(limited: tuple[openai.OpenAI, str]) -> None:
    """A compile past its limit is a 400 ``compile_timeout``, and it was the compile's
    own deadline that stopped it: on ``LIMITS``' clock it read the clock once when
    it started, then at each check until the 64th, which raised; nothing is left
    compiling after the 400. As a library call: ``structgen.compile`` under a
    ``Deadline`` raises ``CompileTimeout`` at its 64th check."""
    client, base = limited
    before = COMPILE_CLOCK.readings
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=3, extra_body={"guided_regex": SLOW_TO_COMPILE})
    assert isinstance(raised.value.body, dict) and raised.value.body["code"] == "compile_timeout"
    assert COMPILE_CLOCK.readings - before == 1 + COMPILE_CHECKS
    wait_until(lambda: not metrics(base)["structgen_compiling_requests"], "the compile stopped after its 400")

    from structgen.engine.deadline import CompileTimeout, Deadline, run_within
    from structgen.generate import tokenizer_info_for

    info = tokenizer_info_for(structgen.load_tokenizer())
    clock = TickingClock(step=1.0)
    with pytest.raises(CompileTimeout, match=f"ran past its {COMPILE_CHECKS} s limit"):
        run_within(Deadline(COMPILE_CHECKS, clock), lambda: structgen.compile(structgen.Grammar.from_regex(SLOW_TO_COMPILE), info))
    assert clock.readings == 1 + COMPILE_CHECKS


class HeldCompile:
    """A stand-in for a request's compile (``Generations._build``'s ``build``): it
    waits, without checking its deadline, until the test lets it go, then checks it
    up to 1,000 times, counting its checks and keeping the ``CompileTimeout`` that
    stopped it."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.let_go = threading.Event()
        self.checks = 0
        self.stopped_by: Exception | None = None

    def __call__(self) -> list[Any]:
        from structgen.engine.deadline import CompileTimeout, check_deadline

        self.started.set()
        self.let_go.wait()
        try:
            for _ in range(1_000):
                self.checks += 1
                check_deadline()
        except CompileTimeout as stopped:
            self.stopped_by = stopped
            raise
        return []


def generations_with(limits: Any) -> Any:
    """A ``Generations`` with no engine: enough for ``_build``."""
    from structgen.server.metrics import ServerMetrics
    from structgen.server.serving import Generations

    return Generations(None, limits, ServerMetrics(queued=lambda: 0, running=lambda: 0))  # type: ignore[arg-type]


def test_a_request_gone_while_compiling_stops_the_compile() -> None:
    """A client gone mid-compile (the request's task cancelled) cancels the compile's
    deadline: the compile stops at its very next check, where its clock (stopped
    here) would never have ended it."""
    import asyncio

    from structgen.server import Limits

    held = HeldCompile()
    generations = generations_with(Limits(compile_seconds=600.0, compile_clock=SetClock()))

    async def gone() -> None:
        task = asyncio.ensure_future(generations._build(held))
        try:
            assert await asyncio.to_thread(held.started.wait, 60)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            held.let_go.set()

    asyncio.run(gone())  # (waits for the worker thread)
    assert held.checks == 1 and str(held.stopped_by) == "compiling was cancelled"


def test_a_compile_past_the_servers_wait_stops_at_its_next_check() -> None:
    """A compile that does not reach a check in time (held here) is answered anyway
    once the server's own wait (``compile_seconds``, in real seconds) is over: a 400
    ``compile_timeout``, its deadline cancelled, so the compile stops at its next
    check, where its clock (stopped here) would never have ended it."""
    import asyncio

    from structgen.server import Limits
    from structgen.server.errors import APIError

    held = HeldCompile()
    generations = generations_with(Limits(compile_seconds=0.05, compile_clock=SetClock()))

    async def answered() -> APIError:
        try:
            with pytest.raises(APIError) as raised:
                await generations._build(held)
            return raised.value
        finally:
            held.let_go.set()

    error = asyncio.run(answered())  # (waits for the worker thread)
    assert error.status == 400 and error.code == "compile_timeout"
    assert held.checks == 1 and str(held.stopped_by) == "compiling was cancelled"


@pytest.fixture(scope="module", params=["llama3_json", "mistral"])
def other_syntax(request: pytest.FixtureRequest) -> Iterator[tuple[openai.OpenAI, Script, Any]]:
    from structgen.server import create_app
    from structgen.server.syntax_choice import SYNTAXES

    syntax = SYNTAXES[request.param]
    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    script = Script(model, tokenizer)
    with serving(create_app(model, tokenizer, model_id=MODEL, syntax=syntax)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), script, syntax


def test_other_tool_call_syntaxes(other_syntax: tuple[openai.OpenAI, Script, Any]) -> None:
    client, script, syntax = other_syntax
    assert [m.tool_call_syntax for m in client.models.list().data] == [syntax.name]
    bodies = ['{"name":"get_weather","%s":{"city":"Tokyo"}}' % syntax.arguments_key, '{"name":"get_time","%s":{"zone":"CET","hours":3}}' % syntax.arguments_key]
    try:
        script.text = "Checking. " + syntax.first + syntax.between.join(bodies) + syntax.last
        whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], max_tokens=80)
        with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER, TIME], max_tokens=80) as stream:
            streamed = stream.get_final_completion().choices[0]
        script.text = script.text.removeprefix("Checking. ")
        required = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice="required", max_tokens=80)
    finally:
        script.text = None
    for choice in (whole.choices[0], streamed):
        assert choice.message.content == "Checking. " and choice.finish_reason == "tool_calls"
        weather, clock = choice.message.tool_calls or []
        assert arguments_of(weather, WEATHER) == {"city": "Tokyo"} and arguments_of(clock, TIME) == {"zone": "CET", "hours": 3}
        assert all(len(c.id) == 9 for c in (weather, clock)) == (syntax.name == "mistral")
    assert [c.function.name for c in required.choices[0].message.tool_calls or []] == ["get_weather", "get_time"]

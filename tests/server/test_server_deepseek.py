"""DeepSeek's tool calls (V3/R1's fenced JSON and V3.1's) on a live server.

A tiny random-weight Llama on the real DeepSeek vocabulary, whose envelope tokens
(``<｜tool▁calls▁begin｜>`` ...) are text tokens, with chat templates that write
past calls as DeepSeek's do; a forward hook steers the model toward a script and
the calls' grammar decides what may come.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

import openai
import pytest

import vocabularies
from steering import Steer
from test_server import CITY, KEY, MODEL, TIME, WEATHER, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

BEGIN, CALL, SEP, END, ALL_END = "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"


def template(call: str) -> str:
    return (
        "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}"
        "{% elif m.role == 'user' %}<｜User｜>{{ m.content }}"
        "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content or '' }}"
        "{% if m.tool_calls %}" + BEGIN + "{% for c in m.tool_calls %}" + call + "{% endfor %}" + ALL_END + "{% endif %}"
        "<｜end▁of▁sentence｜>{% elif m.role == 'tool' %}<｜tool▁output▁begin｜>{{ m.content }}<｜tool▁output▁end｜>{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<｜Assistant｜>{% endif %}"
    )


V3 = template("{% if not loop.first %}\n{% endif %}" + CALL + "function" + SEP + "{{ c.function.name }}\n```json\n{{ c.function.arguments }}\n```" + END)
V31 = template(CALL + "{{ c.function.name }}" + SEP + "{{ c.function.arguments }}" + END)
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def v3_call(name: str, arguments: str) -> str:
    return CALL + "function" + SEP + name + "\n```json\n" + arguments + "\n```" + END


def v31_call(name: str, arguments: str) -> str:
    return CALL + name + SEP + arguments + END


def v3_next(name: str, arguments: str) -> str:
    """A further call in V3's envelope: the template writes a newline before it."""
    return "\n" + v3_call(name, arguments)


@pytest.fixture(scope="module", params=[("deepseek_v3", V3, (v3_call, v3_next)), ("deepseek_v31", V31, (v31_call, v31_call))],
                ids=["v3", "v31"])
def deepseek(request: pytest.FixtureRequest) -> Iterator[tuple[openai.OpenAI, Steer, str, object]]:
    from structgen.server import create_app
    from structgen.server.syntax_choice import syntax_for

    name, text, writers = request.param
    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = text
    assert syntax_for(tokenizer).name == name
    model = tiny_model(tokenizer)
    steer = Steer(model, tokenizer, "<｜Assistant｜>")
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), steer, name, writers


def test_required_parallel_calls(deepseek: tuple[openai.OpenAI, Steer, str, object]) -> None:
    client, steer, _, (first, further) = deepseek  # type: ignore[misc]
    steer.text = BEGIN + first("get_weather", '{"city":"Paris"}') + further("get_time", '{"zone":"CET","hours":4}') + ALL_END
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice="required", max_tokens=80)
    calls = reply.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET", "hours": 4})]
    assert reply.choices[0].finish_reason == "tool_calls"


def test_arguments_are_held_to_the_schema(deepseek: tuple[openai.OpenAI, Steer, str, object]) -> None:
    client, steer, _, (writer, _further) = deepseek  # type: ignore[misc]
    steer.text = BEGIN + writer("get_weather", '{"city":"Rome"}') + ALL_END  # Rome is no choice
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=80)
    calls = reply.choices[0].message.tool_calls or []
    assert calls and json.loads(calls[0].function.arguments)["city"] in CITY["enum"]


def test_auto_text_then_a_call_and_a_past_call(deepseek: tuple[openai.OpenAI, Steer, str, object]) -> None:
    client, steer, _, (writer, _further) = deepseek  # type: ignore[misc]
    steer.text = "Checking.\n" + BEGIN + writer("get_weather", '{"city":"Tokyo"}') + ALL_END
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], max_tokens=80)
    message = reply.choices[0].message
    assert (message.content or "").strip() == "Checking."
    assert message.tool_calls and json.loads(message.tool_calls[0].function.arguments) == {"city": "Tokyo"}
    history = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
    ]
    steer.text = "Rain."
    assert client.chat.completions.create(model=MODEL, messages=history, tools=[WEATHER], max_tokens=10).choices[0].message.content == "Rain."


def test_allowed_tools_restrict_the_calls_not_the_prompt(deepseek: tuple[openai.OpenAI, Steer, str, object]) -> None:
    """OpenAI's ``allowed_tools``: every tool stays in the prompt, only the listed
    ones may be called (``required``: one must be)."""
    client, steer, _, (writer, _further) = deepseek  # type: ignore[misc]
    steer.text = BEGIN + writer("get_weather", '{"city":"Paris"}') + ALL_END  # not allowed
    choice = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "get_time"}}]}}
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice=choice, max_tokens=80)  # type: ignore[arg-type]
    calls = reply.choices[0].message.tool_calls or []
    assert calls and {c.function.name for c in calls} == {"get_time"}
    bad = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "nope"}}]}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice=bad, max_tokens=5)  # type: ignore[arg-type]
    assert raised.value.body["param"] == "tool_choice.allowed_tools.tools[0]"  # type: ignore[index]


def test_custom_tools_in_a_json_syntax(deepseek: tuple[openai.OpenAI, Steer, str, object]) -> None:
    """In JSON calls a custom tool's input is a JSON string: a regex is enforced as
    its pattern; a lark grammar is a 400 naming the format."""
    client, steer, _, (writer, _further) = deepseek  # type: ignore[misc]
    code = {"type": "custom", "custom": {"name": "code", "format": {"type": "grammar", "grammar": {"syntax": "regex", "definition": "[0-9]+ [+*] [0-9]+"}}}}
    steer.text = BEGIN + writer("code", '{"input":"12 - 3"}') + ALL_END  # "-" is no choice
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[code], tool_choice="required", max_tokens=80)  # type: ignore[list-item]
    call = (reply.choices[0].message.tool_calls or [None])[0]
    assert call is not None and call.type == "custom"  # type: ignore[union-attr]
    written = call.custom.input  # type: ignore[union-attr]
    if reply.choices[0].finish_reason == "tool_calls":
        assert re.fullmatch(r"[0-9]+ [+*] [0-9]+", written), written
    else:  # the random model, off its script, may run out of tokens: what it wrote still begins a valid input
        assert reply.choices[0].finish_reason == "length" and re.fullmatch(r"[0-9]+(?: (?:[+*](?: [0-9]*)?)?)?", written)
    assert "-" not in written
    lark = {"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": 'start: "x"'}}}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, tools=[lark], max_tokens=5)  # type: ignore[list-item]
    assert raised.value.body["param"] == "tools[0].custom.format"  # type: ignore[index]

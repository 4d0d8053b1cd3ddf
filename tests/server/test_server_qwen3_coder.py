"""Qwen3-Coder's XML tool calls on a live server, through the official client.

A tiny random-weight Llama on the real DeepSeek vocabulary, with a chat template
that writes past calls as Qwen3-Coder's does (``<function=...>``,
``<parameter=...>``), so the server picks that syntax; a forward hook steers the
model toward a script, and the calls' grammar decides what may come: each
parameter's value constrained by its schema, a string as raw text.
"""

from __future__ import annotations

import json
from typing import Iterator

import openai
import pytest

import vocabularies
from steering import Steer
from test_server import KEY, MODEL, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

TEMPLATE = (
    "{{ bos_token }}{% if tools %}<tools>{{ tools | tojson }}</tools>{% endif %}"
    "{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content or '' }}{% for c in m.tool_calls or [] %}"
    "<tool_call>\n<function={{ c.function.name }}>\n{% for k, v in c.function.arguments | items %}"
    "<parameter={{ k }}>\n{{ v if v is string else v | tojson }}\n</parameter>\n{% endfor %}</function>\n</tool_call>"
    "{% endfor %}<｜end▁of▁sentence｜>{% elif m.role == 'tool' %}<tool_response>{{ m.content }}</tool_response>{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<｜Assistant｜>{% endif %}"
)
FORECAST = {
    "type": "function",
    "function": {
        "name": "forecast",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 9},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "days"],
        },
    },
}
ASK = [{"role": "user", "content": "Weather in Paris for 3 days?"}]


def call(city: str, days: str, unit: str | None = None) -> str:
    text = f"<tool_call>\n<function=forecast>\n<parameter=city>\n{city}\n</parameter>\n<parameter=days>\n{days}\n</parameter>\n"
    if unit is not None:
        text += f"<parameter=unit>\n{unit}\n</parameter>\n"
    return text + "</function>\n</tool_call>"


@pytest.fixture(scope="module")
def coder() -> Iterator[tuple[openai.OpenAI, Steer]]:
    from structgen.server import create_app

    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = TEMPLATE
    model = tiny_model(tokenizer)
    steer = Steer(model, tokenizer, "<｜Assistant｜>")
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), steer


def test_the_template_picks_the_xml_syntax() -> None:
    from structgen.server.syntax_choice import syntax_for

    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = TEMPLATE
    assert syntax_for(tokenizer).name == "qwen3_coder"


def test_a_required_call_with_raw_string_and_json_values(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    steer.text = call("New York\nNY", "3", "celsius")  # a string value may span lines
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], tool_choice="required", max_tokens=80)
    calls = reply.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "forecast"
    assert json.loads(calls[0].function.arguments) == {"city": "New York\nNY", "days": 3, "unit": "celsius"}
    assert reply.choices[0].finish_reason == "tool_calls"


def test_each_value_is_held_to_its_schema(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    steer.text = call("Paris", "30", "kelvin")  # 30 is past the maximum, kelvin no choice: the masks refuse both
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], tool_choice="required", max_tokens=80)
    calls = reply.choices[0].message.tool_calls
    assert calls
    arguments = json.loads(calls[0].function.arguments)
    assert arguments["city"] == "Paris" and 1 <= arguments["days"] <= 9
    assert arguments.get("unit", "celsius") in ("celsius", "fahrenheit")


def test_auto_text_then_a_call_streamed(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    steer.text = "Let me check.\n" + call("Paris", "2")
    whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], max_tokens=80).choices[0].message
    assert (whole.content or "").strip() == "Let me check."
    assert whole.tool_calls and json.loads(whole.tool_calls[0].function.arguments) == {"city": "Paris", "days": 2}
    content, arguments = "", ""
    for chunk in client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], max_tokens=80, stream=True):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or ():
                arguments += (delta.function.arguments or "") if delta.function else ""
    assert content == whole.content and arguments == whole.tool_calls[0].function.arguments


def test_a_past_call_goes_back_through_the_template(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    steer.text = "Sunny."
    history = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "forecast", "arguments": '{"city": "Paris", "days": 3}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    reply = client.chat.completions.create(model=MODEL, messages=history, tools=[FORECAST], max_tokens=10)
    assert reply.choices[0].message.content == "Sunny."


SQL = 'start: "SELECT " COLUMNS " FROM " NAME\nCOLUMNS: /[a-z]+(, [a-z]+)*/\nNAME: /[a-z_]+/\n'
SQL_TOOL = {"type": "custom", "custom": {"name": "sql", "description": "Run a query",
                                          "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": SQL}}}}
CODE_TOOL = {"type": "custom", "custom": {"name": "code", "format": {"type": "grammar", "grammar": {"syntax": "regex", "definition": "[0-9]+ [+*] [0-9]+"}}}}


def custom_call(name: str, text: str) -> str:
    return f"<tool_call>\n<function={name}>\n<parameter=input>\n{text}\n</parameter>\n</function>\n</tool_call>"


def test_a_custom_tool_held_to_its_lark_grammar(coder: tuple[openai.OpenAI, Steer]) -> None:
    from structgen import Grammar

    client, steer = coder
    steer.text = custom_call("sql", "SELECT name, age FROM users")
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[SQL_TOOL, FORECAST], tool_choice="required",  # type: ignore[list-item]
                                           max_tokens=80)
    call = (reply.choices[0].message.tool_calls or [None])[0]
    assert call is not None and call.type == "custom" and call.custom.name == "sql"  # type: ignore[union-attr]
    assert call.custom.input == "SELECT name, age FROM users"  # type: ignore[union-attr]
    steer.text = custom_call("sql", "SELECT id FROM users; DROP TABLE users")  # the grammar has no ;
    choice = {"type": "custom", "custom": {"name": "sql"}}
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[SQL_TOOL, FORECAST], tool_choice=choice,  # type: ignore[arg-type, list-item]
                                           max_tokens=80)
    call = (reply.choices[0].message.tool_calls or [None])[0]
    assert call is not None and call.type == "custom"  # type: ignore[union-attr]
    written = call.custom.input  # type: ignore[union-attr]
    assert written.startswith("SELECT id FROM users") and ";" not in written
    if reply.choices[0].finish_reason == "stop":  # a named choice ends as "stop"; the random model may run out instead
        assert Grammar.from_lark(SQL).accepts(written)


def test_a_custom_tool_streamed_and_with_a_regex(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    steer.text = "Computing.\n" + custom_call("code", "12 * 34")
    whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[CODE_TOOL], max_tokens=60).choices[0].message  # type: ignore[list-item]
    assert whole.tool_calls and whole.tool_calls[0].custom.input == "12 * 34"  # type: ignore[union-attr]
    pieces, headers = "", []
    for chunk in client.chat.completions.create(model=MODEL, messages=ASK, tools=[CODE_TOOL], max_tokens=60, stream=True):  # type: ignore[list-item]
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or ():
                extra = delta.model_extra or {}
                if delta.id:
                    headers.append((delta.type, extra["custom"]["name"]))
                pieces += (extra.get("custom") or {}).get("input", "")
    assert headers == [("custom", "code")] and pieces == "12 * 34"
    history = ASK + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "custom", "custom": {"name": "code", "input": "1 + 1"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "2"}]
    steer.text = "Two."
    assert client.chat.completions.create(model=MODEL, messages=history, tools=[CODE_TOOL], max_tokens=8).choices[0].message.content == "Two."  # type: ignore[arg-type, list-item]


def test_a_custom_tool_whose_grammar_does_not_build_is_a_400(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, _ = coder
    bad = {"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: UNDEFINED"}}}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, tools=[bad], max_tokens=5)  # type: ignore[list-item]
    assert raised.value.body["param"] == "tools[0].custom.format.grammar.definition"  # type: ignore[index]


def test_custom_tools_in_the_responses_api(coder: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = coder
    tool = {"type": "custom", "name": "sql", "description": "Run a query", "format": SQL_TOOL["custom"]["format"]}  # type: ignore[index]
    steer.text = custom_call("sql", "SELECT name FROM users")
    response = client.responses.create(model=MODEL, input="Who are the users?", tools=[tool], tool_choice={"type": "custom", "name": "sql"},  # type: ignore[list-item, arg-type]
                                       max_output_tokens=60)
    [item] = [i for i in response.output if i.type == "custom_tool_call"]
    assert item.name == "sql" and item.input == "SELECT name FROM users"  # type: ignore[union-attr]
    events = list(client.responses.create(model=MODEL, input="Who are the users?", tools=[tool], tool_choice="required",  # type: ignore[list-item]
                                          max_output_tokens=60, stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.custom_tool_call_input.delta")  # type: ignore[union-attr]
    done = [e for e in events if e.type == "response.custom_tool_call_input.done"]
    assert deltas == done[0].input == "SELECT name FROM users"  # type: ignore[union-attr]
    steer.text = "Ana and Bo."
    follow = client.responses.create(model=MODEL, previous_response_id=response.id, tools=[tool],  # type: ignore[list-item]
                                     input=[{"type": "custom_tool_call_output", "call_id": item.call_id, "output": "Ana, Bo"}],  # type: ignore[union-attr]
                                     max_output_tokens=10)
    assert follow.output_text == "Ana and Bo."


def test_auto_calls_between_texts(coder: tuple[openai.OpenAI, Steer]) -> None:
    """``auto`` is a structural tag: text, a block of calls, text again, another block."""
    client, steer = coder
    steer.text = "First Paris.\n" + call("Paris", "2") + "\nNow Rome.\n" + call("Rome", "3") + "\nDone."
    whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], max_tokens=160)
    message = whole.choices[0].message
    assert message.content == "First Paris.\n\nNow Rome.\n\nDone."
    assert [json.loads(c.function.arguments)["city"] for c in message.tool_calls or []] == ["Paris", "Rome"]  # type: ignore[union-attr]
    assert whole.choices[0].finish_reason == "tool_calls"
    content, arguments = "", ["", ""]
    for chunk in client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], max_tokens=160, stream=True):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or ():
                arguments[delta.index] += (delta.function.arguments or "") if delta.function else ""
    assert content == message.content and arguments == [c.function.arguments for c in message.tool_calls or []]  # type: ignore[union-attr]
    steer.text = "Only Paris.\n" + call("Paris", "2") + "\nAnd more text."
    single = client.chat.completions.create(model=MODEL, messages=ASK, tools=[FORECAST], max_tokens=120, parallel_tool_calls=False)
    assert single.choices[0].message.content == "Only Paris.\n" and len(single.choices[0].message.tool_calls or []) == 1  # ends with its call

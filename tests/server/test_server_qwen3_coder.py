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

"""Reasoning models on a live server, through the official ``openai`` client.

A tiny random-weight Llama on the real DeepSeek vocabulary (its ``<think>`` and
``</think>`` are text tokens), with two chat templates: DeepSeek-R1's way (the
generation prompt opens ``<think>``) and Qwen3's (the model writes ``<think>``
itself; ``enable_thinking: false`` writes an empty section into the prompt). A
forward hook steers the random model toward a script, token by token; the masks
still decide what may come, so a script that breaks the answer's constraint
shows whether the constraint was applied after the section.
"""

from __future__ import annotations

import json
from typing import Iterator

import openai
import pytest

import vocabularies
from test_server import CITY, KEY, MODEL, WEATHER, serving
from steering import Steer
from tiny_model import tiny_model

pytestmark = pytest.mark.server

R1 = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content }}<｜end▁of▁sentence｜>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜><think>\n{% endif %}"
)
QWEN = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n"
    "{% endif %}{{ m.content }}<｜end▁of▁sentence｜>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜>{% if enable_thinking is defined and enable_thinking is false %}"
    "<think>\n\n</think>\n\n{% endif %}{% endif %}"
)
ANSWER = {"type": "object", "properties": {"city": CITY}, "required": ["city"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER}}
ASK = [{"role": "user", "content": "Where is it sunny?"}]
THOUGHT = "\nThe user wants a city. Paris is sunny.\n"


def _server(template: str) -> Iterator[tuple[openai.OpenAI, Steer]]:
    from structgen.server import create_app

    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = template
    model = tiny_model(tokenizer)
    steer = Steer(model, tokenizer, "<｜Assistant｜>")
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), steer


@pytest.fixture(scope="module")
def r1() -> Iterator[tuple[openai.OpenAI, Steer]]:
    yield from _server(R1)


@pytest.fixture(scope="module")
def qwen() -> Iterator[tuple[openai.OpenAI, Steer]]:
    yield from _server(QWEN)


def test_reasoning_then_the_answer_in_its_schema(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + '</think>\n\n{"city": "Paris"}'
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80)
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert json.loads(message.content or "") == {"city": "Paris"}
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.completion_tokens_details is not None
    thought = reply.usage.completion_tokens_details.reasoning_tokens
    assert 0 < thought < reply.usage.completion_tokens


def test_the_answer_is_constrained_after_the_section(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + "</think>\n\nSure! It is Paris."  # no JSON: the mask must refuse it
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80)
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert json.loads(message.content or "")["city"] in CITY["enum"]


def test_the_section_takes_no_mask(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    thought = '\n{not json} <b> "unbalanced [ text\n'  # what no JSON grammar would allow
    steer.text = "<think>\n" + thought + '</think>\n{"city": "Tokyo"}'
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80)
    assert reply.choices[0].message.reasoning_content == thought  # type: ignore[attr-defined]
    assert json.loads(reply.choices[0].message.content or "") == {"city": "Tokyo"}


def test_a_budget_ends_the_section(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT * 20  # it would think on and on
    reply = client.chat.completions.create(
        model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=100, extra_body={"thinking_budget": 6}
    )
    message = reply.choices[0].message
    reasoning = message.reasoning_content  # type: ignore[attr-defined]
    assert reasoning and ("<think>\n" + THOUGHT * 20).startswith("<think>\n" + reasoning)
    assert len(vocabularies.deepseek().encode(reasoning, add_special_tokens=False)) <= 7
    assert json.loads(message.content or "")["city"] in CITY["enum"]
    low = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=100, reasoning_effort="none")
    assert low.choices[0].message.reasoning_content == ""  # type: ignore[attr-defined]  # closed at once
    assert json.loads(low.choices[0].message.content or "")["city"] in CITY["enum"]


def test_streamed_reasoning_then_content(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + '</think>\n\n{"city": "Berlin"}'
    whole = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80).choices[0].message
    reasoning, content, order = "", "", []
    for chunk in client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80, stream=True):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        piece = getattr(delta, "reasoning_content", None)
        if piece:
            reasoning += piece
            order.append("r")
        if delta.content:
            content += delta.content
            order.append("c")
    assert reasoning == whole.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert content == whole.content and json.loads(content) == {"city": "Berlin"}
    assert order == sorted(order, reverse=True) and "r" in order and "c" in order  # all reasoning first


def test_reasoning_then_a_required_call(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + "</think>\n\n"
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=80)
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"
    assert json.loads(message.tool_calls[0].function.arguments)["city"] in CITY["enum"]
    assert reply.choices[0].finish_reason == "tool_calls"


def test_reasoning_then_a_named_call(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + '</think>\n\nSure, here: {"city": "Rome"}'  # prose, then no tag: the mask refuses both
    named = {"type": "function", "function": {"name": "get_weather"}}
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice=named, max_tokens=80)  # type: ignore[arg-type]
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    [call] = message.tool_calls or []
    assert call.function.name == "get_weather" and json.loads(call.function.arguments)["city"] in CITY["enum"]
    assert reply.choices[0].finish_reason == "stop"  # as OpenAI answers a named tool_choice


def test_reasoning_then_text_and_a_call_in_auto(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    call = '<tool_call>\n{"name":"get_weather","arguments":{"city":"Berlin"}}\n</tool_call>'
    steer.text = "<think>\n" + THOUGHT + "</think>\n\nLet me look.\n" + call
    reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], max_tokens=120)
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert (message.content or "").strip() == "Let me look."
    assert message.tool_calls and json.loads(message.tool_calls[0].function.arguments) == {"city": "Berlin"}
    assert reply.choices[0].finish_reason == "tool_calls"


def test_responses_api_reasoning_item(r1: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = r1
    steer.text = "<think>\n" + THOUGHT + '</think>\n\n{"city": "Paris"}'
    text = {"format": {"type": "json_schema", "name": "answer", "schema": ANSWER}}
    response = client.responses.create(model=MODEL, input=ASK, text=text, max_output_tokens=80)  # type: ignore[arg-type]
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message"]
    assert response.usage is not None and 0 < response.usage.output_tokens_details.reasoning_tokens < response.usage.output_tokens
    assert response.output[0].content[0].text == THOUGHT  # type: ignore[union-attr, index]
    assert json.loads(response.output_text) == {"city": "Paris"}
    events = list(client.responses.create(model=MODEL, input=ASK, text=text, max_output_tokens=80, stream=True))  # type: ignore[arg-type]
    deltas = "".join(e.delta for e in events if e.type == "response.reasoning_text.delta")
    assert deltas == THOUGHT
    done = [e for e in events if e.type == "response.completed"]
    assert [item.type for item in done[0].response.output] == ["reasoning", "message"]


def test_both_field_names_out_and_back_in(qwen: tuple[openai.OpenAI, Steer]) -> None:
    """vLLM now writes ``reasoning``, DeepSeek ``reasoning_content``: both go out;
    either, sent back in a past turn, reaches the template (Qwen3's writes it)."""
    client, steer = qwen
    steer.text = "<think>" + THOUGHT + '</think>\n\n{"city": "Paris"}'
    message = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80).choices[0].message
    assert message.reasoning == message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    from structgen.server.chat import ChatPrompt
    from structgen.server.protocol import Message
    from structgen.server.tool_syntax import HERMES

    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = QWEN
    prompt = ChatPrompt(tokenizer, HERMES)
    for key in ("reasoning", "reasoning_content"):
        turns = [Message(role="user", content="hi"), Message.model_validate({"role": "assistant", "content": "ok", key: "I pondered."}),
                 Message(role="user", content="and?")]
        assert "<think>\nI pondered.\n</think>" in prompt.render(turns, None)


def test_the_model_opens_the_section_itself(qwen: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = qwen
    steer.text = "<think>" + THOUGHT + '</think>\n\n{"city": "Rome"}'  # Rome is no choice: the mask refuses it
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=80)
    message = reply.choices[0].message
    assert message.reasoning_content == THOUGHT  # type: ignore[attr-defined]
    assert json.loads(message.content or "")["city"] in CITY["enum"]


def test_thinking_turned_off_by_the_template(qwen: tuple[openai.OpenAI, Steer]) -> None:
    client, steer = qwen
    steer.text = '{"city": "Tokyo"}'
    for extra in ({"chat_template_kwargs": {"enable_thinking": False}}, {"reasoning_effort": "none"}):
        reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=FORMAT, max_tokens=40, extra_body=extra)
        message = reply.choices[0].message
        assert message.reasoning_content is None  # type: ignore[attr-defined]
        assert json.loads(message.content or "") == {"city": "Tokyo"}


def test_reasoning_requests_that_cannot_apply_are_400(qwen: tuple[openai.OpenAI, Steer]) -> None:
    client, _ = qwen
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5,
                                       extra_body={"chat_template_kwargs": {"enable_thinking": False}, "thinking_budget": 4})
    assert caught.value.body["param"] == "thinking_budget"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, extra_body={"chat_template_kwargs": {"tools": []}})
    assert caught.value.body["param"] == "chat_template_kwargs"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, extra_body={"thinking_budget": -1})
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="hi", reasoning={"effort": "extreme"})  # type: ignore[typeddict-item]
    assert caught.value.body["param"] == "reasoning.effort"  # type: ignore[index]

"""Structural tags on a live server: ``response_format: {"type": "structural_tag"}``
(XGrammar's ``format`` and the older ``structures``), vLLM's
``structured_outputs.structural_tag``, and ``generate(structural_tag=...)``.

A tiny random-weight Llama on the real DeepSeek vocabulary, steered toward a
script by a forward hook: text, a tagged section whose JSON breaks its schema,
then text again. The section must come out valid, the text around it as written.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import openai
import pytest

import vocabularies
from steering import Steer
from test_server import CITY, KEY, MODEL, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content }}<｜end▁of▁sentence｜>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜>{% endif %}"
)
WEATHER = {"type": "object", "properties": {"city": CITY}, "required": ["city"]}
TAGS = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<function="],
        "tags": [{"type": "tag", "begin": "<function=get_weather>", "content": {"type": "json_schema", "json_schema": WEATHER},
                  "end": "</function>"}],
    },
}
LEGACY = {"type": "structural_tag", "triggers": ["<function="],
          "structures": [{"begin": "<function=get_weather>", "schema": WEATHER, "end": "</function>"}]}
ASK = [{"role": "user", "content": "Weather?"}]
SCRIPT = 'Let me check. <function=get_weather>{"city": "Rome"}</function> Then I answer.'  # Rome is no choice
SECTION = re.compile(r"<function=get_weather>(.*?)</function>", re.S)


@pytest.fixture(scope="module")
def tagged() -> Iterator[tuple[openai.OpenAI, Steer, Any, Any]]:
    from structgen.server import create_app

    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = TEMPLATE
    model = tiny_model(tokenizer)
    steer = Steer(model, tokenizer, "<｜Assistant｜>")
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY)) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), steer, model, tokenizer


def check(text: str) -> None:
    assert text.startswith("Let me check. <function=get_weather>")
    sections = SECTION.findall(text)
    assert len(sections) >= 1 and json.loads(sections[0])["city"] in CITY["enum"]


@pytest.mark.parametrize("form", [TAGS, LEGACY], ids=["format", "structures"])
def test_a_section_is_held_to_its_schema_and_text_goes_on(tagged: tuple[openai.OpenAI, Steer, Any, Any], form: dict[str, Any]) -> None:
    client, steer, _, _ = tagged
    steer.text = SCRIPT
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=form, max_tokens=60)  # type: ignore[arg-type]
    text = reply.choices[0].message.content or ""
    check(text)
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model=MODEL, messages=ASK, response_format=form, max_tokens=60, stream=True) if c.choices)  # type: ignore[arg-type]
    assert streamed == text


def test_text_after_a_section_and_a_second_section(tagged: tuple[openai.OpenAI, Steer, Any, Any]) -> None:
    client, steer, _, _ = tagged
    script = ('Checking <function=get_weather>{"city": "Paris"}</function> and '
              '<function=get_weather>{"city": "Tokyo"}</function>. Both are sunny.')
    steer.text = script
    reply = client.chat.completions.create(model=MODEL, messages=ASK, response_format=TAGS, max_tokens=80)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == script and reply.choices[0].finish_reason == "stop"


def test_vllm_structured_outputs_field(tagged: tuple[openai.OpenAI, Steer, Any, Any]) -> None:
    client, steer, _, _ = tagged
    steer.text = SCRIPT
    reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=60,
                                           extra_body={"structured_outputs": {"structural_tag": json.dumps(TAGS)}})
    check(reply.choices[0].message.content or "")


def test_the_responses_api_takes_it_as_an_extension(tagged: tuple[openai.OpenAI, Steer, Any, Any]) -> None:
    client, steer, _, _ = tagged
    steer.text = SCRIPT
    response = client.responses.create(model=MODEL, input=ASK, max_output_tokens=60,  # type: ignore[arg-type]
                                       extra_body={"structured_outputs": {"structural_tag": json.dumps(TAGS)}})
    check(response.output_text)


def test_a_bad_structural_tag_is_a_400_naming_the_place(tagged: tuple[openai.OpenAI, Steer, Any, Any]) -> None:
    client, _, _, _ = tagged
    bad = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<x"], "tags": [
        {"begin": "<y>", "content": {"type": "const_string", "value": "a"}, "end": "</y>"}]}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, response_format=bad, max_tokens=5)  # type: ignore[arg-type]
    assert raised.value.body["param"] == "response_format"  # type: ignore[index]
    assert "format.tags[0].begin" in raised.value.body["message"]  # type: ignore[index]


def test_generate_with_a_structural_tag(tagged: tuple[openai.OpenAI, Steer, Any, Any]) -> None:
    import structgen

    _, steer, model, tokenizer = tagged
    steer.text = SCRIPT
    text = structgen.generate(model, tokenizer, ASK, structural_tag=TAGS, max_tokens=60)
    check(text)

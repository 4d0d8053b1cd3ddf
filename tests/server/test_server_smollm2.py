"""The server on the bundled SmolLM2: a response format leaves the model its own layout.

Asked for JSON with keys name, country and population, the model writes an object
laid out with newlines and indentation. Under ``json_object`` the server once
answered ``{}``: the object closed to undeclared keys and no whitespace allowed.
Where the model's own greedy answer is a JSON object, the constrained answer is
that same text.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import openai
import pytest

import structgen
from test_server import serving

pytestmark = [pytest.mark.model, pytest.mark.server]

MODEL = "smollm2"
ASK = [{"role": "user", "content": "Give the capital of France as JSON with keys name, country and population."}]


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    from structgen.server import create_app

    model, tokenizer = structgen.load_model()
    with serving(create_app(model, tokenizer, model_id=MODEL)) as base:
        yield openai.OpenAI(base_url=base, api_key="unused", max_retries=0)


def _answer(client: openai.OpenAI, **fields: Any) -> str:
    reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=60, temperature=0, **fields)
    assert reply.choices[0].finish_reason == "stop"
    content = reply.choices[0].message.content
    assert content is not None
    return content


def test_json_object_is_the_models_own_object(client: openai.OpenAI) -> None:
    free = _answer(client)
    assert isinstance(json.loads(free), dict) and "\n" in free  # the model's own answer: a laid-out object
    assert _answer(client, response_format={"type": "json_object"}) == free


def test_a_json_schema_format_keeps_the_layout(client: openai.OpenAI) -> None:
    """A schema the model's answer meets: the same text; asked compact (vLLM's
    ``disable_any_whitespace``), an object without whitespace between tokens."""
    free = _answer(client)
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "country": {"type": "string"},
                                               "population": {"type": "integer"}}}
    format_ = {"type": "json_schema", "json_schema": {"name": "city", "schema": schema}}
    assert _answer(client, response_format=format_) == free
    compact = _answer(client, response_format=format_, extra_body={"structured_outputs": {"disable_any_whitespace": True}})
    assert compact == json.dumps(json.loads(compact), separators=(",", ":"), ensure_ascii=False) != free

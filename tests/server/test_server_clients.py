"""Client libraries a new user reaches for first, against a live server.

instructor (JSON mode), pydantic-ai (``PromptedOutput``) and langchain-openai
(``with_structured_output(..., method="json_mode")``) all ask for structured output
the same way: ``response_format: {"type": "json_object"}`` with the schema in the
prompt (a recorder checks that each one really sent it). The tiny random model is
steered (``Script``) toward a JSON object laid out as a model writes one, with
newlines and indentation; each library must get back its validated Pydantic object
with those values. Also ``GET /v1/models/{id}`` through ``client.models.retrieve``,
and unknown paths and wrong methods as OpenAI errors with a code that is not about
models (pydantic-ai and langchain turn a 404 into "model not found" on their own).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import openai
import pytest
from pydantic import BaseModel
from recording import Recorder

import structgen
from test_server import KEY, MODEL, Script, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

# what a model writes when asked for JSON: laid out, not compact
PARIS = '{\n  "name": "Paris",\n  "country": "France",\n  "population": 2148000\n}'
ASK = "Which is the capital of France? Answer in JSON."


class City(BaseModel):
    name: str
    country: str
    population: int


EXPECTED = City(name="Paris", country="France", population=2148000)


class Live:
    def __init__(self, base: str, script: Script, recorder: Recorder) -> None:
        self.base = base  # ends in /v1
        self.script = script
        self.recorder = recorder
        self.client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    script = Script(model, tokenizer)
    recorder = Recorder(create_app(model, tokenizer, model_id=MODEL, api_key=KEY))
    with serving(recorder) as base:
        yield Live(base, script, recorder)


@pytest.fixture
def steered(live: Live) -> Iterator[Live]:
    """The server, its model steered toward ``PARIS``; the recorder emptied."""
    live.script.text = PARIS
    live.recorder.requests.clear()
    try:
        yield live
    finally:
        live.script.text = None


def sent_json_mode(live: Live) -> None:
    """Every chat request the library sent asked for ``json_object`` with the schema's fields in the prompt."""
    assert live.recorder.bodies("/v1/chat/completions"), "the library sent no chat request"
    for body in live.recorder.bodies("/v1/chat/completions"):
        assert body["response_format"]["type"] == "json_object", body.get("response_format")
        prompt = json.dumps(body["messages"])
        assert all(field in prompt for field in ("name", "country", "population")), prompt


def test_instructor_json_mode(steered: Live) -> None:
    import instructor

    client = instructor.from_openai(steered.client, mode=instructor.Mode.JSON)
    city = client.chat.completions.create(
        model=MODEL, response_model=City, messages=[{"role": "user", "content": ASK}], max_tokens=80, max_retries=0
    )
    sent_json_mode(steered)
    # instructor hands back an instance of its own subclass of City
    assert isinstance(city, City) and city.model_dump() == EXPECTED.model_dump()


def test_pydantic_ai_prompted_output(steered: Live) -> None:
    from pydantic_ai import Agent, PromptedOutput
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=steered.base, api_key=KEY))
    agent = Agent(model, output_type=PromptedOutput(City), retries=0)
    result = agent.run_sync(ASK, model_settings={"max_tokens": 80})
    sent_json_mode(steered)
    assert result.output == EXPECTED


def test_langchain_json_mode(steered: Live) -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model=MODEL, base_url=steered.base, api_key=KEY, max_retries=0, max_tokens=80)  # type: ignore[arg-type]
    structured = chat.with_structured_output(City, method="json_mode")
    # json_mode leaves the schema to the prompt
    schema = json.dumps(City.model_json_schema())
    city = structured.invoke([("system", f"Answer with a JSON object matching this schema: {schema}"), ("user", ASK)])
    sent_json_mode(steered)
    assert city == EXPECTED


# -- GET /v1/models/{id}


def test_models_retrieve(live: Live) -> None:
    model = live.client.models.retrieve(MODEL)
    listed = live.client.models.list().data[0]
    assert (model.id, model.object, model.owned_by) == (MODEL, "model", "structgen")
    assert model.model_dump() == listed.model_dump()  # the list's entry, field for field
    for unknown in ("gpt-9", "org/tiny"):  # the SDK sends the slash as %2F
        with pytest.raises(openai.NotFoundError) as missing:
            live.client.models.retrieve(unknown)
        error = missing.value.body
        assert isinstance(error, dict) and error["code"] == "model_not_found" and error["param"] == "model"
        assert repr(unknown) in error["message"]
    stranger = openai.OpenAI(base_url=live.base, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        stranger.models.retrieve(MODEL)


# -- unknown paths and wrong methods


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    return body["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("method", "path", "hint"),
    [
        ("GET", "/v1/nothing", None),
        ("POST", "/v1/chat/complete", None),
        ("POST", "/chat/completions", "/v1/chat/completions"),  # a base_url without its /v1
        ("GET", "/models", "/v1/models"),
    ],
)
def test_an_unknown_path_is_404_not_found(live: Live, method: str, path: str, hint: str | None) -> None:
    import httpx2

    response = httpx2.request(method, live.base.removesuffix("/v1") + path, headers={"Authorization": f"Bearer {KEY}"}, json={})
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "not_found" and error["type"] == "invalid_request_error"
    assert f"{method} {path}" in error["message"]
    if hint is None:
        assert "model" not in error["message"].lower()
    else:
        assert f"did you mean {hint}?" in error["message"]


@pytest.mark.parametrize(("method", "path", "allowed"), [("GET", "/v1/chat/completions", "POST"), ("DELETE", "/v1/models", "GET")])
def test_a_wrong_method_is_405(live: Live, method: str, path: str, allowed: str) -> None:
    import httpx2

    response = httpx2.request(method, live.base.removesuffix("/v1") + path, headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 405 and response.headers["allow"] == allowed
    error = error_of(response)
    assert error["code"] == "method_not_allowed" and method in error["message"] and allowed in error["message"]


def test_clients_see_the_path_not_a_model(live: Live) -> None:
    """A base URL without ``/v1``: the openai SDK's NotFoundError carries ``not_found``
    and the path, and so do the errors pydantic-ai and langchain raise from it."""
    root = live.base.removesuffix("/v1")
    with pytest.raises(openai.NotFoundError) as raised:
        openai.OpenAI(base_url=root, api_key=KEY, max_retries=0).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=5
        )
    error = raised.value.body
    assert isinstance(error, dict) and error["code"] == "not_found" and "/chat/completions" in error["message"]

    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=root, api_key=KEY)), retries=0)
    with pytest.raises(ModelHTTPError) as from_pydantic_ai:
        agent.run_sync("hi", model_settings={"max_tokens": 5})
    assert "not_found" in str(from_pydantic_ai.value.body) and "/chat/completions" in str(from_pydantic_ai.value.body)

    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model=MODEL, base_url=root, api_key=KEY, max_retries=0, max_tokens=5)  # type: ignore[arg-type]
    with pytest.raises(openai.NotFoundError) as from_langchain:
        chat.invoke("hi")
    assert isinstance(from_langchain.value.body, dict) and from_langchain.value.body["code"] == "not_found"

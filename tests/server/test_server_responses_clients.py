"""Agent frameworks on the Responses API (``/v1/responses``), against a live server.

instructor (``Mode.RESPONSES_TOOLS``: the answer as a forced function call),
pydantic-ai (``OpenAIResponsesModel`` with an ``output_type`` and one tool: a tool
call, its result sent back as ``function_call_output``, then the final answer),
langchain-openai (``use_responses_api=True`` with ``with_structured_output``:
``text.format`` with a strict JSON Schema) and the OpenAI Agents SDK (its default
model). The tiny random model is steered (``Script``) turn by turn; a recorder
checks that each library really went through ``/v1/responses``, and each must get
its validated object back.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import openai
import pytest
from pydantic import BaseModel
from recording import Recorder

import structgen
from test_server import ASSISTANT_TURN, KEY, MODEL, Script, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

ASK = "Which is the capital of France? What is the weather there?"
PARIS = {"name": "Paris", "country": "France", "population": 2148000}
LAID_OUT = json.dumps(PARIS, indent=2)  # what a model writes when asked for JSON


class City(BaseModel):
    name: str
    country: str
    population: int


EXPECTED = City(**PARIS)


def call(name: str, arguments: dict[str, Any]) -> str:
    """A call as the tiny model's syntax writes it (compact, as the grammar has it)."""
    return '<tool_call>\n{"name":' + json.dumps(name) + ',"arguments":' + json.dumps(arguments, separators=(",", ":")) + "}\n</tool_call>"


class Turns(Script):
    """A script per turn: ``choose(prompt)`` picks the text to steer toward from
    the prompt so far (a tool's result in it means the next turn)."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        super().__init__(model, tokenizer)
        self.choose: Callable[[str], str | None] | None = None

    def _hook(self, module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        if self.choose is not None:
            if int(kwargs["position_ids"][0, 0]) == 0:
                prompt = self.tokenizer.decode([int(i) for i in kwargs["input_ids"][0]])
                self.text = self.choose(prompt.rsplit(ASSISTANT_TURN, 1)[0])
        return super()._hook(module, args, kwargs, output)


class Live:
    def __init__(self, base: str, script: Turns, recorder: Recorder) -> None:
        self.base, self.script, self.recorder = base, script, recorder
        self.client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)


@pytest.fixture(scope="module")
def server() -> Iterator[Live]:
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer)
    script = Turns(model, tokenizer)
    recorder = Recorder(create_app(model, tokenizer, model_id=MODEL, api_key=KEY))
    with serving(recorder) as base:
        yield Live(base, script, recorder)


@pytest.fixture
def live(server: Live) -> Iterator[Live]:
    server.recorder.requests.clear()
    try:
        yield server
    finally:
        server.script.choose = None
        server.script.text = None


def weather_then(final: str) -> Callable[[str], str]:
    """First a call of ``get_weather`` for Paris; once its result is in the prompt, ``final``."""
    return lambda prompt: final if "sunny" in prompt else call("get_weather", {"city": "Paris"})


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_instructor_responses_tools(live: Live) -> None:
    import instructor

    live.script.text = call("City", PARIS)
    client = instructor.from_openai(live.client, mode=instructor.Mode.RESPONSES_TOOLS)
    city = client.responses.create(model=MODEL, response_model=City, input=[{"role": "user", "content": ASK}],
                                   max_retries=0)
    assert live.recorder.paths() == {"/v1/responses"}
    sent = live.recorder.requests[0][1]
    assert sent["tools"][0]["name"] == "City" and sent["tool_choice"]["type"] == "function"
    assert isinstance(city, City) and city.model_dump() == EXPECTED.model_dump()


def test_pydantic_ai_responses_model_with_a_tool(live: Live) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIResponsesModel(MODEL, provider=OpenAIProvider(base_url=live.base, api_key=KEY))
    agent = Agent(model, output_type=City, retries=0, tools=[get_weather])
    live.script.choose = weather_then(call("final_result", PARIS))
    result = agent.run_sync(ASK, model_settings={"max_tokens": 120})
    assert live.recorder.paths() == {"/v1/responses"}
    assert result.output == EXPECTED
    follow = live.recorder.requests[-1][1]  # the turn after the tool ran: its output sent back
    outputs = [item for item in follow["input"] if item.get("type") == "function_call_output"]
    assert outputs and "sunny in Paris" in json.dumps(outputs)


def test_langchain_responses_api_structured_output(live: Live) -> None:
    from langchain_openai import ChatOpenAI

    live.script.text = LAID_OUT
    chat = ChatOpenAI(model=MODEL, base_url=live.base, api_key=KEY, max_retries=0, use_responses_api=True,  # type: ignore[arg-type]
                      max_tokens=120)
    city = chat.with_structured_output(City).invoke(ASK)
    assert live.recorder.paths() == {"/v1/responses"}
    sent = live.recorder.requests[0][1]
    assert sent["text"]["format"]["type"] == "json_schema"
    assert city == EXPECTED


def test_openai_agents_default_model(live: Live) -> None:
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=live.base, api_key=KEY, max_retries=0)
    agent = Agent(name="cities", instructions="Answer about cities.", output_type=City,
                  model=OpenAIResponsesModel(model=MODEL, openai_client=client),
                  tools=[function_tool(get_weather)], model_settings=ModelSettings(max_tokens=160))
    live.script.choose = weather_then(LAID_OUT)
    result = Runner.run_sync(agent, ASK)
    assert live.recorder.paths() == {"/v1/responses"}
    assert result.final_output == EXPECTED
    assert len(live.recorder.requests) == 2

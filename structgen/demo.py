"""``structgen demo``: constrained generation on the bundled SmolLM2, on this machine.

Two jobs a user brings: pull a typed object out of a paragraph (a Pydantic
model), and pick a function and fill its arguments (a JSON Schema built from two
tool definitions). Both outputs are guaranteed to parse; the demo prints them
with their speed and what jump-forward saved.
"""

from __future__ import annotations

import json
import time
from enum import Enum

from pydantic import BaseModel, Field

PARAGRAPH = (
    "Maria Lopez joined the payments team in 2019. She is 34, works from Lisbon, "
    "and leads the migration to the new ledger."
)

TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "unit", "days"],
        },
    },
    {
        "name": "book_table",
        "description": "Book a restaurant table.",
        "parameters": {
            "type": "object",
            "properties": {"restaurant": {"type": "string"}, "people": {"type": "integer", "minimum": 1}},
            "required": ["restaurant", "people"],
        },
    },
]

QUESTION = "What will the weather be in Paris over the next 3 days? Use celsius."


class Team(str, Enum):
    PAYMENTS = "payments"
    SEARCH = "search"
    INFRASTRUCTURE = "infrastructure"


class Employee(BaseModel):
    name: str = Field(description="the employee's full name")
    age: int = Field(ge=16, le=100, description="how old the employee is, in years")
    team: Team = Field(description="the team the employee works in")
    city: str = Field(description="the city the employee works from")


# The layout json.dumps writes, spaces after "," and ":": the JSON a model has read.
# In compact JSON (generate's default, which lets jump-forward append every key) the
# bundled 135M model reads the age wrong (22 or 23 for "She is 34"), whatever the prompt.
SEPARATORS = (", ", ": ")


def extraction_messages(paragraph: str) -> list[dict[str, str]]:
    """What a careful user sends: the schema, with its field descriptions, and the text."""
    schema = json.dumps(Employee.model_json_schema())
    return [
        {"role": "system", "content": f"Answer with JSON matching this schema:\n{schema}"},
        {"role": "user", "content": f"Extract the employee from this text:\n{paragraph}"},
    ]


def call_schema(tools: list[dict[str, object]]) -> dict[str, object]:
    """One call to any of ``tools``: ``{"name": ..., "arguments": {...}}``."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": tool["name"]}, "arguments": tool["parameters"]},
                "required": ["name", "arguments"],
            }
            for tool in tools
        ]
    }


def run_demo(model_path: str | None = None) -> int:
    import os
    import warnings

    import structgen

    os.environ.setdefault("TQDM_DISABLE", "1")  # the GGUF loader's progress bars
    # SmolLM2 has no tokens for 8 control bytes; JSON never needs them raw
    warnings.filterwarnings("ignore", message=".*no single-byte token", category=UserWarning)
    started = time.perf_counter()
    import torch  # noqa: F401 - timed apart: importing the libraries is no part of the model's load
    import transformers.models.llama.modeling_llama  # noqa: F401

    imported = time.perf_counter()
    model, tokenizer = structgen.load_model(model_path)
    print(f"model: {model_path or structgen.bundled_model_path().name} on {model.device} "
          f"({time.perf_counter() - imported:.1f} s to load, after {imported - started:.1f} s importing torch and transformers)\n")

    print(f"1. A Pydantic object from a paragraph (its JSON schema, with descriptions, in the prompt)\n   {PARAGRAPH}")
    result = structgen.generate(
        model, tokenizer, extraction_messages(PARAGRAPH), schema=Employee, details=True, separators=SEPARATORS
    )
    print(f"   -> {result.value!r}")
    _report(result)

    tool_list = "\n".join(f"- {t['name']}: {t['description']}" for t in TOOLS)
    tool_list += '\nAnswer like {"name": "get_weather", "arguments": {...}}.'
    print(f"\n2. A function call whose arguments follow a JSON schema\n   {QUESTION}")
    messages = [
        {"role": "system", "content": f"You call one of these tools, as JSON:\n{tool_list}"},
        {"role": "user", "content": QUESTION},
    ]
    # small models repeat digits in unbounded integers: the penalty keeps them short
    result = structgen.generate(
        model, tokenizer, messages, schema=call_schema(TOOLS), repetition_penalty=1.3, details=True, separators=SEPARATORS
    )
    call = result.value
    print(f"   -> {call['name']}({', '.join(f'{k}={json.dumps(v)}' for k, v in call['arguments'].items())})")
    _report(result)
    return 0


def _report(result: object) -> None:
    from structgen import Generation

    assert isinstance(result, Generation)
    print(
        f"   {len(result.token_ids)} tokens in {result.seconds:.2f} s ({result.tokens_per_second:.1f} tokens/s); "
        f"{result.forward_passes} forward passes, {result.forced_tokens} tokens appended by jump-forward"
    )

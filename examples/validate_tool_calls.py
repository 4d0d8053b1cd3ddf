"""An agent loop guarded by structgen's tool-call validator (docs/tool_calls.md).

The "model" here is simulated and deterministic: a list of replies, as a hosted
API would send them. A bad call is not executed: its error message goes back to
the model, which retries. A streamed call is checked as its argument text
arrives, and stopped at the first byte that no valid call can follow, before
the rest is generated (and paid for).

    .venv/bin/python examples/validate_tool_calls.py
"""

from __future__ import annotations

import json
from typing import Literal

from structgen import ToolCallValidator, ToolSet, validate_tool_call


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"], days: int = 1) -> str:
    """The weather forecast for a city."""
    return f"{days} day(s) of sun in {city}, 21 degrees {unit}"


TOOLS = ToolSet.read([get_weather])  # a plain function: its signature is the schema

# What the simulated model answers, turn after turn: a wrong name, then a wrong
# unit, then a good call.
REPLIES = [
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}},
    {"id": "call_2", "type": "function",
     "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "unit": "kelvin", "days": "2"}'}},
    {"id": "call_3", "type": "function",
     "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "unit": "celsius", "days": 2}'}},
]


def agent_loop() -> None:
    messages: list[dict[str, str]] = [{"role": "user", "content": "Weather in Oslo for two days?"}]
    for turn, call in enumerate(REPLIES, 1):
        result = validate_tool_call(TOOLS, call)
        if not result:
            print(f"turn {turn}: rejected, sent back to the model:\n{result.message}\n")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.message})
            continue
        output = get_weather(**result.arguments)
        print(f"turn {turn}: {result.name}({json.dumps(result.arguments)}) -> {output}\n")
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        break


def streamed_call() -> None:
    """Argument deltas as an OpenAI stream sends them (after the name)."""
    deltas = ['{"ci', 'ty": "Os', 'lo", "un', 'it": "kel', 'vin", "days": 2}']
    validator = ToolCallValidator(TOOLS)
    validator.start("get_weather")
    for number, delta in enumerate(deltas, 1):
        stopped = validator.feed(delta)
        if stopped is not None:
            print(f"streamed call stopped at delta {number} of {len(deltas)}, byte {stopped.offset}:")
            print(stopped.message)
            return
    print(validator.finish())


if __name__ == "__main__":
    agent_loop()
    streamed_call()

"""An agent turn through the server's Responses API (docs/responses.md), with the
official ``openai`` client, unchanged.

Starts ``structgen serve`` on the bundled SmolLM2-135M-Instruct, asks a question
with a function tool the model must call, runs the Python function, sends its
result back as a ``function_call_output`` (continuing the stored response with
``previous_response_id``), and asks for a structured report (``.parse`` with a
Pydantic model); then streams an answer and prints its events.

    .venv/bin/python examples/responses_api.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from typing import Literal

import openai
from pydantic import BaseModel, Field


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str = Field(max_length=40)
    unit: Literal["celsius", "fahrenheit"]


class Report(BaseModel):
    city: str = Field(max_length=40)
    temperature: int
    advice: str = Field(max_length=80)


def get_weather(city: str, unit: str) -> dict[str, object]:
    return {"city": city, "temperature": 21 if unit == "celsius" else 70, "sky": "sunny"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, server: subprocess.Popen[bytes], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the server exited; see its output above")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not come up")


def main() -> None:
    port = free_port()
    command = [sys.executable, "-m", "structgen", "serve", "--port", str(port), "--model-id", "smollm2", "--api-key", "secret"]
    server = subprocess.Popen(command)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", server)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="secret")
        tool = {"type": "function", "name": "get_weather", "description": GetWeather.__doc__,
                "parameters": GetWeather.model_json_schema(), "strict": False}

        first = client.responses.create(model="smollm2", input="What is the weather in Paris, in celsius?", tools=[tool],  # type: ignore[list-item]
                                        tool_choice="required", parallel_tool_calls=False, max_output_tokens=60)
        call = next(item for item in first.output if item.type == "function_call")
        print(f"function call: {call.name}({call.arguments})  status={first.status}")
        result = get_weather(**GetWeather.model_validate_json(call.arguments).model_dump())  # valid: the grammar saw to it

        report = client.responses.parse(
            model="smollm2", previous_response_id=first.id, text_format=Report, max_output_tokens=120,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": json.dumps(result)},
                   {"role": "user", "content": "Now a short report with advice."}],
        )
        print(f"report: {report.output_parsed!r}  ({report.usage.input_tokens if report.usage else '?'} input tokens)")

        with client.responses.stream(model="smollm2", input="Say hello to Paris in one sentence.", max_output_tokens=40) as stream:
            kinds = Counter(event.type for event in stream)
            final = stream.get_final_response()
        print(f"streamed: {final.output_text!r}")
        print("events: " + ", ".join(f"{kind} x{count}" for kind, count in kinds.items()))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

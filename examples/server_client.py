"""An agent turn through the OpenAI-compatible server (docs/server.md), with the
official ``openai`` client, unchanged.

Starts ``structgen serve`` on the bundled SmolLM2-135M-Instruct (CPU is fine, it
is small), asks a question with a tool the model must call, runs the Python
function, sends the result back and prints the final answer.

    .venv/bin/python examples/server_client.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Literal

import openai
from pydantic import BaseModel, Field


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str = Field(max_length=40)
    unit: Literal["celsius", "fahrenheit"]


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
        messages: list[dict[str, object]] = [{"role": "user", "content": "What is the weather in Paris, in celsius?"}]
        tools = [openai.pydantic_function_tool(GetWeather, name="get_weather")]

        reply = client.chat.completions.create(model="smollm2", messages=messages, tools=tools, tool_choice="required", parallel_tool_calls=False, max_tokens=60)  # type: ignore[arg-type]
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        print(f"tool call: {call.function.name}({call.function.arguments})  finish_reason={reply.choices[0].finish_reason}")
        arguments = GetWeather.model_validate_json(call.function.arguments)  # valid: the grammar saw to it
        result = get_weather(**arguments.model_dump())

        messages.append({"role": "assistant", "content": None, "tool_calls": [call.model_dump()]})
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        final = client.chat.completions.create(model="smollm2", messages=messages, tools=tools, tool_choice="none", max_tokens=60)  # type: ignore[arg-type]
        print(f"answer: {final.choices[0].message.content}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

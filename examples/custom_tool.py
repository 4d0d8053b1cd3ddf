"""A custom tool whose input is held to a lark grammar, through the server and the
official ``openai`` client (docs/custom_tools.md).

Starts ``structgen serve`` on the bundled SmolLM2-135M-Instruct with Qwen3-Coder's
XML tool-call syntax (``--tool-syntax qwen3_coder``: a custom tool's input is then
raw text, so a lark grammar holds it exactly), asks for a query through a custom
tool ``sql`` and prints the call; whatever the small model writes, the input is
in the grammar. Then the same through the Responses API.

    .venv/bin/python examples/custom_tool.py
"""

from __future__ import annotations

import subprocess
import sys

import openai

from server_client import free_port, wait_until_up

SQL = r"""
start: "SELECT " columns " FROM " NAME where?
columns: NAME (", " NAME)*
where: " WHERE " NAME " = " VALUE
NAME: /[a-z_]{1,20}/
VALUE: /[0-9]{1,6}|'[a-z ]{0,20}'/
"""
FORMAT = {"type": "grammar", "grammar": {"syntax": "lark", "definition": SQL}}


def main() -> None:
    from structgen import Grammar

    port = free_port()
    command = [sys.executable, "-m", "structgen", "serve", "--port", str(port), "--model-id", "smollm2", "--tool-syntax", "qwen3_coder"]
    server = subprocess.Popen(command)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", server)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none")
        ask = "List the names and ages of the users older than 30."
        tool = {"type": "custom", "custom": {"name": "sql", "description": "Run a read-only SQL query", "format": FORMAT}}
        reply = client.chat.completions.create(model="smollm2", messages=[{"role": "user", "content": ask}], tools=[tool],  # type: ignore[list-item]
                                               tool_choice={"type": "custom", "custom": {"name": "sql"}}, max_tokens=60)  # type: ignore[arg-type]
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        print(f"chat: {call.type} {call.custom.name}: {call.custom.input!r}")  # type: ignore[union-attr]
        print("  in the grammar:", Grammar.from_lark(SQL).accepts(call.custom.input) or "(cut by max_tokens)")  # type: ignore[union-attr]

        response = client.responses.create(model="smollm2", input=ask, max_output_tokens=60,
                                           tools=[{"type": "custom", "name": "sql", "format": FORMAT}],  # type: ignore[list-item]
                                           tool_choice={"type": "custom", "name": "sql"})
        for item in response.output:
            if item.type == "custom_tool_call":
                print(f"responses: {item.type} {item.name}: {item.input!r}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

"""Llama 3.1+ JSON tool calls: a bare JSON object per call, ``parameters`` for the arguments.

    {"name": "get_weather", "parameters": {"city": "Paris"}}

Llama 3's template asks for exactly this ("respond with a JSON for a function
call ... in the format {"name": function name, "parameters": ...}"); several calls
are separated by ``; `` (what vLLM's llama3_json parser reads). There is no tag:
the calls start at ``{"name"``, which free text under ``auto`` may not contain.
"""

from __future__ import annotations

from structgen.server.tool_syntax import ToolSyntax

LLAMA3_JSON = ToolSyntax(
    name="llama3_json",
    first="",
    between="; ",
    last="",
    result_open="",
    result_close="",
    arguments_key="parameters",
    start_tag='{"name"',
)

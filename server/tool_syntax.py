"""A model's tool-call syntax: the envelope around each call, how past calls and
tool results are written into the prompt, and how generated text is read back.

Hermes' ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` is the one
built (Qwen and Hermes models write it; for templates that ignore tools, such as
SmolLM2's, the server teaches it in a system block). Another syntax whose calls are
JSON objects between fixed tags is one more ``ToolSyntax(...)``; a different shape
(Mistral's ``[TOOL_CALLS][...]``) overrides ``parse`` and the grammar pieces.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from structgen.tool_calls import Tool


@dataclass
class ParsedCall:
    """One call read from the output: ``name`` None until it is complete;
    ``arguments`` the JSON text so far; ``complete`` once the object closed."""

    name: str | None
    arguments: str
    complete: bool


@dataclass
class ParsedOutput:
    content: str
    calls: list[ParsedCall]


@dataclass(frozen=True)
class ToolSyntax:
    """Calls as JSON objects ``{name_key: ..., arguments_key: {...}}`` between tags."""

    name: str
    open: str  # written before each call (exactly, by the grammar)
    close: str  # written after each call
    separator: str  # between two calls
    result_open: str
    result_close: str
    name_key: str = "name"
    arguments_key: str = "arguments"

    @property
    def tag(self) -> str:
        """The text that starts a call: in ``auto``, free text may not contain it."""
        return self.open.strip()

    @property
    def call_prefix(self) -> str:
        """What every call's compact JSON starts with, up to the name's first character."""
        return "{" + json.dumps(self.name_key) + ':"'

    def call_schema(self, tool: Tool) -> dict[str, Any]:
        """The JSON Schema of one call of ``tool``: its name, then its arguments."""
        return {
            "type": "object",
            "properties": {self.name_key: {"const": tool.name}, self.arguments_key: tool.schema},
            "required": [self.name_key, self.arguments_key],
            "additionalProperties": False,
        }

    def render_call(self, name: str, arguments: Any) -> str:
        """A past call as the model would have written it."""
        body = json.dumps({self.name_key: name, self.arguments_key: arguments}, ensure_ascii=False)
        return self.open + body + self.close

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        return self.separator.join(self.render_call(name, arguments) for name, arguments in calls)

    def render_result(self, content: str) -> str:
        return self.result_open + content + self.result_close

    def system_block(self, tools: list[Tool]) -> str:
        """Tells a model whose template ignores tools what it may call, and how."""
        listed = "\n".join(
            json.dumps(
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}},
                ensure_ascii=False,
            )
            for t in tools
        )
        example = self.render_call("<function-name>", {"<argument>": "<value>"})
        return (
            "You may call one or more functions to assist with the user query. "
            f"The available functions are listed within <tools></tools> tags:\n<tools>\n{listed}\n</tools>\n"
            f"For each function call, return a JSON object with the function name and arguments as follows:\n{example}"
        )

    def parse(self, text: str, final: bool, text_first: bool = True) -> ParsedOutput:
        """Content and calls in ``text``: calls start at the first tag, or with
        ``text_first`` False only at the very start (a JSON answer may hold the tag
        in a string). While streaming (``final`` False) what may still become the
        tag is held back from the content."""
        start = text.find(self.tag) if text_first else 0 if text.startswith(self.tag) else -1
        if start < 0:
            if final:
                return ParsedOutput(text, [])
            if text_first:
                return ParsedOutput(hold_back(text, (self.tag,)), [])
            return ParsedOutput("" if self.tag.startswith(text) else text, [])
        calls: list[ParsedCall] = []
        head = re.compile(
            r"\s*\{\s*" + re.escape(json.dumps(self.name_key)) + r'\s*:\s*"([A-Za-z0-9_-]*)"\s*,\s*'
            + re.escape(json.dumps(self.arguments_key)) + r"\s*:\s*"
        )
        tail = re.compile(r"\s*\}\s*" + re.escape(self.close.strip()) + r"\s*")
        position = start
        while text.startswith(self.tag, position):
            match = head.match(text, position + len(self.tag))
            if match is None:
                calls.append(ParsedCall(None, "", False))
                break
            end = json_end(text, match.end())
            if end is None:
                calls.append(ParsedCall(match.group(1), text[match.end() :], False))
                break
            calls.append(ParsedCall(match.group(1), text[match.end() : end], True))
            closing = tail.match(text, end)
            if closing is None:
                break
            position = closing.end()
        return ParsedOutput(text[:start], calls)


def json_end(text: str, start: int) -> int | None:
    """The index just after the JSON object or array starting at ``start``
    (strings and escapes respected), or None while it is still open."""
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def hold_back(text: str, words: tuple[str, ...]) -> str:
    """``text`` without its longest tail that is a proper prefix of one of ``words``."""
    cut = 0
    for word in words:
        for size in range(min(len(word) - 1, len(text)), 0, -1):
            if text.endswith(word[:size]):
                cut = max(cut, size)
                break
    return text[: len(text) - cut]


HERMES = ToolSyntax(
    name="hermes",
    open="<tool_call>\n",
    close="\n</tool_call>",
    separator="\n",
    result_open="<tool_response>\n",
    result_close="\n</tool_response>",
)


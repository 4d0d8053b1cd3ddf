"""DeepSeek's tool calls: the function's name as text, then its arguments as JSON,
in an envelope of DeepSeek's own tokens.

V3 and R1 (their chat templates write a fenced JSON block, and a newline before
each further call):

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 and later (the name, the separator, then the JSON):

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

These are what vLLM's ``deepseek_v3`` and ``deepseek_v31`` parsers read. In
DeepSeek's tokenizers the envelope's tokens are added tokens that are text (not
special), so the grammar spells them and the model writes each as its one token.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from schema2grammar import Report
from structgen.grammar import Grammar
from structgen.tool_calls import Tool, ToolSet

from structgen.server.tool_syntax import ParsedCall, ParsedOutput, ToolSyntax, _ended, add_unenforced, json_end

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
SEPARATOR = "<｜tool▁sep｜>"
CALL_END = "<｜tool▁call▁end｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class NamedCallSyntax(ToolSyntax):
    """Calls written as ``<name><name_end><arguments JSON><arguments_end>``, the
    name outside the JSON, in the envelope ``first`` / ``between`` / ``last``."""

    name_end: str = ""
    arguments_end: str = ""

    per_tool: ClassVar[bool] = True
    how_to_call: ClassVar[str] = "write the function's name and its arguments as a JSON object"

    @property
    def call_prefix(self) -> str:
        return ""

    def call_text(self, name: str, arguments: Any) -> str:
        return name + self.name_end + json.dumps(arguments, ensure_ascii=False) + self.arguments_end

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        return self.first + self.between.join(self.call_text(name, arguments) for name, arguments in calls) + self.last

    def parse(self, text: str, final: bool, text_first: bool = True, tools: ToolSet | None = None) -> ParsedOutput:
        start = text.find(self.tag) if text_first else 0 if text.startswith(self.tag) else -1
        if start < 0:
            return super().parse(text, final, text_first, tools)
        calls: list[ParsedCall] = []
        position = start + len(self.first)
        if not text.startswith(self.first, start):
            return ParsedOutput(text[:start], [ParsedCall(None, "", False)])
        while True:
            name = _NAME.match(text, position)
            if name is None or not text.startswith(self.name_end, name.end()):
                calls.append(ParsedCall(None, "", False))
                break
            begins = name.end() + len(self.name_end)
            end = json_end(text, begins)
            if end is None:
                calls.append(ParsedCall(name.group(0), text[begins:], False))
                break
            calls.append(ParsedCall(name.group(0), text[begins:end], True))
            following = end + len(self.arguments_end)
            if not text.startswith(self.arguments_end + self.between, end):
                ended = _ended(text, end, self.arguments_end + self.between, self.arguments_end + self.last, final)
                return ParsedOutput(text[:start], calls, ended)
            position = following + len(self.between)
        return ParsedOutput(text[:start], calls)

    def tool_call_grammar(self, tool: Tool, pointer: str, report: Report, options: dict[str, Any],
                          raw: tuple[str, str] | None = None) -> Grammar:
        arguments = Grammar.from_json_schema(tool.schema, **options)
        add_unenforced(report, arguments.report, pointer)
        parts = [Grammar.literal(tool.name + self.name_end), arguments]
        return Grammar.sequence(*parts, *([Grammar.literal(self.arguments_end)] if self.arguments_end else []))


DEEPSEEK_V3 = NamedCallSyntax(
    name="deepseek_v3",
    first=CALLS_BEGIN + CALL_BEGIN + "function" + SEPARATOR,
    between=CALL_END + "\n" + CALL_BEGIN + "function" + SEPARATOR,  # the template's newline before each further call
    last=CALL_END + CALLS_END,
    result_open="<｜tool▁output▁begin｜>",
    result_close="<｜tool▁output▁end｜>",
    start_tag=CALLS_BEGIN,
    name_end="\n```json\n",
    arguments_end="\n```",
)
DEEPSEEK_V31 = NamedCallSyntax(
    name="deepseek_v31",
    first=CALLS_BEGIN + CALL_BEGIN,
    between=CALL_END + CALL_BEGIN,
    last=CALL_END + CALLS_END,
    result_open="<｜tool▁output▁begin｜>",
    result_close="<｜tool▁output▁end｜>",
    start_tag=CALLS_BEGIN,
    name_end=SEPARATOR,
    arguments_end="",
)

"""Qwen3-Coder's XML-style tool calls: the function and each parameter in tags, a
string's value as raw text, any other value as JSON.

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

This is what Qwen3-Coder's chat template writes for past calls, and what vLLM's
``qwen3_xml`` / ``qwen3_coder`` parsers read. A parameter's value runs from the
line after ``<parameter=NAME>`` to the first ``\\n</parameter>\\n``. A string
value is one lexer terminal from its opening tag to its closing one; it starts
with its own opening tag, so the engine's context-free lexer never takes it
anywhere else. A string that is not plain (pattern, format, a length above
``MAX_COUNTED_LENGTH``) is reported approximated. Any other value is its schema's
JSON grammar (``Grammar.from_json_schema``) between the tags. Parameters come in
their declared order, the required ones always, the others optionally. The
arguments a client gets are the JSON object these values make.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from schema2grammar import Report
from structgen.grammar import Grammar
from structgen.lark_writer import regex_literal
from structgen.tool_calls import Tool, ToolSet

from structgen.server.custom_tools import INPUT
from structgen.server.tool_syntax import ParsedCall, ParsedOutput, ToolSyntax, _ended, add_unenforced, hold_back

OPEN_FUNCTION = "<function="
CLOSE_FUNCTION = "</function>"
CLOSE_PARAMETER = "\n</parameter>\n"
MAX_COUNTED_LENGTH = 256
"""The longest ``maxLength`` of a raw string value counted in the grammar (a lexer
state per character); a longer one is reported approximated."""

_STRING_WORDS = frozenset({"type", "description", "title", "default", "examples", "enum", "const", "minLength", "maxLength",
                           "$comment", "deprecated", "readOnly", "writeOnly"})
_OBJECT_WORDS = frozenset({"type", "properties", "required", "description", "title", "$defs", "definitions", "$schema",
                           "$id", "$comment", "additionalProperties", "default", "examples"})
_FUNCTION = re.compile(r"\s*<function=([A-Za-z0-9_.-]*)>\n")
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>\n")


@dataclass(frozen=True)
class XmlToolSyntax(ToolSyntax):
    """Calls as XML-style tags (``<function=...>``, ``<parameter=...>``) in
    Hermes' ``<tool_call>`` envelope."""

    per_tool: ClassVar[bool] = True
    raw_text: ClassVar[bool] = True
    how_to_call: ClassVar[str] = "write the function's name and each parameter's value (text as it is, anything else as JSON)"
    example_argument: ClassVar[str] = "<parameter-name>"
    spaced_values: ClassVar[bool] = True  # a parameter's JSON as the template's tojson writes it

    def tool_call_grammar(self, tool: Tool, pointer: str, report: Report, options: dict[str, Any],
                          raw: tuple[str, str] | None = None) -> Grammar:
        return call_grammar(tool, pointer, report, options, raw)

    @property
    def call_prefix(self) -> str:
        return OPEN_FUNCTION

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        return self.first + self.between.join(render_call(name, arguments) for name, arguments in calls) + self.last

    def parse(self, text: str, final: bool, text_first: bool = True, tools: ToolSet | None = None) -> ParsedOutput:
        start = text.find(self.tag) if text_first else 0 if text.startswith(self.tag) else -1
        if start < 0:
            return super().parse(text, final, text_first, tools)
        calls: list[ParsedCall] = []
        position = start + len(self.tag)
        while True:
            found = _FUNCTION.match(text, position)
            if found is None:
                calls.append(ParsedCall(None, "", False))
                break
            name = found.group(1)
            call, position = _read_call(text, found.end(), name, tools)
            calls.append(call)
            if not call.complete:
                break
            following = re.compile(r"\s*" + re.escape(self.between.strip()) + r"\s*").match(text, position)
            if following is None:
                return ParsedOutput(text[:start], calls, _ended(text, position, self.between, self.last, final))
            position = following.end()
        return ParsedOutput(text[:start], calls)


def render_call(name: str, arguments: Any) -> str:
    """One call as Qwen3-Coder writes it (its template: a string as it is, any
    other value as JSON)."""
    parts = [f"{OPEN_FUNCTION}{name}>\n"]
    for key, value in (arguments.items() if isinstance(arguments, dict) else ()):
        written = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"<parameter={key}>\n{written}{CLOSE_PARAMETER}")
    parts.append(CLOSE_FUNCTION)
    return "".join(parts)


def _read_call(text: str, position: int, name: str, tools: ToolSet | None) -> tuple[ParsedCall, int]:
    """The call whose parameters start at ``position``: its arguments as JSON text
    (while it is open, only what can no longer change), and where it ended."""
    tool = tools.tools.get(name) if tools is not None else None
    properties = tool.schema.get("properties", {}) if tool is not None and isinstance(tool.schema, dict) else {}
    written: list[str] = []
    while True:
        if text.startswith(CLOSE_FUNCTION, position):
            return ParsedCall(name, "{" + ",".join(written) + "}", True), position + len(CLOSE_FUNCTION)
        found = _PARAMETER.match(text, position)
        if found is None:
            return ParsedCall(name, "{" + ",".join(written), False), position
        key = found.group(1)
        raw = _is_raw_string(properties.get(key)) if tool is not None else None
        end = text.find(CLOSE_PARAMETER, found.end())
        head = json.dumps(key, ensure_ascii=False) + ":"
        if end < 0:
            value = hold_back(text[found.end() :], (CLOSE_PARAMETER,))
            partial = json.dumps(value, ensure_ascii=False)[:-1] if raw else value
            written.append(head + partial)
            return ParsedCall(name, "{" + ",".join(written), False), len(text)
        value = text[found.end() : end]
        written.append(head + _value_json(value, raw))
        position = end + len(CLOSE_PARAMETER)


def _value_json(value: str, raw: bool | None) -> str:
    """A parameter's value as JSON text: a raw string quoted; JSON kept as written;
    for a tool the server does not know (``raw`` None), JSON where it reads as such."""
    if raw:
        return json.dumps(value, ensure_ascii=False)
    if raw is None:
        try:
            json.loads(value)
        except ValueError:
            return json.dumps(value, ensure_ascii=False)
    return value


def _is_raw_string(schema: Any) -> bool:
    """Whether a parameter's value is written as raw text: its schema allows strings only."""
    if not isinstance(schema, dict):
        return False
    declared = schema.get("type")
    if declared == "string" or declared == ["string"]:
        return True
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    return declared is None and isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


def call_grammar(tool: Tool, pointer: str, report: Report, json_options: dict[str, Any],
                 raw: tuple[str, str] | None = None) -> Grammar:
    """The grammar of one call of ``tool``; what it approximates goes into
    ``report`` at ``pointer`` (where the call's arguments are in the request).
    ``raw``: a custom tool's input grammar (``custom_tools``), its ``input``
    parameter's raw text."""
    schema = tool.schema if isinstance(tool.schema, dict) else {}
    for word in sorted(set(schema) - _OBJECT_WORDS):
        report.add(pointer, word, "approximated", "not in the XML call syntax's grammar: checked after generating")
    if schema.get("additionalProperties") not in (None, False):
        report.add(pointer, "additionalProperties", "approximated", "only the declared parameters are written")
    properties = schema.get("properties", {}) if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required", [])) if isinstance(schema.get("required"), list) else set()
    parts = [Grammar.literal(f"{OPEN_FUNCTION}{tool.name}>\n")]
    for key in list(properties) + sorted(required - set(properties)):
        value = properties.get(key, {})
        if raw is not None and key == INPUT:
            part = _raw_input(raw)
        else:
            part = _parameter(key, value, schema, f"{pointer}/properties/{key}", report, json_options)
        parts.append(part if key in required else Grammar.optional(part))
    parts.append(Grammar.literal(CLOSE_FUNCTION))
    return Grammar.sequence(*parts)


def _parameter(key: str, schema: Any, root: dict[str, Any], pointer: str, report: Report, json_options: dict[str, Any]) -> Grammar:
    opening = f"<parameter={key}>\n"
    if "\n" in key or ">" in key:
        raise ValueError(f"{pointer}: a parameter name for the XML call syntax cannot hold a newline or '>'")
    if _is_raw_string(schema):
        return Grammar.from_lark(f"start: VALUE\nVALUE: /{_raw_string(opening, schema, pointer, report)}/\n")
    value_schema = schema if isinstance(schema, (dict, bool)) else {}
    if isinstance(value_schema, dict):  # its references resolve against the tool's definitions
        value_schema = {**{k: root[k] for k in ("$defs", "definitions") if k in root}, **value_schema}
    value = Grammar.from_json_schema(value_schema, **json_options)
    add_unenforced(report, value.report, pointer)
    return Grammar.sequence(Grammar.literal(opening), value, Grammar.literal(CLOSE_PARAMETER))


def _raw_input(raw: tuple[str, str]) -> Grammar:
    """A custom tool's input between its parameter's tags: a regex as one terminal
    (no closing tag inside), a lark grammar composed between the tags."""
    syntax, definition = raw
    opening = f"<parameter={INPUT}>\n"
    if syntax == "regex":
        head, tail = regex_literal(opening), regex_literal(CLOSE_PARAMETER)
        return Grammar.from_regex(f"(?!{head}[\\s\\S]*{tail}[\\s\\S]){head}(?:{definition}){tail}")
    return Grammar.sequence(Grammar.literal(opening), Grammar.from_lark(definition), Grammar.literal(CLOSE_PARAMETER))


def _raw_string(opening: str, schema: dict[str, Any], pointer: str, report: Report) -> str:
    """The regex of a raw string value, tags included: a list of values, or any text
    without the closing tag (its length counted up to ``MAX_COUNTED_LENGTH``)."""
    head, tail = regex_literal(opening), regex_literal(CLOSE_PARAMETER)
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list):
        kept = [v for v in values if isinstance(v, str) and CLOSE_PARAMETER not in v + "\n"]
        if len(kept) < len(values):
            report.add(pointer, "enum", "approximated", "values that are no string, or hold the closing tag, left out", True)
        if not kept:
            raise ValueError(f"{pointer}: no value of this parameter can be written in the XML call syntax")
        return head + "(?:" + "|".join(regex_literal(v) for v in kept) + ")" + tail
    for word in sorted(set(schema) - _STRING_WORDS):
        report.add(pointer, word, "approximated", "a raw string's text is any text in the XML call syntax")
    low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    if high is not None and high > MAX_COUNTED_LENGTH:
        report.add(pointer, "maxLength", "approximated", f"counted up to {MAX_COUNTED_LENGTH} characters only")
        high = None
    if low > MAX_COUNTED_LENGTH:
        report.add(pointer, "minLength", "approximated", f"counted up to {MAX_COUNTED_LENGTH} characters only")
        low = 0
    count = "*" if low == 0 and high is None else f"{{{low},{'' if high is None else high}}}"
    # any text up to the first closing tag: no closing tag before the end
    return f"(?!{head}[\\s\\S]*{tail}[\\s\\S]){head}[\\s\\S]{count}{tail}"


QWEN3_CODER = XmlToolSyntax(
    name="qwen3_coder",
    first="<tool_call>\n",
    between="\n</tool_call>\n<tool_call>\n",
    last="\n</tool_call>",
    result_open="<tool_response>\n",
    result_close="\n</tool_response>",
)

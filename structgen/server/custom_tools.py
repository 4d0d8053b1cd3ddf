"""OpenAI's custom tools: a tool whose input is text, free (``format: text``) or
held to a lark grammar or a regex (``format: grammar``).

The model sees a custom tool as a function with one string parameter, ``input``
(its description says what the input must be), and calls it in its own syntax.

- In Qwen3-Coder's XML calls the input is raw text between the parameter's tags,
  and any format is enforced exactly: a regex as one lexer terminal, tags
  included; a lark grammar composed between the tags (``syntax_xml``).
- In the JSON syntaxes (Hermes, Llama 3, Mistral, DeepSeek) the input is a JSON
  string. A regex is its ``pattern`` (the translator enforces patterns on a
  string's characters, escapes included). A lark grammar is a 400 there:
  constraining a JSON string's characters by a context-free grammar would need
  the grammar respelled over JSON escapes, which the engine's one-byte-lookahead
  lexer cannot follow.

The call comes back as OpenAI's ``{"type": "custom", "custom": {"name", "input"}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from structgen.grammar import Grammar

from structgen.server.errors import bad_request
from structgen.server.protocol import CustomToolParam

INPUT = "input"
"""The one parameter a custom tool's calls carry."""


@dataclass(frozen=True)
class CustomTool:
    """A custom tool as read from a request: ``syntax`` ``lark``, ``regex`` or None (free text)."""

    name: str
    description: str
    syntax: str | None = None
    definition: str = ""

    def as_function(self) -> dict[str, Any]:
        """The function tool the model sees and calls."""
        string: dict[str, Any] = {"type": "string"}
        what = "any text"
        if self.syntax == "regex":
            string["pattern"] = f"^(?:{self.definition})$"
            what = f"text matching the regex {self.definition}"
        elif self.syntax == "lark":
            what = f"text in this lark grammar:\n{self.definition}"
        string["description"] = f"The tool's input: {what}"
        parameters = {"type": "object", "properties": {INPUT: string}, "required": [INPUT], "additionalProperties": False}
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": parameters,
                                                 "strict": True}}

    def raw(self) -> tuple[str, str] | None:
        """What a syntax that writes raw text constrains the input by: (``lark`` or
        ``regex``, the definition), or None (free text)."""
        return None if self.syntax is None else (self.syntax, self.definition)


def read_custom(param: CustomToolParam, where: str) -> CustomTool:
    """A request's custom tool; a 400 naming the format when its grammar cannot be built."""
    definition = param.custom
    form = definition.format
    description = definition.description or ""
    if form is None or form.type == "text":
        return CustomTool(definition.name, description)
    if form.grammar is None:
        raise bad_request(f"{where}.custom.format: a grammar format needs its grammar", f"{where}.custom.format.grammar")
    grammar = form.grammar
    try:
        raw_grammar(grammar.syntax, grammar.definition)
    except (ValueError, RecursionError) as exc:  # GrammarError, RegexError
        raise bad_request(f"{where}.custom.format.grammar.definition: {exc}", f"{where}.custom.format.grammar.definition") from None
    return CustomTool(definition.name, description, grammar.syntax, grammar.definition)


def raw_grammar(syntax: str, definition: str) -> Grammar:
    return Grammar.from_lark(definition) if syntax == "lark" else Grammar.from_regex(definition)


def input_of(arguments: str, complete: bool) -> str:
    """A custom call's input from its arguments' JSON text ``{"input": "..."}``; while
    the call is open, the part of the string that can no longer change."""
    if complete:
        try:
            value = json.loads(arguments)
        except ValueError:
            return ""
        found = value.get(INPUT) if isinstance(value, dict) else None
        return found if isinstance(found, str) else ""
    head = arguments.find('"', arguments.find(":") + 1) if ":" in arguments else -1
    if head < 0:
        return ""
    body = arguments[head + 1 :]
    end = _string_end(body)
    body = body[:end] if end is not None else _whole_escapes(body)
    try:
        text = json.loads('"' + body + '"')
    except ValueError:
        return ""
    return text if isinstance(text, str) else ""


def _string_end(body: str) -> int | None:
    escaped = False
    for index, char in enumerate(body):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return index
    return None


def _whole_escapes(body: str) -> str:
    """``body`` up to its last whole character: less a last escape not yet whole (a
    lone backslash, ``\\u`` and its digits, a high surrogate's escape whose low
    half is still to come)."""
    index = kept = 0
    while index < len(body):
        if body[index] != "\\":
            index += 1
        elif index + 1 >= len(body):
            break
        elif body[index + 1] != "u":
            index += 2
        elif index + 6 > len(body):
            break
        elif 0xD800 <= int(body[index + 2 : index + 6], 16) < 0xDC00:
            if index + 12 > len(body):
                break
            index += 12
        else:
            index += 6
        kept = index
    return body[:kept]

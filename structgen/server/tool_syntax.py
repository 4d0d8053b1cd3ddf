"""A model's tool-call syntax: the envelope around the calls, how past calls and
tool results are written into the prompt, and how generated text is read back.

Every syntax built here writes each call as a JSON object ``{name_key: ...,
arguments_key: {...}}``; the envelope is the text before the first call, between
two calls and after the last. Hermes' ``<tool_call>...</tool_call>`` (Qwen,
Hermes; and the server's own for templates that ignore tools, such as SmolLM2's)
is here; Llama 3's bare JSON (``syntax_llama3.py``) and Mistral's
``[TOOL_CALLS][...]`` (``syntax_mistral.py``) are one small file each, and
``syntax_choice.py`` picks one by chat template.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from schema2grammar import Report

from structgen.grammar import Grammar
from structgen.tool_calls import Tool, ToolSet

ID_CHARACTERS = string.ascii_letters + string.digits


@dataclass
class ParsedCall:
    """One call read from the output: ``name`` None until it is complete;
    ``arguments`` the JSON text so far; ``complete`` once the value closed
    (``json_end``)."""

    name: str | None
    arguments: str
    complete: bool


@dataclass
class ParsedOutput:
    content: str
    calls: list[ParsedCall]
    end: int | None = None  # where the calls' block ends (after ``last``), once it has


@dataclass(frozen=True)
class ToolSyntax:
    """Calls as JSON objects ``{name_key: ..., arguments_key: {...}}`` in an envelope."""

    name: str
    first: str  # before the first call (exactly, by the grammar)
    between: str  # between two calls
    last: str  # after the last call
    result_open: str  # around a tool result, for templates that ignore tools
    result_close: str
    name_key: str = "name"
    arguments_key: str = "arguments"
    start_tag: str | None = None  # the text that starts the calls; None: ``first`` without its spaces
    tag_token: int | None = None  # the tag's one token id, when the tokenizer has it as a special token

    per_tool: ClassVar[bool] = False
    """Whether a call's grammar is built tool by tool (``tool_call_grammar``: the name
    is outside the arguments' JSON) rather than from one JSON Schema of every call
    (``call_schema``)."""
    how_to_call: ClassVar[str] = "return a JSON object with the function name and arguments"
    """How ``system_block`` tells a model to write a call, before its example."""
    example_argument: ClassVar[str] = "<argument>"
    raw_text: ClassVar[bool] = False
    """Whether a custom tool's input is written as raw text (else inside a JSON string)."""
    spaced_values: ClassVar[bool] = False
    """Whether JSON in calls keeps the spaced layout a template's ``tojson`` writes
    (``grammars.CONTENT_OPTIONS``) rather than compact JSON (``SCHEMA_OPTIONS``)."""

    def __post_init__(self) -> None:
        if not self.between.strip() or not self.tag:
            raise ValueError(f"{self.name}: calls need a visible separator and a start tag")
        if self.tag_token is not None and not self.first.startswith(self.tag):
            raise ValueError(f"{self.name}: a tag token must start the calls' envelope")

    def for_tokenizer(self, tokenizer: Any) -> ToolSyntax:
        """This syntax for ``tokenizer``: when its tag is one special token there
        (Mistral's ``[TOOL_CALLS]``), the model writes that token — a grammar cannot
        allow special tokens, so the server lets it through itself (``tag_token``).
        Not when the tag also appears between or after the calls (Hermes' ``between``
        closes one ``<tool_call>`` and opens the next): the grammar would have to
        spell it there as text, which the model writes as the token."""
        if self.tag in self.between + self.last:
            return self
        token_id = special_token_id(tokenizer, self.tag)
        return self if token_id == self.tag_token else replace(self, tag_token=token_id)

    @property
    def written_first(self) -> str:
        """What the calls' grammar writes before the first call: ``first``, less the
        tag when the tag is a special token written outside the grammar."""
        return self.first[len(self.tag) :] if self.tag_token is not None else self.first

    @property
    def tag(self) -> str:
        """The text that starts the calls: in ``auto``, free text may not contain it."""
        return self.start_tag if self.start_tag is not None else self.first.strip()

    @property
    def call_prefix(self) -> str:
        """What every call's compact JSON starts with, up to the name's first character."""
        return "{" + json.dumps(self.name_key) + ':"'

    def new_call_id(self) -> str:
        """An id for a generated call, as OpenAI writes them."""
        return "call_" + "".join(secrets.choice(ID_CHARACTERS) for _ in range(24))

    def call_schema(self, tool: Tool) -> dict[str, Any]:
        """The JSON Schema of one call of ``tool``: its name, then its arguments."""
        return {
            "type": "object",
            "properties": {self.name_key: {"const": tool.name}, self.arguments_key: tool.schema},
            "required": [self.name_key, self.arguments_key],
            "additionalProperties": False,
        }

    def _block_end(self, text: str, end: int, final: bool) -> int | None:
        """Where the block ends after the call object whose arguments end at ``end``."""
        brace = re.compile(r"\s*\}").match(text, end)
        return None if brace is None else _ended(text, brace.end(), self.between, self.last, final)

    def tool_call_grammar(self, tool: Tool, pointer: str, report: Report, options: dict[str, Any],
                          raw: tuple[str, str] | None = None) -> Grammar:
        """One call of ``tool`` (``per_tool`` syntaxes), its arguments translated
        with ``options``; what it leaves approximated goes into ``report`` under
        ``pointer``. ``raw``: a custom tool's input grammar, (``lark`` or ``regex``,
        its text), for ``raw_text`` syntaxes."""
        raise NotImplementedError(f"{self.name} builds its calls from one JSON Schema (call_schema)")

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        """Past calls as the model would have written them."""
        bodies = [json.dumps({self.name_key: name, self.arguments_key: arguments}, ensure_ascii=False) for name, arguments in calls]
        return self.first + self.between.join(bodies) + self.last

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
        example = self.render_calls([("<function-name>", {self.example_argument: "<value>"})])
        return (
            "You may call one or more functions to assist with the user query. "
            f"The available functions are listed within <tools></tools> tags:\n<tools>\n{listed}\n</tools>\n"
            f"For each function call, {self.how_to_call} as follows:\n{example}"
        )

    def parse(self, text: str, final: bool, text_first: bool = True, tools: ToolSet | None = None) -> ParsedOutput:
        """Content and calls in ``text``: calls start at the first tag, or with
        ``text_first`` False only at the very start (a JSON answer may hold the tag
        in a string). While streaming (``final`` False) what may still become the
        tag is held back from the content. ``tools``: the request's, for a syntax
        that needs their schemas to read arguments (``syntax_xml``)."""
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
        between = re.compile(r"\s*\}" + _spaced(self.between))
        position = start + len(self.first.strip())
        while True:
            match = head.match(text, position)
            if match is None:
                calls.append(ParsedCall(None, "", False))
                break
            end = json_end(text, match.end())
            if end is None:
                calls.append(ParsedCall(match.group(1), text[match.end() :], False))
                break
            calls.append(ParsedCall(match.group(1), text[match.end() : end], True))
            following = between.match(text, end)
            if following is None:
                return ParsedOutput(text[:start], calls, self._block_end(text, end, final))
            position = following.end()
        return ParsedOutput(text[:start], calls)


def _ended(text: str, at: int, between: str, last: str, final: bool) -> int | None:
    """Where a calls' block ends when ``last`` is written at ``at`` (not ``between``:
    while the output goes on, a text that may still become ``between`` is not yet an end)."""
    if not text.startswith(last, at) or (not final and between.startswith(text[at:])):
        return None
    return at + len(last)


def add_unenforced(into: Report, report: Report | None, pointer: str) -> None:
    """``report``'s entries that are not enforced, added to ``into`` under ``pointer``
    (a part's schema translated alone, placed where the request has it)."""
    for entry in report.entries if report is not None else ():
        if entry.status != "enforced":
            into.add(pointer + entry.pointer.lstrip("#"), entry.keyword, entry.status, entry.note, entry.narrower)


def special_token_id(tokenizer: Any, text: str) -> int | None:
    """The id of ``text`` when ``tokenizer`` has it as one special token (one that
    ``TokenizerInfo`` gives no bytes), else None."""
    try:
        ids = tokenizer.encode(text, add_special_tokens=False)
    except Exception:  # not a transformers tokenizer
        return None
    if len(ids) != 1:
        return None
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    token = added.get(ids[0])
    special = ids[0] in set(getattr(tokenizer, "all_special_ids", ()) or ())
    if token is not None and getattr(token, "content", None) == text and (special or getattr(token, "special", False)):
        return int(ids[0])
    return None


def _spaced(text: str) -> str:
    """A regex for ``text`` in which every run of whitespace is any whitespace."""
    return r"\s*" + r"\s*".join(re.escape(part) for part in text.split()) + r"\s*"


def json_end(text: str, start: int) -> int | None:
    """The index just after the JSON value starting at ``start`` (after any
    whitespace), or None while it is still open: an object or array to its
    closing bracket, a string to its closing quote (strings and escapes respected
    in both), a number or ``true``/``false``/``null`` to the first character that
    cannot go on with it (at the end of ``text`` it may still go on). Arguments
    are objects (the calls' grammar makes them so); the rest is read all the same,
    never past the value into the envelope."""
    index = start
    while index < len(text) and text[index] in _JSON_SPACE:
        index += 1
    if index == len(text):
        return None
    if text[index] == '"':
        return _string_end(text, index + 1)
    if text[index] not in "{[":
        match = _SCALAR.match(text, index)
        end = match.end() if match is not None else index
        return end if 0 < end - index and end < len(text) else None
    depth = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            after = _string_end(text, index + 1)
            if after is None:
                return None
            index = after
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


_JSON_SPACE = " \t\n\r"
_SCALAR = re.compile(r"[-+.0-9eE]+|[a-z]+")  # a number or a literal, as far as it goes (what it is, JSON decides)


def _string_end(text: str, index: int) -> int | None:
    """The index just after the string whose first character is at ``index``
    (its opening quote just before), or None while it is open."""
    escaped = False
    for position in range(index, len(text)):
        char = text[position]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return position + 1
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
    first="<tool_call>\n",
    between="\n</tool_call>\n<tool_call>\n",
    last="\n</tool_call>",
    result_open="<tool_response>\n",
    result_close="\n</tool_response>",
)

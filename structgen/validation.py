"""``validate_tool_call``: is a model's tool call valid, and if not, what to tell it.

The verdict is JSON Schema's own, computed by ``jsonschema`` on the parsed
arguments: any property order, any spelling of a value (``1.0`` for an integer,
``\\u00e9`` for ``é``), every keyword exactly, ``pattern`` and the time formats
with the meaning the grammar gives them (``json_schema_validator``). That is what the grammar of the
same schema enforces for every keyword its report marks enforced, and what
generation re-checks with ``jsonschema`` for those it marks approximated; so a
call structgen generated always validates, and the streaming validator (which
runs that grammar) never stops a call this function would accept. See
docs/tool_calls.md.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, replace
from typing import Any

# re-exported for callers of the earlier path
from structgen.schema_validator import decimal_multiple, format_checker, json_schema_validator  # noqa: F401
from structgen.tool_calls import MAX_JSON_DEPTH, Call, ToolSet, json_depth, json_type, read_call, value_depth

SHOWN_CHARS = 80
"""Values longer than this are cut in messages (a model needs the gist, not the blob)."""


@dataclass(frozen=True)
class ToolCallError:
    """One problem: where (a JSON pointer into the arguments; "" for the call
    itself), which keyword failed, what was expected and what came, and a
    sentence a model can act on."""

    pointer: str
    keyword: str
    expected: Any
    got: Any
    message: str


@dataclass(frozen=True)
class ValidationResult:
    """Truthy when the call is valid. ``offset``: for arguments that cannot
    become valid, the byte (in their UTF-8 text) at which that became certain."""

    name: str | None
    errors: tuple[ToolCallError, ...] = ()
    arguments: Any = None
    call_id: str | None = None
    offset: int | None = None

    def __bool__(self) -> bool:
        return not self.errors

    @property
    def message(self) -> str:
        """What to send back to the model (empty when the call is valid)."""
        if not self.errors:
            return ""
        target = f"The call to {self.name}" if self.name else "The tool call"
        lines = [f"{target} was rejected:"] + [f"- {error.message}" for error in self.errors]
        if any(error.keyword == "name" for error in self.errors):
            again = "Call one of the available tools instead."
        elif any(error.keyword == "call" for error in self.errors):
            again = "Send the call as a JSON object with the tool's name and its arguments."
        else:
            again = f"Fix the arguments and call {self.name} again."
        return "\n".join(lines + [again])

    def as_dict(self) -> dict[str, Any]:
        return {
            "valid": not self.errors,
            "name": self.name,
            "call_id": self.call_id,
            "offset": self.offset,
            "errors": [error.__dict__ for error in self.errors],
        }

    def __str__(self) -> str:
        return self.message or f"The call to {self.name} is valid."


def validate_tool_call(tools: Any, call: Any) -> ValidationResult:
    """Check one call against the tools it may call (see ``structgen.tool_calls``
    for the shapes both may take). Bad tool definitions raise
    ``ToolDefinitionError``; anything wrong with the call is in the result."""
    toolset = ToolSet.read(tools)
    read = read_call(call)
    if read.problem:
        error = ToolCallError("", "call", "a tool call", None, read.problem)
        return ValidationResult(read.name, (error,), call_id=read.id, offset=read.problem_offset)
    assert read.name is not None  # read_call names a problem otherwise
    tool = toolset.tools.get(read.name)
    if tool is None:
        return ValidationResult(read.name, (unknown_tool(toolset, read.name),), call_id=read.id)
    return check_call(toolset, read)


def unknown_tool(toolset: ToolSet, name: str) -> ToolCallError:
    names = toolset.names()
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f" Did you mean {_or_list([_show(n) for n in close])}?" if close else ""
    return ToolCallError(
        "", "name", names, name, f"There is no tool named {_show(name)}.{hint} Available tools: {', '.join(names)}."
    )


def check_call(toolset: ToolSet, call: Call) -> ValidationResult:
    """The arguments of a call to one of ``toolset``'s tools, parsed (when text) and checked."""
    assert call.name is not None
    tool = toolset.tools[call.name]
    value = call.value
    if call.text is not None:
        parsed = parse_arguments(call.text)
        if isinstance(parsed, ToolCallError):
            offset = parsed.got["byte"] if isinstance(parsed.got, dict) else None
            return ValidationResult(tool.name, (parsed,), call_id=call.id, offset=offset)
        value = parsed
    elif value_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return ValidationResult(tool.name, (_too_deep(),), call_id=call.id)
    if not isinstance(value, dict):
        offset = len(call.text.encode()) - len(call.text.lstrip(" \t\n\r").encode()) if call.text is not None else None
        return ValidationResult(tool.name, (not_an_object(value),), call_id=call.id, offset=offset)
    try:
        errors = tuple(schema_errors(toolset.schema_validator(tool.name), value))
    except RecursionError:  # a recursive schema on a value within the bound, called from deep in a stack
        error = ToolCallError("", "depth", MAX_JSON_DEPTH, None, "The arguments nest too deeply to be checked against the schema.")
        return ValidationResult(tool.name, (error,), call_id=call.id)
    return ValidationResult(tool.name, errors, value, call.id)


def not_an_object(value: Any) -> ToolCallError:
    """A call's arguments are a JSON object (its parameters by name), whatever the
    tool's schema allows: OpenAI's ``arguments`` and Anthropic's ``input`` are."""
    kind = json_type(value)
    shown = "null" if kind == "null" else f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
    return ToolCallError("", "type", "object", kind,
                         f"The arguments must be a JSON object with the parameters as its keys, not {shown}.")


def _too_deep() -> ToolCallError:
    return ToolCallError("", "depth", MAX_JSON_DEPTH, None, f"The arguments nest more than {MAX_JSON_DEPTH} arrays and objects deep.")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def parse_arguments(text: str) -> Any:
    """The arguments' value, or the error saying where the text stops being JSON.
    A key written twice is an error too (JSON parsers disagree on which one wins),
    and so is nesting past ``MAX_JSON_DEPTH`` (checked before parsing, which recurses)."""
    if json_depth(text) > MAX_JSON_DEPTH:
        return _too_deep()
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        byte = len(text[: exc.pos].encode())
        got = {"byte": byte, "line": exc.lineno, "column": exc.colno, "near": text[max(0, exc.pos - 20): exc.pos + 20]}
        where = f"line {exc.lineno} column {exc.colno} (byte {byte})"
        return ToolCallError("", "json", "JSON text", got, f"The arguments are not valid JSON: {exc.msg} at {where}.")
    except _DuplicateKey as exc:
        return ToolCallError(
            "", "json", "each key once", exc.key, f"The key {_show(exc.key)} is written twice in the arguments."
        )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def schema_errors(validator: Any, value: Any) -> list[ToolCallError]:
    """Every way ``value`` breaks the validator's schema, most shallow first."""
    found: list[ToolCallError] = []
    for error in sorted(validator.iter_errors(value), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))):
        for explained in _explain(error):
            explained = replace(explained, message=explained.message[0].upper() + explained.message[1:])
            if all((explained.pointer, explained.message) != (f.pointer, f.message) for f in found):
                found.append(explained)
    return found


def _explain(error: Any) -> list[ToolCallError]:
    """One jsonschema error as the errors a model reads (``required`` and
    ``additionalProperties`` name each property on its own)."""
    pointer = _pointer(error.absolute_path)
    keyword, expected, got = error.validator, error.validator_value, error.instance
    if keyword == "required" and isinstance(got, dict):
        return [
            ToolCallError(f"{pointer}/{pointer_token(name)}", "required", name, None, f"{_where(pointer)}the required argument {_show(name)} is missing.")
            for name in expected if name not in got
        ]
    if keyword == "additionalProperties" and isinstance(got, dict):
        declared = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        return [_unexpected(pointer, name, declared) for name in got if name not in declared and not _matches_any(patterns, name)]
    if keyword == "type":
        types = expected if isinstance(expected, list) else [expected]
        message = f"{_at(pointer)} must be {_or_list([str(t) for t in types])}, not {json_type(got)} {_show(got)}."
        return [ToolCallError(pointer, keyword, expected, got, message)]
    if keyword == "enum":
        message = f"{_at(pointer)} must be one of {', '.join(_show(v) for v in expected)}; got {_show(got)}."
        return [ToolCallError(pointer, keyword, expected, got, message)]
    if keyword in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match

        closest = best_match(error.context)
        message = f"{_at(pointer)} matches none of the allowed forms; closest: {closest.message}."
        return [ToolCallError(pointer, keyword, expected, got, message)]
    return [ToolCallError(pointer, keyword, expected, got, f"{_at(pointer)}: {error.message}.")]


def _unexpected(pointer: str, name: str, declared: list[str]) -> ToolCallError:
    close = difflib.get_close_matches(name, declared, n=1, cutoff=0.6)
    hint = f" Did you mean {_show(close[0])}?" if close else ""
    allowed = f" Allowed: {', '.join(declared)}." if declared else " No arguments are allowed there."
    return ToolCallError(
        f"{pointer}/{pointer_token(name)}", "additionalProperties", declared, name,
        f"{_where(pointer)}{_show(name)} is not an argument of this tool.{hint}{allowed}",
    )


def _matches_any(patterns: list[str], name: str) -> bool:
    return any(re.search(pattern, name) for pattern in patterns)


def _pointer(path: Any) -> str:
    return "".join(f"/{pointer_token(str(part))}" for part in path)


def pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _at(pointer: str) -> str:
    """How a message names a place: the argument's name when it is one."""
    return f"argument {pointer}" if pointer else "the arguments"


def _where(pointer: str) -> str:
    return f"in {pointer}: " if pointer else ""


def _or_list(shown: list[str]) -> str:
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."

"""Tools and tool calls in the shapes agents meet them, read into one form.

Tools: OpenAI tool definitions (Chat Completions ``{"type": "function",
"function": {...}}``, the Responses API's flat form, bare function objects as
BFCL and the legacy ``functions`` list write them), Anthropic tool definitions
(``input_schema``), Pydantic model classes and plain Python functions (their
signature becomes the schema). Calls: OpenAI ``tool_call`` objects or dicts
(the SDK's own objects are read by attribute, so ``openai`` is never imported),
Anthropic ``tool_use`` blocks, and raw JSON text as Hermes- and Llama-style
models write it (``{"name": ..., "arguments": {...}}``, ``"parameters"`` too,
optionally inside ``<tool_call>`` tags).

Nesting is bounded (``MAX_JSON_DEPTH`` arrays and objects inside one another,
in a call's arguments and in a tool's schema): Python's ``json`` and
``jsonschema`` recurse once per level, so a deeper value is a clear error (a
problem in the result, a ``ToolDefinitionError``), never a ``RecursionError``.

Schemas are normalised on the way in: BFCL and some hand-written tools use
type names that are not JSON Schema (``dict``, ``float``, ``tuple``, ``any``,
Java's ``String``, ``long``, ``HashMap``...); they are mapped to the JSON
Schema type they mean, and a type name nobody means is a clear error.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Callable

TYPE_NAMES: dict[str, str | None] = {
    **{name: name for name in ("string", "integer", "number", "boolean", "array", "object", "null")},
    "str": "string", "char": "string", "int": "integer", "long": "integer", "float": "number",
    "double": "number", "bool": "boolean", "dict": "object", "hashmap": "object", "map": "object",
    "list": "array", "tuple": "array", "arraylist": "array", "any": None, "": None,
}
"""Type names (compared lowercased) -> the JSON Schema type they mean (None: any value)."""

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = (
    "items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems",
)


MAX_JSON_DEPTH = 64
"""Arrays and objects nested in one another that a call's arguments or a tool's
schema may hold. Parsing, checking a schema and validating against it recurse
once per level, up to eight stack frames each (``jsonschema`` checking a chain of
``items``: 130 levels overflowed Python's stack of about 1,000 frames), so 64
leave room for the caller's own; real arguments and schemas are a few levels deep."""


class ToolDefinitionError(ValueError):
    """A tool that cannot be read: unknown shape, bad schema, unknown type name."""


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)', re.DOTALL)  # unterminated at the end too
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """How deeply ``text``'s arrays and objects nest (``1`` for ``[1]`` or ``{}``, ``0``
    for a scalar), read without parsing (so without recursion): brackets outside
    strings. For text that is not JSON, a count a parser would never pass."""
    brackets = _JSON_BRACKET.findall(_JSON_STRING.sub("", text))
    return max(accumulate(1 if bracket in "[{" else -1 for bracket in brackets), default=0)


def value_depth(value: Any, limit: int | None = None) -> int:
    """How deeply a parsed JSON value's lists and dicts nest, without recursion;
    with ``limit``, counting stops at the first place past it."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            current = list(current.values())
        elif isinstance(current, tuple):
            current = list(current)
        if isinstance(current, list):
            deepest = max(deepest, depth)
            if limit is not None and deepest > limit:
                return deepest
            stack.extend((item, depth + 1) for item in current)
    return deepest


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what it is for, and the JSON Schema of its arguments."""

    name: str
    description: str
    schema: dict[str, Any]
    strict: bool = False


@dataclass(frozen=True)
class Call:
    """One call as read: the tool's name, the arguments' text where the call
    carried text (else None), and the arguments' value where they were already
    parsed (Anthropic's ``input``, a raw call's ``arguments`` object)."""

    name: str | None
    text: str | None = None
    value: Any = None
    id: str | None = None
    problem: str = ""  # why the call itself could not be read ("" when it could)
    problem_offset: int | None = None  # byte offset of a JSON error in a raw call


@dataclass
class ToolSet:
    """Tools by name, read once; pass one to ``validate_tool_call`` to skip re-reading."""

    tools: dict[str, Tool] = field(default_factory=dict)
    _validators: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def read(cls, tools: Any) -> ToolSet:
        if isinstance(tools, ToolSet):
            return tools
        items = list(tools) if isinstance(tools, (list, tuple)) else [tools]
        found: dict[str, Tool] = {}
        for index, item in enumerate(items):
            try:
                tool = read_tool(item)
            except ToolDefinitionError as exc:
                raise ToolDefinitionError(f"tool {index}: {exc}") from None
            if tool.name in found:
                raise ToolDefinitionError(f"tool {index}: a second tool named {tool.name!r}")
            found[tool.name] = tool
        return cls(found)

    def names(self) -> list[str]:
        return list(self.tools)

    def schema_validator(self, name: str) -> Any:
        """The ``jsonschema`` validator of tool ``name``'s arguments, with the
        grammar's meaning (``schema_validator.json_schema_validator``), built once."""
        found = self._validators.get(name)
        if found is None:
            from structgen.schema_validator import json_schema_validator

            found = self._validators[name] = json_schema_validator(self.tools[name].schema)
        return found


def read_tool(item: Any) -> Tool:
    """One tool from any of the shapes the module docstring lists."""
    if isinstance(item, Tool):
        return item
    if isinstance(item, type) and hasattr(item, "model_json_schema"):
        schema = item.model_json_schema()
        return Tool(item.__name__, str(schema.pop("description", "") or ""), _normalise(schema, "#"))
    if callable(item) and not isinstance(item, dict):
        return _tool_from_function(item)
    if not isinstance(item, dict):
        raise ToolDefinitionError(f"expected a tool definition, a Pydantic model or a function, not {type(item).__name__}")
    function = item.get("function")
    body: dict[str, Any] = function if isinstance(function, dict) else item
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError("a tool definition needs a non-empty string 'name' (or 'function': {'name': ...})")
    schema = body.get("parameters", body.get("input_schema", {"type": "object", "properties": {}}))
    if not isinstance(schema, (dict, bool)):
        raise ToolDefinitionError(f"{name}: 'parameters' must be a JSON Schema object, not {type(schema).__name__}")
    if value_depth(schema, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ToolDefinitionError(f"{name}: its parameters schema nests more than {MAX_JSON_DEPTH} arrays and objects deep")
    normalised = _normalise(schema, "#") if isinstance(schema, dict) else {} if schema else {"not": {}}
    _check_schema(name, normalised)
    return Tool(name, str(body.get("description") or ""), normalised, bool(body.get("strict", False)))


def _tool_from_function(function: Callable[..., Any]) -> Tool:
    """A tool from a function's signature: each parameter a property, required
    when it has no default; types from its hints (Pydantic builds the schema)."""
    from pydantic import ConfigDict, create_model

    name = getattr(function, "__name__", "")
    if not name or name == "<lambda>":
        raise ToolDefinitionError("a function tool needs a name (a def, not a lambda)")
    try:
        hints = typing.get_type_hints(function)
        signature = inspect.signature(function)
    except (NameError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"{name}: cannot read its signature: {exc}") from None
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(f"{name}: *{parameter.name} cannot be described by a JSON Schema")
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (hints.get(parameter.name, Any), default)
    try:
        model = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
        schema = model.model_json_schema()
    except Exception as exc:  # pydantic raises several kinds for types it cannot describe
        raise ToolDefinitionError(f"{name}: its parameters have no JSON Schema: {exc}") from None
    schema.pop("title", None)
    return Tool(name, inspect.getdoc(function) or "", _normalise(schema, "#"))


def _normalise(schema: Any, pointer: str) -> Any:
    """``schema`` with non-standard type names mapped (a new object; the caller's
    is never changed)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "type" in out:
        mapped = [_type_name(t, pointer) for t in (out["type"] if isinstance(out["type"], list) else [out["type"]])]
        if None in mapped:
            del out["type"]
        elif isinstance(out["type"], list):
            out["type"] = list(dict.fromkeys(mapped))
        else:
            out["type"] = mapped[0]
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: _normalise(v, f"{pointer}/{key}/{k}") for k, v in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_normalise(v, f"{pointer}/{key}/{i}") for i, v in enumerate(out[key])]
    for key in _SCHEMA_VALUES:
        if isinstance(out.get(key), list):  # draft 4-7 tuple "items"
            out[key] = [_normalise(v, f"{pointer}/{key}/{i}") for i, v in enumerate(out[key])]
        elif key in out:
            out[key] = _normalise(out[key], f"{pointer}/{key}")
    return out


def _type_name(name: Any, pointer: str) -> str | None:
    if not isinstance(name, str) or name.lower() not in TYPE_NAMES:
        known = ", ".join(sorted(k for k in TYPE_NAMES if k))
        raise ToolDefinitionError(f"{pointer}/type: unknown type {name!r} (known: {known})")
    return TYPE_NAMES[name.lower()]


def _check_schema(name: str, schema: dict[str, Any]) -> None:
    from jsonschema import SchemaError, validators

    from structgen.schema_validator import format_checker

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema, format_checker=format_checker(cls))
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise ToolDefinitionError(f"{name}: not a valid JSON Schema at #/{where}: {exc.message}") from None
    except RecursionError:  # within MAX_JSON_DEPTH, but called from deep in a stack
        raise ToolDefinitionError(f"{name}: its parameters schema nests too deeply to be checked") from None


def read_call(call: Any) -> Call:
    """One call from any of the shapes the module docstring lists."""
    if isinstance(call, bytes):
        call = call.decode("utf-8", errors="replace")
    if isinstance(call, str):
        return _read_raw(call)
    get = _getter(call)
    call_id = get("id") or get("call_id")
    function = get("function")
    if function is not None:  # OpenAI Chat Completions tool_call (dict or SDK object)
        fget = _getter(function)
        return _with_arguments(fget("name"), fget("arguments"), call_id, "function.arguments")
    if get("type") == "tool_use" or get("input") is not None:  # Anthropic tool_use block
        return _with_arguments(get("name"), get("input"), call_id, "input")
    if get("name") is not None:  # Responses API function_call, Hermes / Llama call objects
        arguments = get("arguments")
        return _with_arguments(get("name"), get("parameters") if arguments is None else arguments, call_id, "arguments")
    return Call(None, id=call_id, problem=(
        "not a tool call: expected an OpenAI tool_call ({'function': {'name', 'arguments'}}), an Anthropic "
        "tool_use block ({'type': 'tool_use', 'name', 'input'}) or {'name', 'arguments'}"
    ))


def _read_raw(text: str) -> Call:
    """A call written as JSON text by the model itself."""
    body = text.strip()
    if body.startswith("<tool_call>") and body.endswith("</tool_call>"):
        body = body[len("<tool_call>"):-len("</tool_call>")]
    if json_depth(body) > MAX_JSON_DEPTH:
        return Call(None, problem=f"the call nests more than {MAX_JSON_DEPTH} arrays and objects deep")
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        offset = len(text.encode()) - len(body.encode()) + len(body[: exc.pos].encode())
        return Call(None, problem=f"the call is not valid JSON: {exc.msg} (byte {offset})", problem_offset=offset)
    if not isinstance(value, dict):
        return Call(None, problem=f"the call must be a JSON object with 'name' and 'arguments', not {json_type(value)}")
    return read_call(value)


def _with_arguments(name: Any, arguments: Any, call_id: Any, where: str) -> Call:
    call_id = call_id if isinstance(call_id, str) else None
    if not isinstance(name, str):
        return Call(None, id=call_id, problem="the call has no function name")
    if arguments is None:
        return Call(name, id=call_id, problem=f"the call has no {where}")
    if isinstance(arguments, (bytes, str)):
        text = arguments.decode("utf-8", errors="replace") if isinstance(arguments, bytes) else arguments
        return Call(name, text=text, id=call_id)
    return Call(name, value=_plain(arguments), id=call_id)


def _getter(obj: Any) -> Callable[[str], Any]:
    """Field access for dicts and for objects with attributes (the openai and
    anthropic SDKs' pydantic models), without importing either SDK."""
    if isinstance(obj, dict):
        return obj.get
    return lambda name: getattr(obj, name, None)


def _plain(value: Any) -> Any:
    """SDK objects inside arguments as plain JSON values."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return value


def json_type(value: Any) -> str:
    """The JSON Schema type name of a parsed JSON value ("integer" for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    for kind, name in ((float, "number"), (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__

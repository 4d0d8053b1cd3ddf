"""What the translator (``translate`` and its keyword modules), ``applicators``
and ``complement`` share: the errors, the keyword tables, JSON types and
equality, counts, JSON pointers, read one way everywhere (a schema both
translated and complemented means one thing)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

MAX_ITEMS_CHAIN = 1024
"""``minItems``/``maxItems`` above this are enforced only up to it (reported)."""

ANNOTATIONS = frozenset(
    "$schema $id $comment $anchor $dynamicAnchor $vocabulary title description default examples "
    "deprecated readOnly writeOnly contentEncoding contentMediaType contentSchema discriminator "
    "x-guidance".split()
)
DEFINITIONS = ("$defs", "definitions")

SOME = "structgen:someProperty"
"""Not a JSON Schema keyword, and reserved: what the complement of
``patternProperties`` says of an object, written by ``complement`` for the
translator. Its value lists ``[pattern, schema]`` pairs; for each, some property
whose name the pattern finds holds a value of the schema (the ``not`` of
``{"patternProperties": {pattern: {"not": schema}}}``)."""

LATER = "structgen:declaredLater"
"""Not a JSON Schema keyword, and reserved: the property names an ``allOf`` merge
took from parts written after the part whose ``anyOf``/``oneOf`` it keeps aside.
Declared order is text order, so a branch's own names go before these; the merge
of a branch into the rest (``alternatives``) puts them last, then drops the key."""

CONDITIONAL = ("if", "then", "else")
"""The keywords of a conditional (draft 7 on; before, annotations)."""

TYPE_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties", "propertyNames",
               "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies",
               "unevaluatedProperties", SOME),
    "array": ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains",
              "minContains", "maxContains", "unevaluatedItems"),
    "string": ("minLength", "maxLength", "pattern"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}
"""The keywords that constrain one type only."""

VALIDATION_KEYWORDS = frozenset({k for keys in TYPE_KEYWORDS.values() for k in keys}) | {
    "allOf", "anyOf", "oneOf", "if", "then", "else", "$ref", "dependentSchemas", "dependencies", "format", "nullable",
    "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef", "x-url"}
"""Keywords that may refuse a listed value (beside ``enum``/``const`` they are judged
value by value); any other is an annotation there."""


class SchemaError(ValueError):
    """A schema that cannot be translated (or, in strict mode, not exactly), naming
    the keyword and its JSON pointer."""


class NoValue(SchemaError):
    """A schema place that no value satisfies: an optional property, an ``anyOf``
    branch or a type of a list drops out; elsewhere the whole schema fails."""


_SHAPES = {"properties": dict, "patternProperties": dict, "required": list, "prefixItems": list}
"""Keywords whose value must be a JSON object (dict) or array (list)."""


RESERVED = (SOME, LATER)
"""The keys the translator writes into the schemas it derives; a user's schema may
not hold them (they would change what it means: JSON Schema ignores unknown keywords)."""


def check_reserved(schema: Any) -> None:
    """A ``SchemaError`` naming the place where ``schema`` holds a ``RESERVED`` key
    (a keyword or a property name alike; not inside a value: ``const``, ``enum``,
    ``default``, ``examples``), found by one walk over its JSON (each object once,
    whatever refers to it twice)."""
    pending: list[tuple[Any, str]] = [(schema, "")]
    seen: set[int] = set()
    while pending:
        value, pointer = pending.pop()
        if not isinstance(value, (dict, list)) or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, list):
            pending.extend((item, f"{pointer}/{index}") for index, item in enumerate(value))
            continue
        for key, item in value.items():
            token = pointer_token(str(key))
            if key in RESERVED:
                raise SchemaError(f"{pointer}/{token}: {key!r} is a name structgen reserves for its own use; "
                                  "a schema may not hold it")
            if key not in _DATA:
                pending.append((item, f"{pointer}/{token}"))


_DATA = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, never read as schemas."""


def check_shapes(schema: dict[str, Any], pointer: str) -> None:
    """A ``SchemaError`` naming the keyword whose value has the wrong shape (before
    a merge or a split reads it)."""
    for key, shape in _SHAPES.items():
        if key in schema and not isinstance(schema[key], shape):
            what = "an object" if shape is dict else "a list"
            raise SchemaError(f"{pointer or '#'}: {key} must be {what}, not {schema[key]!r}")
    for key in ("properties", "patternProperties"):
        for name, sub in schema.get(key, {}).items():
            if not isinstance(sub, (bool, dict)):
                token = name.replace("~", "~0").replace("/", "~1")
                raise SchemaError(f"{pointer}/{key}/{token}: a schema must be an object or a boolean, not {sub!r}")


def count_of(value: Any) -> int | None:
    """A count keyword's value (``2.0`` is 2; any size of int); None when it is
    not a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return None
    return value if isinstance(value, int) else int(value) if value.is_integer() else None


def written_before(schema: dict[str, Any], first: str, second: str) -> bool:
    """Whether the schema holds both keywords, ``first`` written before ``second``
    (a dict keeps the JSON text's order). The declared property order follows the
    text: a combinator written before ``properties`` declares its branches' first."""
    keys = list(schema)
    return first in schema and second in schema and keys.index(first) < keys.index(second)


def disjoint_types(options: list[Any]) -> bool:
    """Whether the branches' declared types exclude each other (then oneOf = anyOf)."""
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, dict) or "type" not in option:
            return False
        declared = option["type"] if isinstance(option["type"], list) else [option["type"]]
        if not all(isinstance(t, str) for t in declared):
            return False  # a malformed type: the branch's own translation says so
        kinds = {"number" if t == "integer" else t for t in declared}
        if kinds & seen:
            return False
        seen |= kinds
    return True


def either(first: Any, second: Any) -> Any:
    """The schema ``anyOf: [first, second]``, its nested ``anyOf``s flattened and
    repeated members dropped: ``not`` that a recursion through conditionals
    combines again at each level stays the same schema (and meets its own rule)."""
    members: list[Any] = []
    seen: set[str] = set()
    for schema in (first, second):
        flat = schema["anyOf"] if isinstance(schema, dict) and set(schema) == {"anyOf"} and isinstance(schema["anyOf"], list) else [schema]
        for member in flat:
            key = json.dumps(member, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                members.append(member)
    return members[0] if len(members) == 1 else {"anyOf": members}


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (``integer`` for a Python int)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def has_type(value: Any, allowed: list[Any], float_integers: bool) -> bool:
    """Whether ``value`` has one of the types (``1.0`` is an integer where
    ``float_integers``: from draft 6 on)."""
    kind = json_type(value)
    if kind == "number" and float_integers and isinstance(value, float) and value.is_integer():
        kind = "integer"
    return kind in allowed or (kind == "integer" and "number" in allowed)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``true != 1``, containers item by item."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


NOWHERE = object()
"""What ``follow_pointer`` returns for a pointer that names nothing."""


def pointer_token(key: str | int) -> str:
    """``key`` as one token of a JSON pointer (``~`` and ``/`` escaped)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def follow_pointer(root: Any, target: str) -> Any:
    """The value a ``#/...`` JSON pointer (percent-encoded, ``~0``/``~1`` escaped)
    names inside ``root``; ``NOWHERE`` when it names nothing."""
    current = root
    for raw in target[1:].split("/")[1:] if target != "#" else []:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return NOWHERE
    return current


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SCHEMA_VALUES = ("items", "additionalItems", "contains", "not", "if", "then", "else", "additionalProperties",
                  "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "items")


def without_keyword(schema: Any, keyword: str, depth: int = 0) -> Any:
    """``schema`` with ``keyword`` taken out of every subschema (its places as a
    keyword only: a property of that name stays), for a keyword the declared draft
    does not have (``prefixItems`` before 2020-12: an unknown keyword there, which
    constrains nothing). Deeper than the translator goes, left as it is."""
    if not isinstance(schema, dict) or depth > 256:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == keyword:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {name: without_keyword(sub, keyword, depth + 1) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [without_keyword(sub, keyword, depth + 1) for sub in value]
        elif key in _SCHEMA_VALUES:
            value = without_keyword(value, keyword, depth + 1)
        out[key] = value
    return out

"""Necessary conditions a JSON Schema puts on a value still being written.

The streaming validator follows a call byte by byte with the grammar, which
checks the declared property order; when a call leaves that order it goes on
with ``json_scan``, which asks these questions of the schema. Each answer is a
*necessary* condition for validity, never a sufficient one: "no" means no
completion of the text can be valid (so stopping is safe), "yes" means perhaps
(``jsonschema`` decides at the end). Where a keyword is not understood here the
answer is "yes". Only references inside the document (``#/...``) are followed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schema2grammar.shared import NOWHERE, follow_pointer
from structgen.tool_calls import json_type

MAX_DEPTH = 40
"""Nested references and combinators followed before answering "perhaps"."""

KINDS = ("string", "number", "boolean", "null", "object", "array")
"""What the first byte of a value tells: ``number`` covers integers."""

_DESCRIBED = (
    "enum", "const", "pattern", "format", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "required", "type",
)


class Places:
    """Questions about the values at places of one schema (``root`` resolves ``$ref``)."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def resolve(self, schema: dict[str, Any]) -> Any:
        """The target of ``schema["$ref"]``, or True (anything) where it cannot be followed."""
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            return True
        target = follow_pointer(self.root, ref)
        return True if target is NOWHERE else target

    def _all(self, schema: dict[str, Any], depth: int, own: bool, test: Any) -> bool:
        """``own`` and ``test`` on the referenced schema, on every ``allOf`` branch
        and on some ``anyOf``/``oneOf`` branch."""
        if not own:
            return False
        if "$ref" in schema and not test(self.resolve(schema), depth + 1):
            return False
        if isinstance(schema.get("allOf"), list) and not all(test(b, depth + 1) for b in schema["allOf"]):
            return False
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and not any(test(b, depth + 1) for b in schema[key]):
                return False
        return True

    def kind_ok(self, schema: Any, kind: str, depth: int = 0) -> bool:
        """Whether a value of ``kind`` (one of ``KINDS``) can be valid here."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return schema is not False
        own = True
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            own = kind in types or (kind == "number" and "integer" in types)
        for constants in _constants(schema):
            own = own and any(_kind(value) == kind for value in constants)
        return self._all(schema, depth, own, lambda s, d: self.kind_ok(s, kind, d))

    def scalar_ok(self, schema: Any, value: Any, depth: int = 0) -> bool:
        """Whether a finished string, number, boolean or null can be valid here
        (its type, ``enum`` and ``const``)."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return schema is not False
        own = True
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            own = json_type(value) in types or (json_type(value) == "integer" and "number" in types)
        for constants in _constants(schema):
            own = own and any(_same(value, c) for c in constants)
        return self._all(schema, depth, own, lambda s, d: self.scalar_ok(s, value, d))

    def string_prefix_ok(self, schema: Any, written: bytes, depth: int = 0) -> bool:
        """Whether a string whose text so far is ``written`` (no escapes in it) can
        still be valid here: with ``enum``/``const``, it must begin one of them."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return schema is not False
        own = True
        for constants in _constants(schema):
            own = own and any(isinstance(c, str) and spelled(c).startswith(written) for c in constants)
        return self._all(schema, depth, own, lambda s, d: self.string_prefix_ok(s, written, d))

    def key_ok(self, schema: Any, written: bytes, complete: bool, taken: set[str], depth: int = 0) -> bool:
        """Whether an object key whose text so far is ``written`` (no escapes in it;
        the whole key when ``complete``) can still name an allowed property that is
        not among ``taken``. An empty incomplete key asks whether any more can come."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return True
        own = True
        if schema.get("additionalProperties") is False and not schema.get("patternProperties"):
            names = [n for n in schema.get("properties", {}) if n not in taken]
            own = any(spelled(n) == written if complete else spelled(n).startswith(written) for n in names)
        return self._all(schema, depth, own, lambda s, d: self.key_ok(s, written, complete, taken, d))

    def missing(self, schema: Any, present: set[str], depth: int = 0) -> list[str]:
        """Required properties none of whose completions can supply: ``[]`` when the
        object may close now."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return []
        required = schema.get("required", [])
        gone = [n for n in required if isinstance(n, str) and n not in present] if isinstance(required, list) else []
        if "$ref" in schema:
            gone += self.missing(self.resolve(schema), present, depth + 1)
        for branch in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
            gone += self.missing(branch, present, depth + 1)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                options = [self.missing(b, present, depth + 1) for b in branches]
                if all(options):
                    gone += options[0]
        return list(dict.fromkeys(gone))

    def child(self, schema: Any, key: str, depth: int = 0) -> Any:
        """The conditions on the value of property ``key`` (a schema)."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return True
        parts: list[Any] = []
        properties = schema.get("properties", {})
        patterns = [s for p, s in schema.get("patternProperties", {}).items() if _search(p, key)]
        if isinstance(properties, dict) and key in properties:
            parts.append(properties[key])
        elif patterns:
            parts.extend(patterns)
        elif "additionalProperties" in schema:
            parts.append(schema["additionalProperties"])
        return self._combine(schema, parts, depth, lambda s, d: self.child(s, key, d))

    def item(self, schema: Any, index: int, depth: int = 0) -> Any:
        """The conditions on array item ``index`` (a schema)."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return True
        parts: list[Any] = []
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(prefix, list) and index < len(prefix):
            parts.append(prefix[index])
        elif isinstance(items, list):  # drafts 4-7: a tuple
            parts.append(items[index] if index < len(items) else schema.get("additionalItems", True))
        elif items is not None:
            parts.append(items)
        return self._combine(schema, parts, depth, lambda s, d: self.item(s, index, d))

    def _combine(self, schema: dict[str, Any], parts: list[Any], depth: int, step: Any) -> Any:
        """``parts`` and the step taken through references and combinators, as one schema."""
        if "$ref" in schema:
            parts.append(step(self.resolve(schema), depth + 1))
        if isinstance(schema.get("allOf"), list):
            parts.extend(step(b, depth + 1) for b in schema["allOf"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                parts.append({"anyOf": [step(b, depth + 1) for b in schema[key]]})
        parts = [p for p in parts if p is not True and p != {}]
        return {"allOf": parts} if parts else True

    def spelling_varies(self, schema: Any, depth: int = 0) -> bool:
        """Whether an ``enum``/``const`` here holds a number, array or object: values
        the grammar takes only as ``json.dumps`` spells them."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return False
        if any(not isinstance(c, (str, bool)) and c is not None for cs in _constants(schema) for c in cs):
            return True
        branches = [self.resolve(schema)] if "$ref" in schema else []
        for key in ("allOf", "anyOf", "oneOf"):
            branches += schema.get(key, []) if isinstance(schema.get(key), list) else []
        return any(self.spelling_varies(b, depth + 1) for b in branches)

    def has_alternatives(self, schema: Any, depth: int = 0) -> bool:
        """Whether ``anyOf``/``oneOf`` shape the values here (along references and
        ``allOf``): the grammar may then be following a branch only because of the
        order the keys came in."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return False
        if isinstance(schema.get("anyOf"), list) or isinstance(schema.get("oneOf"), list):
            return True
        branches = [self.resolve(schema)] if "$ref" in schema else []
        branches += schema["allOf"] if isinstance(schema.get("allOf"), list) else []
        return any(self.has_alternatives(b, depth + 1) for b in branches)

    def constraints(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        """The keywords that can explain a refusal here, with their values (the
        first schema along references and ``allOf`` that has any)."""
        if isinstance(schema, dict) and depth <= MAX_DEPTH:
            found = {keyword: schema[keyword] for keyword in _DESCRIBED if keyword in schema}
            if len(found) > 1:
                found.pop("type", None)
            if found:
                return found
            branches = [self.resolve(schema)] if "$ref" in schema else []
            for branch in branches + (schema["allOf"] if isinstance(schema.get("allOf"), list) else []):
                found = self.constraints(branch, depth + 1)
                if found:
                    return found
        return {}

    def names(self, schema: Any, depth: int = 0) -> list[str]:
        """The property names declared here, along references and combinators (for messages)."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return []
        found = list(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else []
        branches = [self.resolve(schema)] if "$ref" in schema else []
        for key in ("allOf", "anyOf", "oneOf"):
            branches += schema[key] if isinstance(schema.get(key), list) else []
        for branch in branches:
            found += self.names(branch, depth + 1)
        return list(dict.fromkeys(found))


def _constants(schema: dict[str, Any]) -> list[list[Any]]:
    found = []
    if isinstance(schema.get("enum"), list):
        found.append(schema["enum"])
    if "const" in schema:
        found.append([schema["const"]])
    return found


def _kind(value: Any) -> str:
    kind = json_type(value)
    return "number" if kind == "integer" else kind


def _same(value: Any, constant: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    return _kind(value) == _kind(constant) and value == constant


def spelled(text: str) -> bytes:
    """A string's bytes between the quotes, as ``json.dumps`` writes them (a lone
    surrogate, which JSON can escape, as Python's surrogatepass encodes it)."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode(errors="surrogatepass")


def _search(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return True  # a pattern Python cannot read: perhaps

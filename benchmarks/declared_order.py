"""An instance rewritten with its keys in the order its schema declares them.

MaskBench's README says its instances follow the declared property order, which
structgen enforces by default; some do not. Rewriting a refused valid instance
in declared order (the same JSON value: a JSON object's keys have no order) and
finding it accepted shows that order was all the grammar refused.
"""

from __future__ import annotations

import re
from typing import Any

from schema2grammar.translate import NOWHERE, follow_pointer

MAX_DEPTH = 64
"""References followed in a row, and places nested (a recursive schema ends)."""


def rewritten(root: Any, data: Any) -> Any:
    """``data`` with every object's keys in the order ``root`` declares them there:
    the schema's own ``properties``, then those of its ``allOf``/``anyOf``/``oneOf``
    branches and ``$ref`` targets, then undeclared keys as they came; a key's value
    follows its property, its first matching ``patternProperties`` or
    ``additionalProperties``."""
    return _rewrite(root, root, data, 0)


def _rewrite(root: Any, schema: Any, data: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return data
    places = _places(root, schema, 0)
    if isinstance(data, dict):
        order: list[str] = []
        for place in places:
            order += [name for name in place.get("properties", {}) if name not in order]
        keys = [name for name in order if name in data] + [name for name in data if name not in order]
        return {name: _rewrite(root, _property_schema(places, name), data[name], depth + 1) for name in keys}
    if isinstance(data, list):
        return [_rewrite(root, _item_schema(places, index), item, depth + 1) for index, item in enumerate(data)]
    return data


def _places(root: Any, schema: Any, hops: int) -> list[dict[str, Any]]:
    """The schema objects that apply at one place: itself, its branches and the
    targets of its local references, in that order."""
    if not isinstance(schema, dict) or hops > MAX_DEPTH:
        return []
    found = [schema]
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        target = follow_pointer(root, reference)
        found += _places(root, None if target is NOWHERE else target, hops + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key, []) if isinstance(schema.get(key), list) else []:
            found += _places(root, branch, hops + 1)
    return found


def _property_schema(places: list[dict[str, Any]], name: str) -> Any:
    for place in places:
        properties = place.get("properties")
        if isinstance(properties, dict) and name in properties:
            return properties[name]
    for place in places:
        patterns = place.get("patternProperties")
        for pattern, schema in patterns.items() if isinstance(patterns, dict) else ():
            try:
                if re.search(pattern, name):  # Python's regexes stand in for ECMA's: only an order is at stake
                    return schema
            except re.error:
                continue
    for place in places:
        if isinstance(place.get("additionalProperties"), dict):
            return place["additionalProperties"]
    return None


def _item_schema(places: list[dict[str, Any]], index: int) -> Any:
    for place in places:
        for key in ("prefixItems", "items"):
            items = place.get(key)
            if isinstance(items, list) and index < len(items):
                return items[index]
        if isinstance(place.get("items"), dict):
            return place["items"]
    return None

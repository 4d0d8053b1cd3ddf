"""An instance rewritten with its keys in the order its schema declares them.

MaskBench's README says its instances follow the declared property order, which
structgen enforces by default; some do not. Rewriting a refused valid instance
in declared order (the same JSON value: a JSON object's keys have no order) and
finding it accepted shows that order was all the grammar refused.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator, validators
from schema2grammar.translate import NOWHERE, follow_pointer

MAX_DEPTH = 64
"""References followed in a row, and places nested (a recursive schema ends)."""


def rewritten(root: Any, data: Any) -> Any:
    """``data`` with every object's keys in the order ``root`` declares them there, as
    the grammar reads it: the schema's text order through ``$ref`` and ``allOf``, and
    through the one ``anyOf``/``oneOf`` branch that declares most of the object's keys;
    a combinator written before ``properties`` puts its branches' new names first;
    after those, each ``if``'s names, then those of the ``then`` or ``else`` it picks.
    Undeclared keys follow as they came. A key's value follows its property, its
    first matching ``patternProperties`` or ``additionalProperties``."""
    return _rewrite(root, root, data, 0)


def _rewrite(root: Any, schema: Any, data: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return data
    places = _places(root, schema, data, 0)
    if isinstance(data, dict):
        order = list(dict.fromkeys(_order(root, schema, data, 0)))
        keys = [name for name in order if name in data] + [name for name in data if name not in order]
        return {name: _rewrite(root, _property_schema(places, name), data[name], depth + 1) for name in keys}
    if isinstance(data, list):
        return [_rewrite(root, _item_schema(places, index), item, depth + 1) for index, item in enumerate(data)]
    return data


def _order(root: Any, schema: Any, data: dict[str, Any], hops: int) -> list[str]:
    """The property names ``schema`` declares for ``data``, in the grammar's order."""
    if not isinstance(schema, dict) or hops > MAX_DEPTH:
        return []
    own = list(schema["properties"]) if isinstance(schema.get("properties"), dict) else []
    names: list[str] = []
    conditionals = [schema] if "if" in schema else []
    for key, value in schema.items():
        if key == "properties":
            names += own
        elif key == "$ref":
            names += _order(root, _target(root, value), data, hops + 1)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            for branch in value if key == "allOf" else _chosen(root, value, data):
                if key == "allOf" and isinstance(branch, dict) and "if" in branch:
                    conditionals.append(branch)
                    branch = {k: v for k, v in branch.items() if k not in ("if", "then", "else")}
                names += [name for name in _order(root, branch, data, hops + 1) if name not in own]
    for conditional in conditionals:  # after the others: the if's names, then those of the branch it picks
        for branch in (conditional["if"], _branch(root, conditional, data)):
            names += [name for name in _order(root, branch, data, hops + 1) if name not in own]
    return names


def _branch(root: Any, schema: dict[str, Any], data: Any) -> Any:
    """The ``then`` or ``else`` that a schema's ``if`` picks for ``data``."""
    holds = _holds(root, schema["if"], data)
    if holds is None:
        return None  # a schema the validator cannot read: no branch, no order from it
    return schema.get("then") if holds else schema.get("else")


def _holds(root: Any, schema: Any, data: Any) -> bool | None:
    """Whether ``data`` is valid against ``schema``, a place in ``root`` whose
    references it resolves (None: the validator cannot read it)."""
    try:
        whole = validators.validator_for(root, default=Draft202012Validator)(root)
        return bool(whole.evolve(schema=schema).is_valid(data))
    except Exception:  # noqa: BLE001 - a schema the validator cannot read
        return None


def _chosen(root: Any, branches: list[Any], data: Any) -> list[Any]:
    """The ``anyOf``/``oneOf`` branch an object is valid against that declares most
    of its keys (the first of those; among all branches when it is valid against
    none): all of them for any other value."""
    if not isinstance(data, dict) or not branches:
        return branches
    return [max(branches, key=lambda branch: (bool(_holds(root, branch, data)),
                                              sum(name in data for name in set(_order(root, branch, data, 1)))))]


def _target(root: Any, reference: Any) -> Any:
    if not isinstance(reference, str) or not reference.startswith("#"):
        return None
    target = follow_pointer(root, reference)
    return None if target is NOWHERE else target


def _places(root: Any, schema: Any, data: Any, hops: int) -> list[dict[str, Any]]:
    """The schema objects that apply at one place: itself, its branches (an object's
    chosen ``anyOf``/``oneOf`` branch) and the targets of its local references."""
    if not isinstance(schema, dict) or hops > MAX_DEPTH:
        return []
    found = [schema]
    if "$ref" in schema:
        found += _places(root, _target(root, schema["$ref"]), data, hops + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches if key == "allOf" else _chosen(root, branches, data):
                found += _places(root, branch, data, hops + 1)
    if "if" in schema:
        found += _places(root, _branch(root, schema, data), data, hops + 1)
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

"""How ``allOf``'s parts become one schema object, keyword by keyword: properties
both hold take both schemas, bounds the tighter one, ``multipleOf`` the least
common multiple, ``pattern`` both as lookaheads, two ``anyOf`` a branch per pair,
tuples item by item; where two parts disagree otherwise, the first one's value
(not exact). Plain functions on schemas, for ``combinators``."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from schema2grammar import ecma
from schema2grammar.property_names import found_by, matchable
from schema2grammar.shared import (CONDITIONAL, LATER, SOME, VALIDATION_KEYWORDS, NoValue, SchemaError, count_of,
                                   json_equal)

_TUPLE_KEYWORDS = ("prefixItems", "items", "additionalItems")

_MERGE_KEYWORDS = (VALIDATION_KEYWORDS | {"type", "enum", "const", "not", "divisibleBy", "disallow", "extends"}) \
    - {"additionalProperties"}
"""Keys on which ``allOf``'s parts may disagree (``additionalProperties`` is merged
apart); any other key is an annotation, and the first part's value is kept."""

_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
           "maxContains")
_BOUNDS = _COUNTS + ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
"""Keys whose values two parts' tighter one replaces (the larger of ``min*``, the
smaller of ``max*``)."""

MAX_DISTRIBUTED = 64
"""Branches of two ``anyOf``s (or ``oneOf``s) merged as one: one per pair; past it,
the merge is not exact (the first part's is kept, reported)."""


def all_of_references(schema: dict[str, Any]) -> list[Any] | None:
    """The parts of a schema that is only ``allOf`` when one of them is a ``$ref``:
    such a merge may recur through the references, so it is built once per list
    of parts."""
    parts = flat_all_of(schema)
    return parts if parts is not None and any(isinstance(part, dict) and "$ref" in part for part in parts) else None


def flat_all_of(schema: Any) -> list[Any] | None:
    """The parts of a schema that is only ``allOf``, nested ones flattened (None for another schema)."""
    if not isinstance(schema, dict) or set(schema) != {"allOf"} or not isinstance(schema["allOf"], list):
        return None
    parts: list[Any] = []
    for part in schema["allOf"]:
        inner = flat_all_of(part)
        parts.extend(inner if inner is not None else [part])
    return parts


def flattened_in_place(part: Any) -> bool:
    """Whether an ``allOf`` part's own ``allOf`` is merged as its parts, in its
    place (declared order): not where a conditional is among them, which the
    nested ``allOf``'s own merge splits into cases (``switched``)."""
    if not isinstance(part, dict) or "$ref" in part or not isinstance(part.get("allOf"), list):
        return False
    return not any(isinstance(p, dict) and any(k in p for k in CONDITIONAL) for p in [part, *part["allOf"]])


def merge_keywords(merged: dict[str, Any], part: dict[str, Any], pointer: str) -> bool:
    """Merge one ``allOf`` part's keywords into ``merged`` (tuples aside:
    ``finish_merge``); whether each one merged exactly (a keyword the two disagree
    on keeps the first one's value)."""
    exact = True
    for key, value in part.items():
        if key in _TUPLE_KEYWORDS and key in merged:
            continue  # finish_merge, once every part is in
        if key not in merged:
            merged[key] = value
        elif key in ("properties", "patternProperties"):  # a name both declare: its value must satisfy both
            merged[key] = _merged_schemas(merged[key], value)
        elif key == "required":
            merged[key] = list(dict.fromkeys(merged[key] + value))
        elif key == "not":  # not A, and not B: not (A or B)
            merged[key] = {"anyOf": [merged[key], value]}
        elif key == SOME:  # each part's witnesses
            merged[key] = [*merged[key], *value]
        elif key == "propertyNames":  # every name holds to both
            merged[key] = _both(merged[key], value)
        elif key == "type" and "nullable" not in merged and "nullable" not in part:
            merged[key] = _common_type(merged[key], value, pointer)
        elif key in ("enum", "const"):  # the values both list
            merged[key] = _common_values(key, merged[key], value, pointer)
        elif merged[key] == value or key not in _MERGE_KEYWORDS:
            continue  # the same, or an annotation (a key JSON Schema does not define): the first one's
        elif key in _BOUNDS and (tighter := _tighter(key, merged, part)) is not None:
            merged[key] = tighter
        elif key == "multipleOf" and (common := _common_multiple(merged[key], value)) is not None:
            merged[key] = common
        elif key == "pattern" and (both := _both_patterns(merged[key], value)) is not None:
            merged[key] = both
        elif key in ("anyOf", "oneOf") and (pairs := _distributed(merged[key], value)) is not None:
            merged[key] = pairs
        else:
            exact = False
    return exact


def finish_merge(merged: dict[str, Any], sources: list[dict[str, Any]], own_last: Any, aside: set[str] | None) -> bool:
    """Once every part (``sources``) is in ``merged``: extra names judged by every
    part's ``additionalProperties``, the declared order kept (``own_last``: the
    schema's own ``properties`` where its ``allOf`` is written before them, else
    None; ``aside``: the names declared before a part's ``anyOf``/``oneOf`` kept
    aside), the tuples merged; whether all of that is exact."""
    _merge_additional(merged, sources)
    exact = True
    for source in sources:
        exact = _judge_foreign_names(merged, source) and exact
    if own_last is not None and "properties" in merged:  # the parts' anyOf/oneOf names come first too (LATER)
        merged["properties"] = _parts_names_first(merged["properties"], own_last)
    _order_later(merged, aside)
    return _merge_tuples(merged, sources) and exact


def _both(first: Any, second: Any) -> Any:
    """A schema both ``first`` and ``second`` hold to (one of them where the other is true)."""
    if second is True or second == {} or first == second:
        return first
    if first is True or first == {}:
        return second
    if isinstance(first, dict) and set(first) == {"allOf"} and isinstance(first["allOf"], list):
        return {"allOf": [*first["allOf"], second]}  # flat: a hundred parts merged one by one nest no deeper
    return {"allOf": [first, second]}


def _parts_names_first(properties: dict[str, Any], own: Any) -> dict[str, Any]:
    """Merged ``properties`` in the declared order of a schema whose ``allOf`` is
    written before its own ``properties``: the names only its parts declare come
    first, then its own in their order (a part that only narrows a property the
    schema declares does not move it: Github o10011's oneOf is written first and
    narrows two of its four properties; o89710's declares two more)."""
    if not isinstance(own, dict):
        return properties
    return {**{n: s for n, s in properties.items() if n not in own}, **{n: s for n, s in properties.items() if n in own}}


def _order_later(merged: dict[str, Any], aside: set[str] | None) -> None:
    """Keep the text's order where a merge keeps an ``anyOf``/``oneOf`` aside: the
    names declared after it (not in ``aside``) are marked ``LATER`` while it is
    there, for each branch's merge; once merged without one, those names go last
    (after the branch's own) and the mark goes."""
    names = merged.get("properties")
    if aside is not None and isinstance(names, dict):
        later = [name for name in names if name not in aside and name not in merged.get(LATER, [])]
        if later:
            merged[LATER] = [*merged.get(LATER, []), *later]
    if LATER in merged and "anyOf" not in merged and "oneOf" not in merged:
        last = set(merged.pop(LATER))
        if isinstance(names, dict):
            merged["properties"] = {**{n: s for n, s in names.items() if n not in last},
                                    **{n: s for n, s in names.items() if n in last}}


def _common_values(key: str, first: Any, second: Any, pointer: str) -> Any:
    """Two parts' ``enum`` (the values both list, JSON equality) or ``const`` (one
    value, if they are equal); none in common is no value."""
    if key == "const":
        if not json_equal(first, second):
            raise NoValue(f"{pointer or '#'}: allOf's parts have different const values")
        return first
    if not isinstance(first, list) or not isinstance(second, list):
        raise SchemaError(f"{pointer or '#'}: enum must be a list")
    common = [value for value in first if any(json_equal(value, other) for other in second)]
    if not common:
        raise NoValue(f"{pointer or '#'}: allOf's parts list no enum value in common")
    return common


def _merged_schemas(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two ``allOf`` parts' ``properties`` (or ``patternProperties``) as one: a name
    (pattern) both hold takes both schemas; the first part's order, then the second's."""
    return {**first, **{name: _both(first[name], sub) if name in first else sub for name, sub in second.items()}}


def _merge_additional(merged: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    """A name no part declares is extra in each: every part's
    ``additionalProperties`` judges it (``allOf`` of them). Where the parts see
    different patterns, the first one's only (``_judge_foreign_names`` reports it):
    another part's pattern may let a name pass that the others would judge."""
    judging = [source for source in sources if "additionalProperties" in source]
    values = list({json.dumps(s["additionalProperties"], sort_keys=True): s["additionalProperties"] for s in judging}.values())
    if len(values) < 2:
        return
    patterns = set(merged.get("patternProperties", {}))
    same = all(set(source.get("patternProperties", {})) == patterns for source in judging)
    merged["additionalProperties"] = {"allOf": values} if same else judging[0]["additionalProperties"]


def _judge_foreign_names(merged: dict[str, Any], source: dict[str, Any]) -> bool:
    """Hold each property another part declares to what ``source``'s
    ``additionalProperties`` (or the patterns of ``source`` that find its name)
    says of it: in ``source`` that name is an extra one. False when that cannot be
    said exactly (another part's patterns, patterns Python cannot run): ``merged``
    is then wider. (A part's ``unevaluatedProperties`` became ``additionalProperties``
    beside what it evaluates before the merge: ``unevaluated.expanded_part``.)"""
    foreign = [name for name in merged.get("properties", {}) if name not in source.get("properties", {})]
    others = set(merged.get("patternProperties", {})) - set(source.get("patternProperties", {}))
    if "additionalProperties" not in source or not (foreign or others):
        return True
    patterns = matchable(source.get("patternProperties"))
    if others or (patterns is None and "patternProperties" in source):
        return False
    properties = dict(merged["properties"])
    for name in foreign:
        judges = [sub for sub in found_by(patterns, name) or [source["additionalProperties"]] if sub is not True and sub != {}]
        if judges:
            properties[name] = {"allOf": [properties[name], *judges]}
    merged["properties"] = properties
    return True


def _bound_of(schema: dict[str, Any], key: str) -> Any:
    """``schema``'s ``key`` (one of ``_BOUNDS``) where the tighter of two replaces it: a
    count, or a number beside no draft-4 boolean ``exclusiveMinimum``/
    ``exclusiveMaximum``; None otherwise."""
    value = schema.get(key)
    if key in _COUNTS:
        return count_of(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return None if any(isinstance(schema.get(flag), bool) for flag in ("exclusiveMinimum", "exclusiveMaximum")) else value


def _tighter(key: str, first: dict[str, Any], second: dict[str, Any]) -> Any:
    """The tighter of two schemas' ``key`` (None where either is no such bound)."""
    a, b = _bound_of(first, key), _bound_of(second, key)
    if a is None or b is None:
        return None
    return max(a, b) if key.startswith(("min", "exclusiveMin")) else min(a, b)


def _common_multiple(first: Any, second: Any) -> int | float | None:
    """The least common multiple of two ``multipleOf``s (a multiple of both is one
    of it), as JSON writes a number; None where either is no positive number or the
    result would lose digits as a float."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
           for v in (first, second)):
        return None
    a, b = Fraction(Decimal(repr(first))), Fraction(Decimal(repr(second)))
    denominator = math.lcm(a.denominator, b.denominator)  # over it, both are integers
    found = Fraction(math.lcm(a.numerator * (denominator // a.denominator), b.numerator * (denominator // b.denominator)),
                     denominator)
    if found.denominator == 1:
        return found.numerator
    as_float = float(found)
    return as_float if Fraction(Decimal(repr(as_float))) == found else None


def _both_patterns(first: Any, second: Any) -> str | None:
    """One pattern that finds what both do: the first as a lookahead from the
    start (which ``ecma.conjuncts`` reads as a second automaton). None where either
    has lookarounds of its own (they would not be leading ones) or does not parse."""
    if not isinstance(first, str) or not isinstance(second, str):
        return None
    try:
        if any(ecma.conjuncts(pattern) != [(True, pattern)] for pattern in (first, second)):
            return None
    except ecma.Unsupported:
        return None
    return f"^(?=[\\s\\S]*?(?:{first}))[\\s\\S]*?(?:{second})"


def _distributed(first: Any, second: Any) -> list[Any] | None:
    """Two parts' ``anyOf`` (or ``oneOf``) as one: a branch per pair, both branches
    merged. (Some a and some b) is some pair; (exactly one a and exactly one b) is
    exactly one pair, since the pairs matched are the a's times the b's. None past
    ``MAX_DISTRIBUTED`` or where either is no list."""
    if not isinstance(first, list) or not isinstance(second, list) or len(first) * len(second) > MAX_DISTRIBUTED:
        return None
    return [_both(a, b) for a in first for b in second]


def _tuple_of(source: dict[str, Any]) -> tuple[list[Any], Any, str] | None:
    """A part's tuple, the schema of the items after it (None: no constraint),
    and how it spells the tuple ("items" as a list, "prefixItems", or "" for
    none); None when the part says nothing of items."""
    items = source.get("items")
    if isinstance(items, list):
        return items, source.get("additionalItems"), "items"
    prefix = source.get("prefixItems")
    if prefix is None and items is None:
        return None
    return prefix if isinstance(prefix, list) else [], items, "prefixItems" if isinstance(prefix, list) else ""


def _merge_tuples(merged: dict[str, Any], sources: list[dict[str, Any]]) -> bool:
    """The parts' tuples as one, item by item, as long as the longest: where a part's
    own tuple is shorter, its schema for the items after it holds there, and the
    items after every tuple take every part's. False (the first part's kept) when
    the parts spell tuples both ways."""
    found = [tuple_ for tuple_ in map(_tuple_of, sources) if tuple_ is not None]
    spellings = {spelling for _, _, spelling in found if spelling}
    if len(found) < 2 or len(spellings) > 1:
        return len(spellings) < 2
    length = max(len(prefix) for prefix, _, _ in found)
    prefix = [_all([p[i] if i < len(p) else rest for p, rest, _ in found if i < len(p) or rest is not None])
              for i in range(length)]
    rests = [rest for _, rest, _ in found if rest is not None]
    for key in _TUPLE_KEYWORDS:
        merged.pop(key, None)
    as_list = spellings == {"items"}
    if length:
        merged["items" if as_list else "prefixItems"] = prefix
    if rests:
        merged["additionalItems" if as_list and length else "items"] = _all(rests)
    return True


def _all(schemas: list[Any]) -> Any:
    """One schema that holds to each of ``schemas`` (true for none)."""
    found: Any = True
    for schema in schemas:
        found = _both(found, schema)
    return found


def _common_type(a: Any, b: Any, pointer: str) -> Any:
    """The types two ``allOf`` parts both allow (an integer is a number)."""
    first, second = (value if isinstance(value, list) else [value] for value in (a, b))
    common = [kind for kind in first if kind in second or (kind == "integer" and "number" in second)]
    common += [kind for kind in second if kind == "integer" and "number" in first and kind not in common]
    if not common:
        raise NoValue(f"{pointer or '#'}: allOf parts allow no common type")
    return common[0] if len(common) == 1 else common

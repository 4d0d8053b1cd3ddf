"""The conditions a schema puts on each kind of JSON value, and their algebra.

``complement`` reads a schema kind by kind into these conditions (all, none,
listed strings or a length range, some booleans, integers or a range of numbers,
objects holding names or with property values, arrays by count and items);
``disjoint`` and the translator read them too. Here they are combined
(``conjoin``, ``disjoin``), normalized, negated within a kind where object schemas
spell the complement (``object_branches``, ``array_branches``), and lists of
values read from them (``finite_values``): a module of its own so that every
reader of conditions can import it without importing the reader of schemas.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from schema2grammar import numbers, shared

MAX_OBJECT_BRANCHES = 64
"""Object schemas one complement of a union of object conditions may take (one per
choice of a way to fail each); past it, inexact."""
KINDS = ("null", "boolean", "object", "array", "string", "number")
ANY = "any"
"""Every value of the kind satisfies the schema."""
NONE = "none"
"""No value of the kind satisfies the schema."""


@dataclass(frozen=True)
class Inexact:
    """A set of values of one kind that has no exact complement here."""

    note: str


@dataclass(frozen=True)
class Strings:
    """Strings: ``values`` (None: any text) of ``low`` to ``high`` characters."""

    values: frozenset[str] | None = None
    low: int = 0
    high: int | None = None


@dataclass(frozen=True)
class Numbers:
    """Numbers: integers only where ``integral``, within the integral bounds, among
    ``values`` (integers) when given."""

    integral: bool = False
    low: numbers.Bound | None = None
    high: numbers.Bound | None = None
    values: frozenset[int] | None = None


@dataclass(frozen=True)
class Objects:
    """Objects holding every name of ``required``, whose ``properties`` (where
    present) satisfy their schemas, whose properties named as a ``patterns`` key
    finds satisfy its schema, and which, for each pair of ``some``, hold a property
    named as its pattern finds with a value of its schema."""

    required: tuple[str, ...] = ()
    properties: dict[str, Any] = field(default_factory=dict)
    patterns: dict[str, Any] = field(default_factory=dict)
    some: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Arrays:
    """Arrays of ``low`` to ``high`` items, each satisfying ``items`` (a schema)."""

    items: Any = True
    low: int = 0
    high: int | None = None


@dataclass(frozen=True)
class ObjectUnion:
    """Objects that satisfy one of ``parts`` (``anyOf``, or two negations at one place)."""

    parts: tuple[Objects, ...]


Condition = Union[str, Inexact, "frozenset[bool]", Strings, Numbers, Objects, ObjectUnion, Arrays]
"""ANY, NONE, Inexact, a frozenset of booleans, Strings, Numbers, Objects, ObjectUnion or Arrays."""
Kinds = dict[str, Condition]

NO_CONSTRAINT = shared.ANNOTATIONS | frozenset(shared.DEFINITIONS)
"""Keys that constrain no value: annotations and definitions."""


@dataclass(frozen=True)
class Draft:
    """What the document decides: whether ``1.0`` is an integer, whether ``format``
    is checked, what a local ``$ref`` points to (``resolve``; it raises on a
    dangling one) and whether its siblings are ignored (drafts 3-7)."""

    float_integers: bool
    format_assertion: bool
    resolve: Callable[[str], Any] | None = None
    ref_alone: bool = False
    conditional: bool = True
    """Whether ``if``/``then``/``else`` are keywords (draft 7 on)."""
    references: dict[str, Kinds | None] = field(default_factory=dict, compare=False)
    """Each reference's verdicts, read once (None while being read: a cycle)."""
    ending: set[str] = field(default_factory=set, compare=False)
    """Targets from which every chain of references ends (``_recurring``)."""


def everything(condition: Condition) -> Kinds:
    return {kind: condition for kind in KINDS}


def negate_whole(condition: Condition) -> Condition:
    """The complement of ``condition`` within its kind, where the conditions spell
    it: all and none swap, booleans are the others, and objects not satisfying
    object conditions are the union of ``object_branches``' ways to fail them."""
    if condition == ANY:
        return NONE
    if condition == NONE:
        return ANY
    if isinstance(condition, frozenset):  # some booleans: the others
        return normal(frozenset((True, False)) - condition)
    if isinstance(condition, (Objects, ObjectUnion)):
        ways = object_branches(condition)
        if ways is None:
            return Inexact(f"a not inside a not: more than {MAX_OBJECT_BRANCHES} ways to fail a union of object schemas")
        parts: list[Condition] = []
        for way in ways:
            part: Condition = ANY
            for branch in way:
                part = conjoin(part, Objects(tuple(branch.get("required", ())), dict(branch.get("properties", {})),
                                             dict(branch.get("patternProperties", {})),
                                             tuple((p, sub) for p, sub in branch.get(shared.SOME, ()))))
            parts.append(part)
        found: Condition = NONE
        for part in parts:
            found = disjoin(found, part)
        return found
    return Inexact("a not inside a not, over part of a kind")


def conjoin(a: Condition, b: Condition) -> Condition:
    """The values both conditions accept (of one kind)."""
    if a == NONE or b == NONE:
        return NONE
    if a == ANY:
        return b
    if b == ANY or isinstance(a, Inexact):
        return a
    if isinstance(b, Inexact):
        return b
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        return normal(a & b)
    if isinstance(a, Strings) and isinstance(b, Strings):
        values = b.values if a.values is None else a.values if b.values is None else a.values & b.values
        highs = [h for h in (a.high, b.high) if h is not None]
        return normal(Strings(values, max(a.low, b.low), min(highs) if highs else None))
    if isinstance(a, Numbers) and isinstance(b, Numbers):
        numbers = b.values if a.values is None else a.values if b.values is None else a.values & b.values
        low = max((x for x in (a.low, b.low) if x is not None), default=None)
        high = min((x for x in (a.high, b.high) if x is not None), key=lambda x: (x[0], not x[1]), default=None)
        return normal(Numbers(a.integral or b.integral, low, high, numbers))
    if isinstance(a, Arrays) and isinstance(b, Arrays):
        items = b.items if a.items is True else a.items if b.items is True else {"allOf": [a.items, b.items]}
        highs = [h for h in (a.high, b.high) if h is not None]
        return normal(Arrays(items, max(a.low, b.low), min(highs) if highs else None))
    if isinstance(a, (Objects, ObjectUnion)) and isinstance(b, (Objects, ObjectUnion)):
        ours = a.parts if isinstance(a, ObjectUnion) else (a,)
        theirs = b.parts if isinstance(b, ObjectUnion) else (b,)
        if len(ours) * len(theirs) > MAX_OBJECT_BRANCHES:
            return Inexact(f"more than {MAX_OBJECT_BRANCHES} object schemas in a union beside other object keywords")
        parts = tuple(part for x in ours for y in theirs  # and distributes over or
                      if not _impossible(part := _both_objects(x, y)))
        if not parts:
            return NONE
        return parts[0] if len(parts) == 1 else ObjectUnion(parts)
    return Inexact("conditions that do not combine here")


def _impossible(part: Objects) -> bool:
    """Whether ``part`` requires a name whose schema is ``false`` (alone or in an
    ``allOf``): such parts come of distributing ways to fail over one another."""
    def false(schema: Any) -> bool:
        return schema is False or isinstance(schema, dict) and set(schema) == {"allOf"} and any(map(false, schema["allOf"]))

    return any(name in part.properties and false(part.properties[name]) for name in part.required)


def _both_objects(a: Objects, b: Objects) -> Objects:
    """Objects satisfying both: every name either requires, each property (and
    pattern) both schemas, every witness either asks for."""
    properties, patterns = dict(a.properties), dict(a.patterns)
    for name, sub in b.properties.items():
        properties[name] = {"allOf": [properties[name], sub]} if name in properties else sub
    for pattern, sub in b.patterns.items():
        patterns[pattern] = {"allOf": [patterns[pattern], sub]} if pattern in patterns else sub
    return Objects(tuple(dict.fromkeys(a.required + b.required)), properties, patterns, a.some + b.some)


def disjoin(a: Condition, b: Condition) -> Condition:
    """The values either condition accepts (of one kind)."""
    if a == ANY or b == ANY:
        return ANY
    if a == NONE or isinstance(b, Inexact):
        return b
    if b == NONE or isinstance(a, Inexact):
        return a
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        return normal(a | b)
    if isinstance(a, Strings) and isinstance(b, Strings) and a.values is not None and b.values is not None:
        return Strings(values=a.values | b.values)
    if isinstance(a, Numbers) and isinstance(b, Numbers) and a.values is not None and b.values is not None:
        return Numbers(values=a.values | b.values)
    if isinstance(a, (Objects, ObjectUnion)) and isinstance(b, (Objects, ObjectUnion)):
        return ObjectUnion(tuple(p for c in (a, b) for p in (c.parts if isinstance(c, ObjectUnion) else (c,))))
    return Inexact("a union of ranges")


def normal(condition: Condition) -> Condition:
    """ANY or NONE where a condition amounts to one; listed values filtered by the
    condition's ranges (then only the list matters)."""
    if isinstance(condition, frozenset):
        return NONE if not condition else ANY if len(condition) == 2 else condition
    if isinstance(condition, Strings):
        if condition.values is not None:
            kept = frozenset(v for v in condition.values
                             if len(v) >= condition.low and (condition.high is None or len(v) <= condition.high))
            return Strings(values=kept) if kept else NONE
        if condition.high is not None and condition.high < condition.low:
            return NONE
        return ANY if condition == Strings() else condition
    if isinstance(condition, Arrays):
        if condition.high is not None and condition.high < condition.low:
            return NONE
        if condition.items == {}:
            condition = Arrays(True, condition.low, condition.high)
        return ANY if condition == Arrays() else condition
    if isinstance(condition, Numbers):
        if condition.values is not None:
            within = frozenset(v for v in condition.values if within_bounds(v, condition.low, condition.high))
            return Numbers(values=within) if within else NONE
        return ANY if condition == Numbers() else condition
    return condition


def within_bounds(value: float, low: numbers.Bound | None, high: numbers.Bound | None) -> bool:
    above = low is None or value > low[0] or (value == low[0] and not low[1])
    below = high is None or value < high[0] or (value == high[0] and not high[1])
    return above and below



def array_branches(condition: Arrays) -> list[dict[str, Any]]:
    """Array schemas whose union is the arrays ``condition`` refuses by their count:
    too few items, or too many (an item it refuses is the caller's branch)."""
    found: list[dict[str, Any]] = [{"maxItems": condition.low - 1}] if condition.low > 0 else []
    if condition.high is not None:
        found.append({"minItems": condition.high + 1})
    return found


def unnegated(schema: Any) -> Any:
    """``inner`` where ``schema`` is ``{"not": inner}`` and nothing else (annotations
    aside), which is what a ``not`` of ``schema`` accepts; else None."""
    if not isinstance(schema, dict) or "not" not in schema:
        return None
    if any(key != "not" and key not in NO_CONSTRAINT for key in schema):
        return None
    return schema["not"]


def object_branches(condition: Objects | ObjectUnion) -> list[list[dict[str, Any]]] | None:
    """Object schemas (each the ``allOf`` of its parts) whose union is the objects
    ``condition`` refuses: one lacks a required name, has a property whose value
    its schema refuses (a named one, or one a pattern finds: ``shared.SOME``), or holds
    no property a ``some`` pair asks for (each one its pattern finds refused by its
    schema); for a union, one such way per part. None past ``MAX_OBJECT_BRANCHES``."""
    if isinstance(condition, Objects):
        found: list[dict[str, Any]] = [{"properties": {name: False}} for name in condition.required]
        found += [{"required": [name], "properties": {name: {"not": sub}}}
                  for name, sub in condition.properties.items() if sub is not True and sub != {}]
        found += [{shared.SOME: [[pattern, {"not": sub}]]} for pattern, sub in condition.patterns.items()
                  if sub is not True and sub != {}]
        found += [{"patternProperties": {pattern: {"not": sub}}} for pattern, sub in condition.some]
        return [[branch] for branch in found]
    tagged = _tagged_branches(condition)
    if tagged is not None:
        return tagged if len(tagged) <= MAX_OBJECT_BRANCHES else None
    combined: list[list[dict[str, Any]]] = [[]]
    for part in condition.parts:
        ways = object_branches(part)
        assert ways is not None
        combined = [done + way for done in combined for way in ways]
        if len(combined) > MAX_OBJECT_BRANCHES:
            return None
    return combined


def _tagged_branches(union: ObjectUnion) -> list[list[dict[str, Any]]] | None:
    """The objects no part of a tagged union takes, one way per failure rather than
    per choice of failures (``object_branches``'s product): where every part
    requires one name and lists its own strings for it (``"type": "file"`` against
    ``"type": "dir"``), an object takes no part when it lacks the name, holds
    another value there, or holds a part's value and fails that part otherwise.
    None where no name tags the parts so."""
    for name in union.parts[0].required:
        listed = [_tag_values(part, name) for part in union.parts]
        every = [value for values in listed if values is not None for value in values]
        if any(values is None for values in listed) or len(every) != len(set(every)):
            continue
        found: list[list[dict[str, Any]]] = [[{"properties": {name: False}}],
                                             [{"required": [name], "properties": {name: {"not": {"enum": every}}}}]]
        for part, values in zip(union.parts, listed):
            tag = {"required": [name], "properties": {name: {"enum": values}}}
            rest = Objects(tuple(n for n in part.required if n != name),
                           {n: sub for n, sub in part.properties.items() if n != name}, part.patterns, part.some)
            found += [[tag, *way] for way in object_branches(rest) or []]
        return found
    return None


def _tag_values(part: Objects, name: str) -> list[str] | None:
    """The strings ``part`` lists for the name it requires (None: not a list of strings)."""
    if name not in part.required or name not in part.properties:
        return None
    values = finite_values(part.properties[name], lambda value, allowed: shared.has_type(value, allowed, False))
    if not values or not all(isinstance(value, str) for value in values):
        return None
    return list(dict.fromkeys(values))


# -- finite item domains (uniqueItems)


def finite_values(schema: Any, has_type: Callable[[Any, list[Any]], bool]) -> list[Any] | None:
    """The values ``schema`` accepts when it lists them (``enum``/``const``, maybe
    with ``type``) or is ``boolean``/``null`` typed; None for any other schema."""
    if schema is False:
        return []
    if not isinstance(schema, dict):
        return None
    keys = {key for key in schema if key not in NO_CONSTRAINT}
    listed = "const" in schema or "enum" in schema
    if not keys or not keys <= {"type", "enum", "const", *([] if listed else ["nullable"])}:
        return None  # nullable beside enum: the translator does not check it against the values either
    declared = schema.get("type")
    allowed = declared if isinstance(declared, list) else None if declared is None else [declared]
    if allowed is not None and schema.get("nullable") is True:
        allowed = [*allowed, "null"]
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        if not isinstance(values, list):
            return None
        if "const" in schema and "enum" in schema:
            if not isinstance(schema["enum"], list):
                return None
            values = [v for v in values if any(shared.json_equal(v, e) for e in schema["enum"])]
        return [v for v in values if allowed is None or has_type(v, allowed)]
    if allowed is None or not set(allowed) <= {"boolean", "null"}:
        return None
    return ([True, False] if "boolean" in allowed else []) + ([None] if "null" in allowed else [])


def value_key(value: Any) -> str:
    """A text equal for JSON-equal values (``1`` and ``1.0``; not ``true`` and ``1``):
    ``shared.json_equal`` as a key, for sets of values."""
    return json.dumps(_normal_value(value), sort_keys=True)


def _normal_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal_value(v) for k, v in value.items()}
    return value


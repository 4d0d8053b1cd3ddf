"""What a schema says of each kind of JSON value, and the complement of that where
a regex or a few object schemas spell it exactly.

``not``, ``if``/``else`` and ``contains`` need the values a schema refuses. A
schema is a conjunction of keywords, and each keyword constrains one kind of value
(``minLength`` strings only), so the values it accepts are, kind by kind, one of a
few simple sets (``satisfying``): all, none, listed strings or a length range,
some booleans, integers or a range of numbers, objects holding names or with
property values. Those complement exactly (``string_complement``,
``number_complement``, ``object_branches``); anything else is ``Inexact`` for its
kind, which the translator reports approximated.

Complement regexes accept what ``json.dumps`` writes for every value outside the
set, and no spelling of a value inside it: a string complement decodes escapes
(``"\\u0061"`` is ``"a"``), a number complement accepts only the spellings whose
value a regex can tell (as the translator's number ranges do).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Union

from schema2grammar import numbers, regexes, shared

MAX_EXCLUDED_CHARACTERS = 256
"""Characters in all the strings one string complement leaves out: the regex walks
their trie (a few hundred regex characters per trie node); past it, inexact."""

MAX_NESTING = 100
"""Schemas nested in one another that ``satisfying`` reads (``not``, ``allOf``,
``anyOf``); deeper is inexact, not a Python stack overflow."""

MAX_EXCLUDED_NUMBERS = 64
"""Integers one number complement leaves out (one range regex per gap); past it,
inexact."""

MAX_OBJECT_BRANCHES = 64
"""Object schemas one complement of a union of object conditions may take (one per
choice of a way to fail each); past it, inexact."""

MAX_REFERENCES_FOLLOWED = 256
"""Reference targets one check that a property's complement ends follows
(``_recurring``); past it, inexact."""

MAX_UNIQUE_VALUES = 8
"""Values an item of a ``uniqueItems`` array may take: the grammar's state is the
set of values used so far, 2**8 = 256 states; past it, ``uniqueItems`` is inexact."""

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

_ANNOTATIONS = shared.ANNOTATIONS | frozenset(shared.DEFINITIONS)
_READ = frozenset("properties required patternProperties minLength maxLength minimum maximum exclusiveMinimum "
                  "exclusiveMaximum items minItems maxItems uniqueItems".split()) | {shared.SOME}
"""Type keywords ``_keyword`` reads; the others are inexact for their type."""
_KIND_OF = {key: kind for kind, keys in shared.TYPE_KEYWORDS.items() for key in keys if key not in _READ}
_KIND_OF["divisibleBy"] = "number"  # draft 3's multipleOf
_ANY_KIND = frozenset("$dynamicRef $recursiveRef $recursiveAnchor disallow extends".split())
"""Keywords that may constrain every kind: inexact for all."""


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


def satisfying(schema: Any, draft: Draft, pointer: str, depth: int = 0) -> Kinds:
    """Per kind, the values ``schema`` (at ``pointer``) accepts (a conjunction of its
    keywords); a malformed one is a ``SchemaError`` naming its pointer."""
    if depth > MAX_NESTING:
        return everything(Inexact(f"schemas nested more than {MAX_NESTING} deep"))
    if schema is True:
        return everything(ANY)
    if schema is False:
        return everything(NONE)
    if not isinstance(schema, dict):
        raise shared.SchemaError(f"{pointer or '#'}: a schema must be an object or a boolean, not {schema!r}")
    shared.check_shapes(schema, pointer)
    kinds = everything(ANY)
    if "$ref" in schema:
        kinds = dict(_reference(schema["$ref"], draft, depth + 1))  # a copy: the cache is shared
        if draft.ref_alone:
            return kinds
    if draft.conditional and isinstance(schema.get("if"), bool):  # then, or else, applies to every value
        key = "then" if schema["if"] else "else"
        branch = satisfying(schema.get(key, True), draft, f"{pointer}/{key}", depth + 1)
        kinds = {kind: conjoin(kinds[kind], branch[kind]) for kind in KINDS}
    elif draft.conditional and "if" in schema and ("then" in schema or "else" in schema):
        kinds = everything(Inexact("if/then/else inside"))
    for key, value in schema.items():
        if key in ("if", "then", "else", "$ref") or key in _ANNOTATIONS:
            continue  # if/then/else before draft 7: annotations
        for kind, condition in _keyword(key, value, schema, draft, f"{pointer}/{key}", depth + 1).items():
            kinds[kind] = conjoin(kinds[kind], condition)
    return kinds


def _reference(target: Any, draft: Draft, depth: int) -> Kinds:
    """The verdicts of the schema a local ``$ref`` points to (read once per
    target; a cycle, or a target outside the document, is inexact)."""
    if not isinstance(target, str) or not target.startswith("#") or draft.resolve is None:
        return everything(Inexact(f"$ref {target!r} is not followed here"))
    if target in draft.references:
        found = draft.references[target]
        return found if found is not None else everything(Inexact(f"$ref {target!r} recurs"))
    draft.references[target] = None
    try:
        resolved = draft.resolve(target)
    except ValueError:  # SchemaError: points to nothing
        resolved = None
    kinds = everything(Inexact(f"$ref {target!r} points to nothing")) if resolved is None else satisfying(
        resolved, draft, target[1:], depth)
    draft.references[target] = kinds
    return kinds


def _keyword(key: str, value: Any, schema: dict[str, Any], draft: Draft, pointer: str, depth: int) -> Kinds:
    """The values one keyword (at ``pointer``) accepts, per kind (ANY where it does
    not constrain)."""
    if key == "type":
        return _types(value, schema.get("nullable") is True, pointer)
    if key in ("enum", "const"):
        if key == "enum" and (not isinstance(value, list) or not value):
            raise shared.SchemaError(f"{pointer}: enum must be a non-empty list")
        return _listed([value] if key == "const" else value, draft)
    if key in ("allOf", "anyOf", "oneOf") and (not isinstance(value, list) or not value):
        raise shared.SchemaError(f"{pointer}: {key} must be a non-empty list")
    if key in ("allOf", "anyOf"):
        found = everything(ANY if key == "allOf" else NONE)
        for i, part in enumerate(value):
            for kind, condition in satisfying(part, draft, f"{pointer}/{i}", depth).items():
                found[kind] = conjoin(found[kind], condition) if key == "allOf" else disjoin(found[kind], condition)
        return found
    if key == "oneOf":
        return _one_of(value, draft, pointer, depth)
    if key == "not":
        inner = unnegated(value)
        if inner is not None:  # not, not: the inner schema itself
            return satisfying(inner, draft, f"{pointer}/not", depth)
        # exact where the inner one is a whole kind
        return {kind: _negate_whole(condition) for kind, condition in satisfying(value, draft, pointer, depth).items()}
    if key == "required":
        if not all(isinstance(name, str) for name in value):
            raise shared.SchemaError(f"{pointer}: required must be a list of names")
        return {"object": Objects(required=tuple(value))}
    if key == "properties":
        why = _recurring(value, draft)
        if why is not None:
            return {"object": Inexact(why)}
        return {"object": Objects(properties=dict(value))}
    if key == "patternProperties":
        why = _recurring(value, draft)
        return {"object": Inexact(why) if why is not None else Objects(patterns=dict(value))}
    if key == shared.SOME:
        why = _recurring(value, draft)
        return {"object": Inexact(why) if why is not None else Objects(some=tuple((p, sub) for p, sub in value))}
    if key == "items":
        if isinstance(value, list):
            return {"array": Inexact("items as a tuple has no complement here")}
        why = _recurring(value, draft)
        return {"array": Inexact(why) if why is not None else _normal(Arrays(items=value))}
    if key in ("minItems", "maxItems"):
        count = shared.count_of(value)
        if count is None:
            return {"array": Inexact(f"{key} is not a count")}
        return {"array": _normal(Arrays(low=count) if key == "minItems" else Arrays(high=count))}
    if key == "uniqueItems":
        return {} if value is False else {"array": Inexact("uniqueItems has no complement here")}
    if key in ("minLength", "maxLength"):
        count = shared.count_of(value)
        if count is None:
            return {"string": Inexact(f"{key} is not a count")}
        return {"string": Strings(low=count) if key == "minLength" else Strings(high=count)}
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return {"number": _bound(key, value, schema)}
    if key == "format":
        return {"string": Inexact(f"format {value!r}")} if draft.format_assertion else {}
    if key in _KIND_OF:
        return {_KIND_OF[key]: Inexact(f"{key} has no complement here")}
    if key in _ANY_KIND:
        return everything(Inexact(f"{key} has no complement here"))
    return {}  # not a JSON Schema keyword: an annotation


def _one_of(branches: list[Any], draft: Draft, pointer: str, depth: int) -> Kinds:
    """The values exactly one branch accepts, per kind, where that is simple: the
    one branch that accepts some of the kind; none where two accept all of it; the
    values one branch does not accept where another accepts all; objects of
    branches no object satisfies two of (tagged variants), as for ``anyOf``
    (else inexact)."""
    conditions: dict[str, list[Condition]] = {kind: [] for kind in KINDS}
    holding: dict[str, list[Any]] = {kind: [] for kind in KINDS}  # the branches, beside their conditions
    for i, branch in enumerate(branches):
        for kind, condition in satisfying(branch, draft, f"{pointer}/{i}", depth).items():
            if condition != NONE:
                conditions[kind].append(condition)
                holding[kind].append(branch)
    found: Kinds = {}
    for kind, listed in conditions.items():
        whole = sum(condition == ANY for condition in listed)
        if len(listed) <= 1:
            found[kind] = listed[0] if listed else NONE
        elif whole >= 2:
            found[kind] = NONE  # every value of the kind matches two branches
        elif whole == 1 and len(listed) == 2:
            found[kind] = _negate_whole(next(condition for condition in listed if condition != ANY))
        elif kind == "object" and whole == 0 and _objects_apart(holding[kind], draft):
            found[kind] = listed[0]
            for condition in listed[1:]:
                found[kind] = disjoin(found[kind], condition)
        else:
            found[kind] = Inexact("oneOf with branches that overlap has no complement here")
    return found


MAX_APART_BRANCHES = 16
"""Branches of one ``oneOf`` whose objects ``_one_of`` tells apart pairwise (120
questions); past it, inexact."""


def _objects_apart(branches: list[Any], draft: Draft) -> bool:
    """Whether no object satisfies two of ``branches`` (proved)."""
    from schema2grammar import disjoint  # (it reads conditions from here)

    if len(branches) > MAX_APART_BRANCHES:
        return False
    return all(disjoint.objects_apart(a, b, draft) for i, a in enumerate(branches) for b in branches[i + 1:])


def _recurring(properties: Any, draft: Draft) -> str | None:
    """Why the complement of these property (or ``items``) schemas might not end
    (None: it ends). A property's complement holds its schema negated, references
    and all, and reading a negated reference complements the target's properties
    in turn: that ends unless a chain of local references comes back to a target
    (depth first, each target once), or leaves what ``Draft.resolve`` follows."""
    finished = draft.ending
    path: list[str] = []  # the targets being walked, outermost first
    pending = [_references_in(properties)]  # per level: the references left to follow there
    followed = 0
    while pending:
        if not pending[-1]:
            pending.pop()
            if path:
                finished.add(path.pop())
            continue
        target = pending[-1].pop()
        if target in finished:
            continue
        if target in path:
            return f"$ref {target!r} inside leads back to itself: its complement would recur without end"
        if not target.startswith("#") or draft.resolve is None:
            return f"$ref {target!r} inside is not followed here"
        followed += 1
        if followed > MAX_REFERENCES_FOLLOWED:
            return f"the schemas inside lead through more than {MAX_REFERENCES_FOLLOWED} references"
        try:
            resolved = draft.resolve(target)
        except ValueError:  # SchemaError: points to nothing, which the translation reports where it is
            return f"$ref {target!r} inside points to nothing"
        path.append(target)
        pending.append(_references_in(resolved))
    return None


def _references_in(schema: Any) -> list[str]:
    """Every ``$ref`` string inside ``schema``."""
    found: list[str] = []
    work = [schema]
    while work:
        item = work.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                found.append(item["$ref"])
            work.extend(item.values())
        elif isinstance(item, list):
            work.extend(item)
    return found


def _types(value: Any, nullable: bool, pointer: str) -> Kinds:
    listed = value if isinstance(value, list) else [value]
    for json_type in listed:
        if json_type not in ("integer", *KINDS):
            raise shared.SchemaError(f"{pointer}: unknown type {json_type!r}")
    if nullable:
        listed = [*listed, "null"]
    found: Kinds = {kind: ANY if kind in listed else NONE for kind in KINDS}
    if "number" not in listed and "integer" in listed:
        found["number"] = Numbers(integral=True)
    return found


def _listed(values: list[Any], draft: Draft) -> Kinds:
    """The values an ``enum`` (or ``const``) lists, per kind."""
    found: Kinds = everything(NONE)
    strings = frozenset(v for v in values if isinstance(v, str))
    booleans = frozenset(v for v in values if isinstance(v, bool))
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if None in values:
        found["null"] = ANY
    if booleans:
        found["boolean"] = _normal(booleans)
    if strings:
        found["string"] = Strings(values=strings)
    if numbers:
        whole = [v for v in numbers if isinstance(v, int) or (draft.float_integers and v == v and float(v).is_integer())]
        if len(whole) < len(numbers):
            found["number"] = Inexact("a listed number that is not an integer")
        elif any(abs(v) > regexes.MAX_NUMBER_BOUND for v in whole):  # its neighbours reach json.dumps's exponents
            found["number"] = Inexact(f"a listed integer beyond {regexes.MAX_NUMBER_BOUND:.0e}")
        else:
            found["number"] = Numbers(values=frozenset(int(v) for v in whole))
    for kind, python in (("object", dict), ("array", list)):
        if any(isinstance(v, python) for v in values):
            found[kind] = Inexact(f"a listed {kind}")
    return found


def _bound(key: str, value: Any, schema: dict[str, Any]) -> Condition:
    """A number bound as ``Numbers``, when it is an integer within
    ``regexes.MAX_NUMBER_BOUND`` (draft 4: exclusive by ``exclusiveMinimum: true``
    beside it)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    if not number or (isinstance(value, float) and not value.is_integer()) or abs(value) > regexes.MAX_NUMBER_BOUND:
        return Inexact(f"{key} {value!r}: only integral bounds up to 1e15 complement")
    exclusive = key.startswith("exclusive") or schema.get("exclusive" + key[0].upper() + key[1:]) is True
    bound = (Decimal(int(value)), exclusive)
    return Numbers(low=bound) if key in ("minimum", "exclusiveMinimum") else Numbers(high=bound)


def _negate_whole(condition: Condition) -> Condition:
    """The complement of ``condition`` within its kind, where the conditions spell
    it: all and none swap, booleans are the others, and objects not satisfying
    object conditions are the union of ``object_branches``' ways to fail them."""
    if condition == ANY:
        return NONE
    if condition == NONE:
        return ANY
    if isinstance(condition, frozenset):  # some booleans: the others
        return _normal(frozenset((True, False)) - condition)
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
        return _normal(a & b)
    if isinstance(a, Strings) and isinstance(b, Strings):
        values = b.values if a.values is None else a.values if b.values is None else a.values & b.values
        highs = [h for h in (a.high, b.high) if h is not None]
        return _normal(Strings(values, max(a.low, b.low), min(highs) if highs else None))
    if isinstance(a, Numbers) and isinstance(b, Numbers):
        numbers = b.values if a.values is None else a.values if b.values is None else a.values & b.values
        low = max((x for x in (a.low, b.low) if x is not None), default=None)
        high = min((x for x in (a.high, b.high) if x is not None), key=lambda x: (x[0], not x[1]), default=None)
        return _normal(Numbers(a.integral or b.integral, low, high, numbers))
    if isinstance(a, Arrays) and isinstance(b, Arrays):
        items = b.items if a.items is True else a.items if b.items is True else {"allOf": [a.items, b.items]}
        highs = [h for h in (a.high, b.high) if h is not None]
        return _normal(Arrays(items, max(a.low, b.low), min(highs) if highs else None))
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
        return _normal(a | b)
    if isinstance(a, Strings) and isinstance(b, Strings) and a.values is not None and b.values is not None:
        return Strings(values=a.values | b.values)
    if isinstance(a, Numbers) and isinstance(b, Numbers) and a.values is not None and b.values is not None:
        return Numbers(values=a.values | b.values)
    if isinstance(a, (Objects, ObjectUnion)) and isinstance(b, (Objects, ObjectUnion)):
        return ObjectUnion(tuple(p for c in (a, b) for p in (c.parts if isinstance(c, ObjectUnion) else (c,))))
    return Inexact("a union of ranges")


def _normal(condition: Condition) -> Condition:
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
            within = frozenset(v for v in condition.values if _within(v, condition.low, condition.high))
            return Numbers(values=within) if within else NONE
        return ANY if condition == Numbers() else condition
    return condition


def _within(value: float, low: numbers.Bound | None, high: numbers.Bound | None) -> bool:
    above = low is None or value > low[0] or (value == low[0] and not low[1])
    below = high is None or value < high[0] or (value == high[0] and not high[1])
    return above and below


# -- complements


def string_complement(condition: Strings, low: int, high: int | None) -> list[str] | None:
    """Regexes, as alternatives, of the quoted strings of ``low`` to ``high``
    characters that ``condition`` refuses, in every spelling ([]: none; None: not
    exact here)."""
    if condition.values is not None:
        if (low, high) != (0, None):
            return None
        found = strings_except(sorted(condition.values))
        return None if found is None else [found]
    outside: list[tuple[int, int | None]] = [(0, condition.low - 1)] if condition.low > 0 else []
    if condition.high is not None:
        outside.append((condition.high + 1, None))
    parts = []
    for start, end in outside:
        start = max(start, low)
        end = high if end is None else end if high is None else min(end, high)
        if end is not None and end < start:
            continue
        if start > regexes.MAX_LENGTH_BOUND or (end is not None and end > regexes.MAX_LENGTH_BOUND):
            return None
        parts.append(regexes.string_of_length(start, end))
    return parts


NON_INTEGER = r"-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*|-?[1-9](?:\.[0-9]*[1-9])?e-0*[1-9][0-9]*"
"""Numbers that are not integers, as ``json.dumps`` writes floats: a fraction with
a digit other than 0, or below 1e-4 a one-digit mantissa and a negative exponent
(``1.5e-05``); no spelling of an integer matches."""


def number_complement(condition: Numbers, integers_only: bool, low: numbers.Bound | None = None,
                      high: numbers.Bound | None = None) -> list[str] | None:
    """Regexes, as alternatives, of the numbers (integers only where
    ``integers_only``) between ``low`` and ``high`` that ``condition`` refuses, as
    ``json.dumps`` spells them ([]: none; None: not exact here). Assumes draft 6
    on (``1.0`` an integer)."""
    bounded = low is not None or high is not None
    fractions = [] if integers_only or not (condition.integral or condition.values is not None) else [NON_INTEGER]
    if fractions and bounded:
        return None  # the non-integers within bounds: no regex intersects the two here
    ranges: list[tuple[numbers.Bound | None, numbers.Bound | None]] = []
    if condition.values is not None:
        if len(condition.values) > MAX_EXCLUDED_NUMBERS:
            return None
        previous: int | None = None
        for value in sorted(condition.values):
            ranges.append((None if previous is None else (Decimal(previous), True), (Decimal(value), True)))
            previous = value
        ranges.append(((Decimal(previous), True), None) if previous is not None else (None, None))
    else:
        if condition.low is not None:
            ranges.append((None, (condition.low[0], not condition.low[1])))
        if condition.high is not None:
            ranges.append(((condition.high[0], not condition.high[1]), None))
    parts = list(fractions)
    for start, end in ranges:
        start, end = _tighter_low(start, low), _tighter_high(end, high)
        if integers_only or condition.values is not None:
            first = None if start is None else int(start[0]) + (1 if start[1] else 0)  # integral bounds here
            last = None if end is None else int(end[0]) - (1 if end[1] else 0)
            if first is None or last is None or first <= last:
                parts.append(regexes.integer_spellings(first, last))
        else:
            found = numbers.number_range(start, end)
            if found is not None:
                parts.append(found)
    return parts


def _tighter_low(a: numbers.Bound | None, b: numbers.Bound | None) -> numbers.Bound | None:
    return b if a is None else a if b is None else max(a, b)


def _tighter_high(a: numbers.Bound | None, b: numbers.Bound | None) -> numbers.Bound | None:
    return b if a is None else a if b is None else min(a, b, key=lambda x: (x[0], not x[1]))


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
    if any(key != "not" and key not in _ANNOTATIONS for key in schema):
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


# -- strings other than some, in every spelling


def strings_except(words: list[str]) -> str | None:
    """A quoted JSON string whose decoded text is none of ``words``, in any
    spelling (``regexes.string_except``: ``"\\u00e9"`` is ``"é"``). None past
    ``MAX_EXCLUDED_CHARACTERS``."""
    texts = list(dict.fromkeys(words))
    if sum(map(len, texts)) > MAX_EXCLUDED_CHARACTERS:
        return None
    return regexes.string_except(texts)


# -- finite item domains (uniqueItems)


def finite_values(schema: Any, has_type: Callable[[Any, list[Any]], bool]) -> list[Any] | None:
    """The values ``schema`` accepts when it lists them (``enum``/``const``, maybe
    with ``type``) or is ``boolean``/``null`` typed; None for any other schema."""
    if schema is False:
        return []
    if not isinstance(schema, dict):
        return None
    keys = {key for key in schema if key not in _ANNOTATIONS}
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


def accepts(kinds: Kinds, value: Any, draft: Draft) -> bool | None:
    """Whether the schema ``kinds`` describes accepts ``value`` (None: not known here)."""
    kind = shared.json_type(value)
    condition = kinds["number" if kind == "integer" else kind]
    if condition in (ANY, NONE):
        return condition == ANY
    if isinstance(condition, frozenset):
        return value in condition
    if isinstance(condition, Strings):
        return ((condition.values is None or value in condition.values) and len(value) >= condition.low
                and (condition.high is None or len(value) <= condition.high))
    if isinstance(condition, Numbers):
        whole = isinstance(value, int) or (draft.float_integers and value.is_integer())
        return ((whole or not condition.integral) and (condition.values is None or value in condition.values)
                and _within(value, condition.low, condition.high))
    if isinstance(condition, ObjectUnion):
        found = [accepts({**kinds, "object": part}, value, draft) for part in condition.parts]
        return True if True in found else None if None in found else False
    verdicts: list[bool | None] = []
    if isinstance(condition, Objects):
        verdicts = [name in value for name in condition.required] + [None] * bool(condition.patterns or condition.some)
        verdicts += [accepts(satisfying(sub, draft, f"/properties/{name}"), value[name], draft)
                     for name, sub in condition.properties.items() if name in value]
    elif isinstance(condition, Arrays):
        verdicts = [condition.low <= len(value) and (condition.high is None or len(value) <= condition.high)]
        if condition.items is not True:
            items = satisfying(condition.items, draft, "/items")
            verdicts += [accepts(items, item, draft) for item in value]
    else:
        return None
    return False if False in verdicts else None if None in verdicts else True

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

The conditions themselves and their algebra are ``conditions``'s (re-exported
here); whether two schemas share no object is ``disjoint``'s, which reads schemas
through ``satisfying`` and ``accepts`` as this module hands them over.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from schema2grammar import disjoint, numbers, regexes, shared
from schema2grammar.conditions import (ANY as ANY, KINDS as KINDS, MAX_OBJECT_BRANCHES as MAX_OBJECT_BRANCHES,
                                       NO_CONSTRAINT, NONE as NONE, Arrays as Arrays, Condition as Condition,
                                       Draft as Draft, Inexact as Inexact, Kinds as Kinds, Numbers as Numbers,
                                       ObjectUnion as ObjectUnion, Objects as Objects, Strings as Strings,
                                       array_branches as array_branches, conjoin as conjoin, disjoin as disjoin,
                                       everything as everything, finite_values as finite_values, negate_whole,
                                       normal, object_branches as object_branches, unnegated as unnegated,
                                       value_key as value_key, within_bounds)

MAX_EXCLUDED_CHARACTERS = 256
"""Characters in all the strings one string complement leaves out: the regex walks
their trie (a few hundred regex characters per trie node); past it, inexact."""

MAX_NESTING = 100
"""Schemas nested in one another that ``satisfying`` reads (``not``, ``allOf``,
``anyOf``); deeper is inexact, not a Python stack overflow."""

MAX_EXCLUDED_NUMBERS = 64
"""Integers one number complement leaves out (one range regex per gap); past it,
inexact."""

MAX_REFERENCES_FOLLOWED = 256
"""Reference targets one check that a property's complement ends follows
(``_recurring``); past it, inexact."""

MAX_UNIQUE_VALUES = 8
"""Values an item of a ``uniqueItems`` array may take: the grammar's state is the
set of values used so far, 2**8 = 256 states; past it, ``uniqueItems`` is inexact."""

_READ = frozenset("properties required patternProperties minLength maxLength minimum maximum exclusiveMinimum "
                  "exclusiveMaximum items minItems maxItems uniqueItems".split()) | {shared.SOME}
"""Type keywords ``_keyword`` reads; the others are inexact for their type."""
_KIND_OF = {key: kind for kind, keys in shared.TYPE_KEYWORDS.items() for key in keys if key not in _READ}
_KIND_OF["divisibleBy"] = "number"  # draft 3's multipleOf
_ANY_KIND = frozenset("$dynamicRef $recursiveRef $recursiveAnchor disallow extends".split())
"""Keywords that may constrain every kind: inexact for all."""


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
        if key in ("if", "then", "else", "$ref") or key in NO_CONSTRAINT:
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
        return {kind: negate_whole(condition) for kind, condition in satisfying(value, draft, pointer, depth).items()}
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
        return {"array": Inexact(why) if why is not None else normal(Arrays(items=value))}
    if key in ("minItems", "maxItems"):
        count = shared.count_of(value)
        if count is None:
            return {"array": Inexact(f"{key} is not a count")}
        return {"array": normal(Arrays(low=count) if key == "minItems" else Arrays(high=count))}
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
            found[kind] = negate_whole(next(condition for condition in listed if condition != ANY))
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
    if len(branches) > MAX_APART_BRANCHES:
        return False
    return all(objects_apart(a, b, draft) for i, a in enumerate(branches) for b in branches[i + 1:])


def objects_apart(a: Any, b: Any, draft: Draft) -> bool:
    """Whether no object satisfies both schemas (proved; False: not known), as
    ``disjoint`` tells from the kinds this module reads."""
    return disjoint.objects_apart(a, b, draft, satisfying, accepts)


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
        found["boolean"] = normal(booleans)
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


# -- strings other than some, in every spelling


def strings_except(words: list[str]) -> str | None:
    """A quoted JSON string whose decoded text is none of ``words``, in any
    spelling (``regexes.string_except``: ``"\\u00e9"`` is ``"é"``). None past
    ``MAX_EXCLUDED_CHARACTERS``."""
    texts = list(dict.fromkeys(words))
    if sum(map(len, texts)) > MAX_EXCLUDED_CHARACTERS:
        return None
    return regexes.string_except(texts)



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
                and within_bounds(value, condition.low, condition.high))
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

"""``not``, ``if``/``then``/``else``, ``contains`` and ``uniqueItems`` in the grammar.

Each is enforced exactly where the values a schema refuses are a union of schemas
the translator enforces (``complement``), and reported approximated otherwise,
with the grammar then wider (the keyword, or the part of it that has no exact
complement, left out):

- ``not``: per type of the place, that type's values the negated schema refuses.
- ``if``/``then``/``else``: the union of (if and then) and (not if, and else), each
  merged with the schema's own keywords as ``allOf`` merges.
- ``contains``: each item either matches the contains-schema or its complement,
  and the rules count the matches (``minContains``/``maxContains``).
- ``uniqueItems``: where every item takes one of a few listed values, the rules
  remember the set of values used.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Callable, Iterator

from schema2grammar import complement, conditions, ecma, shared, string_sets
from schema2grammar.conditions import ANY, NONE, Inexact
from schema2grammar.core import TranslatorCore
from schema2grammar.report import ENFORCED
from schema2grammar.shared import CONDITIONAL

MAX_SPLIT_RULES = 4_000
"""Rules one ``not`` or ``if`` may add: each branch copies the object grammar it
splits (one per way to fail, then and else), so nested ones multiply; past it the
keyword is reported approximated and left out. At 2,000, 38 MaskBench schemas were
cut, at 4,000 19; the 19 set free compile at most 0.5 s slower."""

MAX_NESTED_CONDITIONALS = 6
"""``if``s one ``allOf`` merges at a place: each after the first goes into both
branches of the one before, so the branches nest that deep (some 8 places each, of
``MAX_DEPTH``) and copy the object's grammar (the ``MAX_SPLIT_RULES`` budget is
spent at 8); past it, or where the place is already nested too deep for them, only
the first is kept (reported). Of the 24 MaskBench schemas with several, 17 have at most 6 at a place."""

NESTING_PER_CONDITIONAL = 8
"""Places of nesting one nested ``if`` takes (``node``, ``merge``, the branch)."""

MAX_CONTAINS_STATES = 2_000
"""Rules of one ``contains`` array: (items written) x (matches counted); past it,
``contains`` is reported approximated."""

_BEFORE_TYPES = ("const", "enum", "anyOf", "oneOf", "allOf", "if", "$ref", "dependentSchemas", "dependencies")
"""Keywords ``body`` handles before it splits a place by type (``not`` aside)."""


# -- not


def negation(t: TranslatorCore, schema: dict[str, Any], pointer: str) -> str:
    """A schema object with ``not``: its other keywords, less what ``not`` refuses."""
    notes: list[str] = []
    start = len(t.report.entries)
    checked(schema["not"], f"{pointer}/not")
    rest = {k: v for k, v in schema.items() if k != "not"}
    inner = conditions.unnegated(schema["not"])
    if inner is not None:  # not, not: the inner schema itself, beside the others
        checked(inner, f"{pointer}/not/not")
        t.report.add(pointer, "not", ENFORCED, "a not inside a not: the inner schema")
        t.report.add(f"{pointer}/not", "not", ENFORCED, "a not inside a not: the inner schema")
        return t.node({"allOf": [rest, inner]} if rest else inner, pointer)
    try:
        text = t.within_budget(MAX_SPLIT_RULES,
                               lambda: negated_body(t, rest, schema["not"], pointer, f"{pointer}/not", notes))
    except shared.NoValue:
        _report_negation(t, pointer, notes)
        raise
    if text is None:
        t.approximate(pointer, "not", f"the complement (a copy of the object grammar per way to fail) would take "
                      f"more than {MAX_SPLIT_RULES} rules: not enforced")
        return t.body(rest, pointer)
    _report_negation(t, pointer, notes)
    t.collapse_report(start)  # the complement's objects may say of some property (shared.SOME) what not could not
    return text


def _report_negation(t: TranslatorCore, pointer: str, notes: list[str]) -> None:
    if notes:
        t.approximate(pointer, "not", "; ".join(notes) + ": those values are not refused")
    else:
        t.report.add(pointer, "not", ENFORCED, "by complement")


def negated_body(t: TranslatorCore, schema: dict[str, Any], negated: Any, pointer: str, where: str,
                 notes: list[str]) -> str:
    """``schema``'s type branches (as ``body`` makes them), each less the values
    ``negated`` (written at ``where``) accepts; ``notes`` gets what could not be
    taken out exactly."""
    kinds = complement.satisfying(negated, draft_of(t), where)
    start = len(t.report.entries)
    branches: list[str] = []
    empty: shared.NoValue | None = None  # the last type left out, for the traceback
    for json_type in t.types(schema, pointer):
        try:
            branches.append(_negated_type(t, json_type, schema, kinds, pointer, notes, negated, where))
        except shared.NoValue as exc:  # not leaves none of that type
            empty = exc
    t.unknown_keywords(schema, pointer)
    t.collapse_report(start)  # a type's keywords, reported once for it and once per branch of its complement
    if not branches:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every value the other keywords allow") from empty
    return " | ".join(branches)


def _negated_type(t: TranslatorCore, json_type: str, schema: dict[str, Any], kinds: conditions.Kinds,
                  pointer: str, notes: list[str], negated: Any, where: str) -> str:
    """The values of one type that ``schema`` accepts and the negated schema
    (``kinds``; ``negated``, written at ``where``) refuses."""
    kind = "number" if json_type == "integer" else json_type
    condition = kinds[kind]

    def plain() -> str:
        return str(getattr(t, "type_" + json_type)(schema, pointer))

    if kind == "object" and condition not in (ANY, NONE) and complement.objects_apart(_of_type(schema, "object"),
                                                                                     negated, draft_of(t)):
        return plain()  # no object here satisfies the negated schema: nothing to take out
    if isinstance(condition, (conditions.Objects, conditions.ObjectUnion)):  # the branches report the keywords
        return _negated_objects(t, schema, condition, pointer, notes, plain)
    if isinstance(condition, conditions.Arrays):
        return _negated_arrays(t, schema, condition, pointer, notes, plain)
    whole = plain()  # its keywords reported either way
    if condition == NONE:
        return whole
    if condition == ANY:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every {json_type}")
    if isinstance(condition, frozenset):  # booleans
        return " | ".join(t.literal(value) for value in (True, False) if value not in condition)
    pieces = None if isinstance(condition, Inexact) else _scalar_complement(t, json_type, schema, condition, pointer)
    if pieces is None and json_type == "string":
        return _strings_refused(t, schema, negated, pointer, where, notes, whole)
    if pieces is None:
        notes.append(f"{json_type}s: {condition.note}" if isinstance(condition, Inexact)
                     else f"{json_type}s: no exact complement beside this place's {json_type} keywords")
        return whole
    if not pieces:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every {json_type} here")
    regex = "|".join(f"(?:{piece})" for piece in pieces)
    return t.number_terminal(regex, json_type == "integer") if json_type in ("number", "integer") else t.terminal(regex)


def _strings_refused(t: TranslatorCore, schema: dict[str, Any], negated: Any, pointer: str, where: str,
                     notes: list[str], whole: str) -> str:
    """The strings ``schema`` accepts and ``negated`` refuses, as automata over
    characters (``string_sets``), spelled as ``json.dumps`` spells them; ``whole``
    (all of the place's strings), noted, where they cannot be read so."""
    draft = draft_of(t)
    own = {key: schema[key] for key in ("pattern", "minLength", "maxLength", "format") if key in schema}
    try:
        left = string_sets.both(string_sets.of_schema(own, pointer, draft),
                                string_sets.negate(string_sets.of_schema(negated, where, draft)))
        regex = string_sets.spelled(left)
    except ecma.Unsupported as exc:
        notes.append(f"strings: {exc}")
        return whole
    if regex is None:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every string here")
    return t.terminal(f'"{regex}"')


def _scalar_complement(t: TranslatorCore, json_type: str, schema: dict[str, Any], condition: conditions.Condition,
                       pointer: str) -> list[str] | None:
    """Regex alternatives of the strings or numbers ``schema`` accepts and
    ``condition`` refuses; None when they are not exact."""
    if isinstance(condition, conditions.Strings):
        if "pattern" in schema or ("format" in schema and t.format_assertion):  # one terminal: no intersection
            return None
        shortest = t.count_value(schema, "minLength", pointer) or 0
        return complement.string_complement(condition, shortest, t.count_value(schema, "maxLength", pointer))
    assert isinstance(condition, conditions.Numbers)
    if not t.float_integers or "multipleOf" in schema:
        return None
    if json_type == "integer":
        low, high = t.bounds(schema, pointer, integer=True)
        return complement.number_complement(condition, True, None if low is None else (Decimal(low), False),
                                            None if high is None else (Decimal(high), False))
    bounded = any(key in schema for key in shared.TYPE_KEYWORDS["number"])
    found = t.number_bounds(schema, pointer) if bounded else (None, None)
    return None if found is None else complement.number_complement(condition, False, *found)


def _negated_objects(t: TranslatorCore, schema: dict[str, Any], condition: conditions.Objects | conditions.ObjectUnion,
                     pointer: str, notes: list[str], plain: Callable[[], str]) -> str:
    """Objects ``schema`` accepts that lack a name ``condition`` requires, or hold a
    property its schema there refuses: one branch each, merged with ``schema``
    (``plain``, all of them, past ``conditions.MAX_OBJECT_BRANCHES``)."""
    found = conditions.object_branches(condition)
    if found is None:
        notes.append(f"objects: more than {conditions.MAX_OBJECT_BRANCHES} ways to fail a union of object schemas")
        return plain()
    start = len(t.report.entries)
    branches = _merged_branches(t, schema, "object", found, pointer, notes)
    if any(e.keyword == "not" and e.status != ENFORCED for e in t.report.entries[start:]):
        notes.append("objects: a property's value has no exact complement")
    if not branches:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every object here")
    return " | ".join(branches)


def _negated_arrays(t: TranslatorCore, schema: dict[str, Any], condition: conditions.Arrays, pointer: str,
                    notes: list[str], plain: Callable[[], str]) -> str:
    """Arrays ``schema`` accepts with fewer items than ``condition`` needs, more than
    it allows, or an item its ``items`` refuses: one branch each, merged with
    ``schema`` (``plain``, all of them, where the last cannot be built exactly)."""
    branches: list[str] = []
    if condition.items is not True:  # first: where it cannot be built, no other branch is needed
        found = _item_refused(t, _of_type(schema, "array"), condition.items, pointer)
        if found is None:
            notes.append("arrays: an item the items schema refuses is not told apart here")
            return plain()
        if found:
            branches.append(found)
    branches += _merged_branches(t, schema, "array", [[part] for part in conditions.array_branches(condition)],
                                 pointer, notes)
    if not branches:
        raise shared.NoValue(f"{pointer or '#'}: not refuses every array here")
    return " | ".join(branches)


def _of_type(schema: dict[str, Any], json_type: str) -> dict[str, Any]:
    """``schema`` as a place of one type, which a complement's branch is merged with
    (null is decided apart: ``nullable`` left out)."""
    return {**{k: v for k, v in schema.items() if k != "nullable"}, "type": json_type}


def _merged_branches(t: TranslatorCore, schema: dict[str, Any], json_type: str, ways: list[list[dict[str, Any]]],
                     pointer: str, notes: list[str]) -> list[str]:
    """One symbol per way to fail (its parts merged with ``schema`` as a place of
    ``json_type``, as ``allOf`` merges them); a way that leaves no value drops out."""
    place = _of_type(schema, json_type)
    branches: list[str] = []
    for parts in ways:
        merged, exact = t.merged(place, parts, pointer)
        if not exact:
            notes.append(f"{json_type}s: merged with this place's keywords as allOf merges, not exactly")
        try:
            branches.append(t.node(merged, pointer))
        except shared.NoValue:
            continue
    return branches


def _item_refused(t: TranslatorCore, schema: dict[str, Any], refused: Any, pointer: str) -> str | None:
    """The arrays ``schema`` accepts that hold an item ``refused`` (a schema)
    refuses, as ``contains`` builds them ("": none; None: not exact here, or beside
    the place's own ``contains`` or ``uniqueItems``, which count items too)."""
    if schema.get("uniqueItems") is True or ("contains" in schema and t.contains_keyword):
        return None
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", True)
    if isinstance(items, list):  # draft 4-2019: items as a tuple
        prefix, items = items, schema.get("additionalItems", True)
    low = t.count_value(schema, "minItems", pointer) or 0
    high = t.count_value(schema, "maxItems", pointer)
    if high is not None and high < low:
        return ""
    where = f"{pointer}/items"
    start = len(t.report.entries)
    try:
        found = _contains_sequence(t, {"not": refused}, prefix, items, low, high, 1, None, pointer, where)
    except shared.NoValue:
        found = ""
    # the not written here, not by the user (exact when found: the entries are all enforced)
    t.report.entries[start:] = [e for e in t.report.entries[start:] if not (e.keyword == "not" and e.pointer == where)]
    return found


# -- if / then / else


def conditional(t: TranslatorCore, schema: dict[str, Any], pointer: str) -> str:
    """(if and then) or (not if, and else), each with the schema's other keywords;
    ``if`` alone constrains nothing, nor do ``then``/``else`` without it. Past
    ``MAX_SPLIT_RULES`` the schema without them (reported)."""
    rest = {k: v for k, v in schema.items() if k not in CONDITIONAL}
    for key in CONDITIONAL:
        if key in schema:
            checked(schema[key], f"{pointer}/{key}")
    if "then" not in schema and "else" not in schema:
        t.report.add(pointer, "if", ENFORCED, "no then or else: no constraint")
        return t.body(rest, pointer)
    start = len(t.report.entries)
    notes: list[str] = []
    combined: list[str] = []  # "not" when the else branch held one of its own: reported with if
    t.depth += 1  # a branch may hold this schema again (a $ref): nesting, as through node()
    try:
        with lenient(t):  # a merge that is not exact: if is reported, not the merged keywords
            text = t.within_budget(MAX_SPLIT_RULES,
                                   lambda: _conditional_branches(t, schema, rest, pointer, notes, combined))
    finally:
        t.depth -= 1
    if text is None:
        for key in [k for k in CONDITIONAL if k in schema]:
            t.approximate(pointer, key, f"the branches (copies of the schema's grammar) would take more than "
                          f"{MAX_SPLIT_RULES} rules: not enforced")
        return t.body(rest, pointer)
    if t.options.strict:  # the branches' merged keywords were held back: if is what the user wrote
        notes += [f"{e.pointer or '#'}: {e.keyword}: {e.note}"
                  for e in t.report.entries[start:] if e.status != ENFORCED]
    t.collapse_report(start)
    for key in [k for k in CONDITIONAL if k in schema] + combined:
        if notes:
            t.approximate(pointer, key, "; ".join(notes))
        else:
            t.report.add(pointer, key, ENFORCED, "(if and then) or (not if, and else), by complement")
    if not text:
        raise shared.NoValue(f"{pointer or '#'}: neither if-then nor else accepts a value")
    return text


def _conditional_branches(t: TranslatorCore, schema: dict[str, Any], rest: dict[str, Any], pointer: str,
                          notes: list[str], combined: list[str]) -> str:
    """The alternatives of ``conditional`` ("" when neither branch has a value)."""
    branches: list[str] = []
    try:
        merged, exact = t.merged(rest, [schema["if"], schema.get("then", True)], pointer)
        if not exact:
            notes.append("then merged with if and the schema's keywords as allOf merges, not exactly")
        branches.append(t.node(merged, pointer))
    except shared.NoValue:
        pass
    try:
        if schema["if"] is True:
            raise shared.NoValue(f"{pointer or '#'}: if true: else never applies")
        merged, exact = t.merged(rest, [_declaring(schema["if"]), schema.get("else", True)], pointer)
        if not exact:
            notes.append("else merged with the schema's keywords as allOf merges, not exactly")
        if schema["if"] is False:
            branches.append(t.node(merged, pointer))
        elif any(key in merged for key in _BEFORE_TYPES):
            branches.append(_with_negation(t, merged, schema["if"], pointer, notes))
        else:  # not A, and not if: not (A or if)
            combined += ["not"] if "not" in merged else []
            negated = shared.either(merged.pop("not"), schema["if"]) if "not" in merged else schema["if"]
            branches.append(negated_body(t, merged, negated, pointer, f"{pointer}/if", notes))
    except shared.NoValue:
        pass
    return " | ".join(branches)


def _with_negation(t: TranslatorCore, schema: dict[str, Any], negated: Any, pointer: str, notes: list[str]) -> str:
    """``schema`` with ``not: negated``, through ``node`` (for keywords ``body``
    handles before types: enum, anyOf, ...); the verdicts on that ``not`` go to
    ``notes``, and to the report only where ``schema`` has a ``not`` of its own."""
    start = len(t.report.entries)
    if "$ref" in schema and t.ref_alone:  # drafts 3-7 ignore a $ref's siblings: the not goes beside it
        schema = {"allOf": [schema]}
    had = "not" in schema  # then reported as the not of both
    try:
        return t.node({**schema, "not": shared.either(schema["not"], negated) if had else negated}, pointer)
    finally:
        mine = [e for e in t.report.entries[start:] if e.keyword == "not" and _not_placed(e.pointer, pointer)]
        notes += [e.note for e in mine if e.status != ENFORCED]
        if not had:
            t.report.entries[start:] = [e for e in t.report.entries[start:] if e not in mine]


def _not_placed(place: str, pointer: str) -> bool:
    """Whether ``place`` is where ``body`` puts the ``not`` of the schema at
    ``pointer``: there, or in one of its ``anyOf``/``oneOf`` branches."""
    if place == pointer:
        return True
    steps = place[len(pointer) + 1:].split("/") if place.startswith(pointer + "/") else []
    return len(steps) == 2 and steps[0] in ("anyOf", "oneOf") and steps[1].isdecimal()


# -- oneOf


def exclusive(t: TranslatorCore, options: list[Any], branch: Callable[[int], Any], pointer: str) -> tuple[str | None, str]:
    """A ``oneOf`` whose branches may overlap: each branch (``branch(i)``, merged with
    the schema's own keywords) less the values the other options accept, by
    complement, and the ``oneOf`` reported. Where a complement is not exact, past
    ``MAX_SPLIT_RULES`` (each copies the branch's object grammar per way to fail), or
    past a translation limit, nothing is kept: None and the reason, for the caller
    to build the plain union (a wider complement could make a branch wider than it
    is alone).

    Each branch is memoized like a reference: a branch that holds this ``oneOf``
    again (through a ``$ref`` merged with other keywords) is a cycle of rules."""
    start, known, visited = len(t.report.entries), set(t.by_pointer), t.visited
    notes: list[str] = []

    def one(schema: Any, negated: Any, where: str) -> str:
        checked(schema, where)
        if schema is False:
            raise shared.NoValue(f"{where}: the schema false accepts no value")
        schema = {} if schema is True else schema
        key = "oneOf " + json.dumps([schema, negated], sort_keys=True)
        return t.cached(key, lambda: _with_negation(t, schema, negated, where, notes), where)

    def branches() -> str:
        built: list[str] = []
        for i in range(len(options)):
            others = [option for j, option in enumerate(options) if j != i]
            try:
                built.append(one(branch(i), others[0] if len(others) == 1 else {"anyOf": others}, f"{pointer}/oneOf/{i}"))
            except shared.NoValue:
                continue  # no value of this branch is outside the others
        return " | ".join(built)

    reason = f"each branch less what the others accept would take more than {MAX_SPLIT_RULES} rules"
    t.depth += 1  # a branch may hold this schema again (a $ref): nesting, as through node()
    try:
        with lenient(t):  # held back: the plain union is built instead, and reports them
            text = t.within_budget(MAX_SPLIT_RULES, branches)
    except shared.SchemaError as exc:  # a limit: the plain union meets a genuine error again
        text, reason = None, f"building each branch less the others stopped: {exc}"
    finally:
        t.depth -= 1
    if text is not None and t.options.strict:
        notes += [f"{e.pointer or '#'}: {e.keyword}: {e.note}" for e in t.report.entries[start:] if e.status != ENFORCED]
    if text is None or notes:
        del t.report.entries[start:]
        t.forget_cached(known)
        t.visited = visited
        if text is None:
            return None, reason
        return None, "the other branches have no exact complement here: " + "; ".join(notes)
    t.collapse_report(start)
    t.report.add(pointer, "oneOf", ENFORCED, "each branch less what the others accept, by complement")
    if not text:
        raise shared.NoValue(f"{pointer or '#'}: no value matches exactly one branch of oneOf")
    return text, ""


def listed_by_not(t: TranslatorCore, negated: Any, values: list[Any], pointer: str) -> list[Any]:
    """The listed ``values`` that ``negated`` refuses (``enum``/``const`` beside
    ``not``): by their kinds (``complement.accepts``), else by a validator
    (``judge``); a value neither can judge is kept, reported."""
    draft = draft_of(t)
    kinds = complement.satisfying(negated, draft, f"{pointer}/not")
    verdicts = [complement.accepts(kinds, value, draft) for value in values]
    if None in verdicts:  # what the kinds cannot tell, a validator may (judge.py)
        verdicts = [t.judge.accepts(negated, value) if verdict is None else verdict
                    for value, verdict in zip(values, verdicts)]
    if None in verdicts:
        t.approximate(pointer, "not", "a listed value it cannot judge here is kept")
    else:
        t.report.add(pointer, "not", ENFORCED, "the listed values it accepts are left out")
    return [value for value, verdict in zip(values, verdicts) if verdict is not True]


def _declaring(schema: Any) -> Any:
    """The property names ``schema`` declares, each with schema true: merged before
    ``else``, they keep the order the if-then branch writes them in."""
    names = schema.get("properties") if isinstance(schema, dict) else None
    return {"properties": {name: True for name in names}} if isinstance(names, dict) and names else True


def conditional_merge(t: TranslatorCore, merged: dict[str, Any], part: dict[str, Any],
                      pointer: str, nest: bool = False) -> tuple[dict[str, Any], bool]:
    """``part`` to merge into ``merged`` (an ``allOf``): without ``then``/``else``
    that have no ``if`` beside them (no constraint, reported so, and they must not
    pair with another part's ``if``). Where ``merged`` has another ``if``, the
    part's conditional goes into both of ``merged``'s branches when ``nest`` (``(if ?
    then : else)`` and C is ``if ? (then and C) : (else and C)``: each branch
    splits again when it is built); otherwise it is left out (then False: not
    exact, the first one is kept). Before draft 7 they are annotations: left out,
    reported so."""
    if not t.conditional_keywords:
        for key in CONDITIONAL:
            if key in part:
                t.report.add(pointer, key, ENFORCED, "not a keyword before draft 7: an annotation")
        return {k: v for k, v in part.items() if k not in CONDITIONAL}, True
    if "if" not in part or ("then" not in part and "else" not in part):
        for key in CONDITIONAL:
            if key in part:
                t.report.add(pointer, key, ENFORCED, "no constraint without if" if key != "if" else
                             "no then or else: no constraint")
        return {k: v for k, v in part.items() if k not in CONDITIONAL}, True
    if "if" in merged and any(merged.get(k) != part.get(k) for k in CONDITIONAL):
        rest = {k: v for k, v in part.items() if k not in CONDITIONAL}
        if nest:
            later = {k: part[k] for k in CONDITIONAL if k in part}
            for key in ("then", "else"):
                merged[key] = later if merged.get(key, True) in (True, {}) else {"allOf": [merged[key], later]}
        return rest, nest
    return part, True


# -- contains, uniqueItems


def counted_array(t: TranslatorCore, schema: dict[str, Any], prefix: list[Any], items: Any, low: int,
                  high: int | None, pointer: str) -> str | None:
    """The array's rules when ``uniqueItems`` or ``contains`` is enforced (each
    reported); None for the plain sequence."""
    contains = "contains" in schema and t.contains_keyword
    tuple_key = "prefixItems" if "prefixItems" in schema else "items"  # items as a tuple: drafts 4 to 2019-09
    for i, item in enumerate(prefix):
        checked(item, f"{pointer}/{tuple_key}/{i}")
    checked(items, f"{pointer}/{'additionalItems' if isinstance(schema.get('items'), list) else 'items'}")
    counts: list[str] = [key for key in ("minContains", "maxContains") if key in schema]
    if "contains" in schema and not contains:
        t.report.add(pointer, "contains", ENFORCED, "not a keyword before draft 6: an annotation")
    for key in counts:
        if not t.dependent_keywords:
            t.report.add(pointer, key, ENFORCED, "not a keyword before draft 2019-09: an annotation")
        elif not contains:
            t.report.add(pointer, key, ENFORCED, "no constraint without contains")
    if "uniqueItems" in schema and not isinstance(schema["uniqueItems"], bool):
        raise shared.SchemaError(f"{pointer or '#'}: uniqueItems must be a boolean, not {schema['uniqueItems']!r}")
    if schema.get("uniqueItems") is False:
        t.report.add(pointer, "uniqueItems", ENFORCED, "false: no constraint")
    elif "uniqueItems" in schema:
        try:
            found = _unique_sequence(t, prefix, items, low, high, pointer, tuple_key)
        except shared.NoValue:
            t.report.add(pointer, "uniqueItems", ENFORCED, "no array satisfies it here")
            raise
        if found is not None:
            t.report.add(pointer, "uniqueItems", ENFORCED, "the set of values used is the state")
            if contains:
                for key in ["contains", *counts] if t.dependent_keywords else ["contains"]:
                    t.approximate(pointer, key, "not enforced beside uniqueItems")
            return found
    if not contains:
        return None
    low_count = t.count_value(schema, "minContains", pointer) if t.dependent_keywords else None
    high_count = t.count_value(schema, "maxContains", pointer) if t.dependent_keywords else None
    keys = ["contains", *counts] if t.dependent_keywords else ["contains"]
    try:
        found = _contains_sequence(t, schema["contains"], prefix, items, low, high,
                                   1 if low_count is None else low_count, high_count, pointer, f"{pointer}/contains")
    except shared.NoValue:
        for key in keys:
            t.report.add(pointer, key, ENFORCED, "no array satisfies it here")
        raise
    for key in keys:
        if found is None:
            t.approximate(pointer, key, f"not enforced: contains-schema without an exact complement, or past "
                          f"{MAX_CONTAINS_STATES} rules or {shared.MAX_ITEMS_CHAIN} items")
        else:
            t.report.add(pointer, key, ENFORCED, "matching items counted, by complement")
    return found


def _contains_sequence(t: TranslatorCore, contains: Any, prefix: list[Any], items: Any, low: int, high: int | None,
                       low_count: int, high_count: int | None, pointer: str, where: str) -> str | None:
    """``[`` items ``]``, each matching ``contains`` (written at ``where``) or its
    complement, states (items written, matches counted): None when not exact or
    past the limits."""
    if high_count is not None and high_count < low_count:
        raise shared.NoValue(f"{pointer or '#'}: maxContains is below minContains")
    if low > shared.MAX_ITEMS_CHAIN or (high is not None and high > shared.MAX_ITEMS_CHAIN):
        return None
    if high is not None and high_count is not None:
        high_count = min(high_count, high)  # no more matches than items: no rules for them
    loop = max(low, len(prefix), 1) if high is None else high  # from here on, positions are alike
    cap = low_count if high_count is None else high_count  # matches counted up to here
    if (loop + 1) * (cap + 1) > MAX_CONTAINS_STATES:
        return None
    start = len(t.report.entries)
    kinds: dict[int, tuple[str | None, str | None]] = {}  # position (the items' from len(prefix) on) -> (matching, other)
    with lenient(t):  # a merge that is not exact: contains is reported, not the allOf built here
        for k in range(len(prefix) + 1):
            if high is None or k < high:
                kinds[k] = _split_item(t, prefix[k] if k < len(prefix) else items, contains, where)
    exact = all(e.status == ENFORCED for e in t.report.entries[start:] if e.pointer.startswith(where))
    built = [key for key in ("allOf", "not") if not (isinstance(contains, dict) and key in contains)]
    t.report.entries[start:] = [e for e in t.report.entries[start:] if not (e.pointer == where and e.keyword in built)]
    t.collapse_report(start)
    if not exact:
        return None

    def moves(state: tuple[int, int]) -> list[tuple[str, tuple[int, int]]]:
        k, c = state
        if high is not None and k >= high:
            return []
        match, other = kinds[min(k, len(prefix))]
        after = k + 1 if high is not None or k < loop else loop
        found = []
        if match is not None and (high_count is None or c < high_count):
            found.append((match, (after, min(c + 1, cap) if high_count is None else c + 1)))
        if other is not None:
            found.append((other, (after, c)))
        return found

    def closes(state: tuple[int, int]) -> bool:
        return state[0] >= low and state[1] >= low_count

    states = [(k, c) for k in range(loop, -1, -1) for c in range(cap, -1, -1)]
    return _state_rules(t, states, moves, closes, lambda state: state[0] > 0, (0, 0), pointer)


def _split_item(t: TranslatorCore, item: Any, contains: Any, where: str) -> tuple[str | None, str | None]:
    """An item's symbol when it matches ``contains``, and when it does not (None:
    no such item)."""
    found: list[str | None] = []
    negated = conditions.unnegated(contains)  # contains is {"not": inner}: inner is its complement
    for sub in (contains, {"not": contains} if negated is None else negated):
        schema = sub if item is True or item == {} else {"allOf": [item, sub]}
        try:
            found.append(t.node(schema, where))
        except shared.NoValue:
            found.append(None)
    return found[0], found[1]


def _unique_sequence(t: TranslatorCore, prefix: list[Any], items: Any, low: int, high: int | None,
                     pointer: str, tuple_key: str) -> str | None:
    """``[`` items ``]`` where each item is one of a few listed values and none
    repeats: the state is the set of values used (its size is the position).
    None (reported) when an item may take more than ``MAX_UNIQUE_VALUES`` values."""
    rest_key = "additionalItems" if tuple_key == "items" and prefix else "items"
    schemas = list(prefix[:high]) if high is not None and high <= len(prefix) else [*prefix, items]
    listed = [conditions.finite_values(schema, t.has_type) for schema in schemas]
    domain: dict[str, Any] = {}
    for values in listed:
        for value in values or []:
            domain.setdefault(conditions.value_key(value), value)
    if any(values is None for values in listed) or len(domain) > complement.MAX_UNIQUE_VALUES:
        t.approximate(pointer, "uniqueItems", f"not enforced: enforced only where every item is one of at most "
                      f"{complement.MAX_UNIQUE_VALUES} listed values (enum, const, boolean, null)")
        return None
    for i, schema in enumerate(schemas):  # their keywords reported (the symbols are the values')
        try:
            t.node(schema, f"{pointer}/{tuple_key}/{i}" if i < len(prefix) else f"{pointer}/{rest_key}")
        except shared.NoValue:
            pass
    keys = list(domain)
    symbols = [t.constant(domain[key]) for key in keys]
    allowed = [frozenset(keys.index(conditions.value_key(v)) for v in values or []) for values in listed]

    def moves(used: frozenset[int]) -> list[tuple[str, frozenset[int]]]:
        k = len(used)
        if high is not None and k >= high:
            return []
        return [(symbols[v], used | {v}) for v in sorted(allowed[min(k, len(schemas) - 1)] - used)]

    def closes(used: frozenset[int]) -> bool:
        return len(used) >= low

    subsets = [frozenset(v for v in range(len(keys)) if mask >> v & 1) for mask in range(2 ** len(keys))]
    states = sorted(subsets, key=len, reverse=True)
    return _state_rules(t, states, moves, closes, lambda used: bool(used), frozenset(), pointer)


def _state_rules(t: TranslatorCore, states: list[Any], moves: Any, closes: Any, written: Any, first: Any,
                 pointer: str) -> str:
    """One rule per state that can still reach ``]``: ``]`` where ``closes``, an
    item and the next state for each of ``moves`` (a comma first once ``written``).
    ``states`` come each after every state a move leads to (or itself)."""
    open_, close, comma = t.punct("["), t.punct("]"), t.punct(",")
    alive: dict[Any, str] = {}
    for state in states:  # a state's successors first: alive ones are known (a loop on itself never closes)
        if closes(state) or any(target in alive for _, target in moves(state)):
            alive[state] = t.reserve("items")
    if first not in alive:
        raise shared.NoValue(f"{pointer or '#'}: no array satisfies the item constraints")
    for state, name in alive.items():
        options = [close] if closes(state) else []
        options += [f"{comma if written(state) else ''} {item} {alive[target]}".strip()
                    for item, target in moves(state) if target in alive]
        t.rules[name] = " | ".join(options)
    return f"{open_} {alive[first]}"


@contextmanager
def lenient(t: TranslatorCore) -> Iterator[None]:
    """Strict mode's errors held back while building schemas the user did not
    write (a merge for ``contains`` or ``if``): the keyword is then reported, by
    its own name, from what the report says of them."""
    t.lenient += 1
    try:
        yield
    finally:
        t.lenient -= 1


def checked(schema: Any, pointer: str) -> None:
    """A ``SchemaError`` at ``pointer`` unless ``schema`` is a schema (an object or a
    boolean) whose keywords have the right shapes: before a merge reads it."""
    if not isinstance(schema, (bool, dict)):
        raise shared.SchemaError(f"{pointer}: a schema must be an object or a boolean, not {schema!r}")
    if isinstance(schema, dict):
        shared.check_shapes(schema, pointer)


def draft_of(t: TranslatorCore) -> conditions.Draft:
    """What ``complement`` needs of the document being translated."""
    return conditions.Draft(t.float_integers, t.format_assertion, lambda target: t.resolve(target, ""), t.ref_alone,
                            t.conditional_keywords)

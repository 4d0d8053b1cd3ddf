"""``unevaluatedProperties`` and ``unevaluatedItems`` (2019-09 on) in the grammar.

Each judges what no adjacent keyword evaluated: the names ``properties``,
``patternProperties`` and ``additionalProperties`` cover (the items ``prefixItems``,
``items`` and ``additionalItems`` cover), directly or through the in-place
applicators that *passed* (``allOf``, ``anyOf``, ``oneOf``, ``if``/``then``/``else``,
``dependentSchemas``, ``$ref``; never ``not``). Which applicators pass depends on the
instance, so a schema holding the keyword is read as the union of *alternatives*:
conjuncts that say which branches pass (any non-empty subset of an ``anyOf``'s, one
``oneOf`` branch, ``if`` and ``then`` or ``not if`` and ``else``, a dependent name
present or not) and what those branches evaluate. Where every branch evaluates the
same, the applicator is left as it is. In each alternative the keyword becomes
``additionalProperties`` beside the evaluated names (``items`` after the evaluated
prefix), merged as ``allOf`` merges; an alternative whose branches pass evaluates at
least what it says, and the alternative naming exactly the branches that pass
evaluates exactly that, so the union is exact wherever each merge is.

Not known before the instance, reported approximated (the keyword then constrains
nothing): ``$dynamicRef``/``$recursiveRef`` (what they evaluate is resolved at run
time), ``contains`` beside ``unevaluatedItems`` in 2019-09 (whether it evaluates
the items it matches is not said there; 2020-12 says so, and there an item after
the evaluated prefix must match a ``contains`` of the alternative or satisfy the
keyword), an in-place ``$ref`` that recurs or leaves the document, and more than
``MAX_UNEVALUATED_ALTERNATIVES`` alternatives.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from schema2grammar import applicators, complement, shared
from schema2grammar.core import TranslatorCore
from schema2grammar.report import APPROXIMATED, ENFORCED, ReportEntry

MAX_UNEVALUATED_ALTERNATIVES = 64
"""Alternatives one place holding ``unevaluated*`` may split into (an ``anyOf`` of n
branches that evaluate differently gives up to 2**n - 1, and splits multiply):
each is a copy of the place's grammar; past it the keyword is reported approximated."""

PROPERTIES = "unevaluatedProperties"
ITEMS = "unevaluatedItems"
KEYWORDS = (PROPERTIES, ITEMS)


class NotStatic(Exception):
    """What a schema evaluates is not known before the instance (or too costly to
    split on): ``keyword`` (None: both) is reported approximated, with ``note``."""

    def __init__(self, note: str, keyword: str | None = None) -> None:
        super().__init__(note)
        self.note = note
        self.keyword = keyword


@dataclass(frozen=True)
class Evaluated:
    """The property names and patterns, the leading items and the items matching
    some ``contains`` schemas (as JSON text) that some branches evaluate
    (``every_*``: all of them)."""

    names: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()
    every_name: bool = False
    items: int = 0
    every_item: bool = False
    matched: frozenset[str] = frozenset()

    def union(self, other: Evaluated) -> Evaluated:
        return Evaluated(self.names | other.names, self.patterns | other.patterns, self.every_name or other.every_name,
                         max(self.items, other.items), self.every_item or other.every_item, self.matched | other.matched)

    def covers(self, other: Evaluated) -> bool:
        """Whether everything ``other`` evaluates is evaluated here too."""
        names = self.every_name or (not other.every_name and self.names >= other.names and self.patterns >= other.patterns)
        return names and (self.every_item or (not other.every_item and self.items >= other.items
                                              and self.matched >= other.matched))


NOTHING = Evaluated()
Alternative = tuple[tuple[Any, ...], Evaluated]
"""Conjuncts (schemas that hold where this alternative applies) and what they evaluate."""


def present(t: TranslatorCore, schema: Any) -> bool:
    """Whether ``schema`` holds ``unevaluated*`` as keywords (2019-09 on; before,
    unknown keywords: annotations)."""
    return isinstance(schema, dict) and t.dependent_keywords and any(key in schema for key in KEYWORDS)


def evaluated_place(t: TranslatorCore, schema: dict[str, Any], pointer: str) -> str:
    """The alternatives of a schema object holding ``unevaluated*``: the union of
    its alternatives, each with the keyword judging what that one leaves unevaluated."""
    start = len(t.report.entries)
    rest = {k: v for k, v in schema.items() if k not in KEYWORDS}
    found, live = _alternatives_within(t, schema, rest, _live_keywords(t, schema, pointer), pointer)
    if any(_judged(schema, live, evaluated, conjuncts) for conjuncts, evaluated in found):
        return _translated(t, schema, live, found, start, pointer)
    text = t.node(rest, pointer) if "$ref" in rest else t.body(rest, pointer)  # a $ref is place()'s to follow
    for key in live:
        t.report.add(pointer, key, ENFORCED, "adjacent keywords evaluate every property or item it would judge")
    t.collapse_report(start)
    return text


def _live_keywords(t: TranslatorCore, schema: dict[str, Any], pointer: str) -> list[str]:
    """The ``unevaluated*`` keywords ``schema`` holds that may refuse something (true
    is reported, and constrains nothing); each a well-formed schema, else a
    ``SchemaError`` naming it (the grammar builds it at other places)."""
    live: list[str] = []
    for key in [key for key in KEYWORDS if key in schema]:
        applicators.checked(schema[key], f"{pointer}/{key}")
        complement.satisfying(schema[key], applicators.draft_of(t), f"{pointer}/{key}")
        if schema[key] is True or schema[key] == {}:
            t.report.add(pointer, key, ENFORCED, "true: no constraint")
        else:
            live.append(key)
    return live


def _alternatives_within(t: TranslatorCore, schema: dict[str, Any], rest: dict[str, Any], wanted: list[str],
                         pointer: str) -> tuple[list[Alternative], list[str]]:
    """The alternatives of ``rest`` for the keywords that can be enforced; the
    others are reported approximated (they then constrain nothing)."""
    while wanted:
        expansion = _Expansion(t, wanted)
        try:
            found = expansion.alternatives(rest, 0)
            _check_tuples(found)
        except NotStatic as exc:
            dropped = [key for key in wanted if exc.keyword in (None, key)]
            for key in dropped:
                t.approximate(pointer, key, f"not enforced: {exc.note}")
            wanted = [key for key in wanted if key not in dropped]
            continue
        if expansion.overlapping:
            t.approximate(pointer, "oneOf", "split into its branches, treated as anyOf: a value matching several is not refused")
        return found, wanted
    return [((rest,), NOTHING)], wanted


def _check_tuples(found: list[Alternative]) -> None:
    """Tuples written both ways in one alternative (``prefixItems`` and an ``items``
    list): the grammar reads one of them, so the evaluated prefix is not said."""
    for conjuncts, _ in found:
        dicts = [c for c in conjuncts if isinstance(c, dict)]
        if any(isinstance(c.get("items"), list) for c in dicts) and any("prefixItems" in c for c in dicts):
            raise NotStatic("tuples written both as prefixItems and as items lists", ITEMS)


def _judged(schema: dict[str, Any], live: list[str], evaluated: Evaluated, conjuncts: tuple[Any, ...]) -> dict[str, Any]:
    """The schema that holds the ``live`` keywords to what ``evaluated`` leaves
    out: ``additionalProperties`` beside the evaluated names and patterns (each
    with schema true), ``items`` after the evaluated prefix ({} when nothing is left)."""
    judged: dict[str, Any] = {}
    if PROPERTIES in live and not evaluated.every_name:
        if evaluated.names:
            judged["properties"] = {name: True for name in sorted(evaluated.names)}
        if evaluated.patterns:
            judged["patternProperties"] = {pattern: True for pattern in sorted(evaluated.patterns)}
        judged["additionalProperties"] = schema[PROPERTIES]
    if ITEMS in live and not evaluated.every_item:
        as_list = any(isinstance(c, dict) and isinstance(c.get("items"), list) for c in conjuncts)
        if evaluated.items:
            judged["items" if as_list else "prefixItems"] = [True] * evaluated.items
        judged["additionalItems" if as_list and evaluated.items else "items"] = _unmatched(evaluated, schema[ITEMS])
    return judged


def _unmatched(evaluated: Evaluated, judge: Any) -> Any:
    """What an item after the evaluated prefix must satisfy: match a ``contains``
    that evaluates it, or satisfy ``unevaluatedItems``."""
    matching = [json.loads(text) for text in sorted(evaluated.matched)]
    if not matching:
        return judge
    options = matching if judge is False else [*matching, judge]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _translated(t: TranslatorCore, schema: dict[str, Any], live: list[str], found: list[Alternative], start: int,
                pointer: str) -> str:
    """Each alternative merged with what judges its unevaluated part, built at
    ``pointer``; reported once per keyword the place holds (the entries from
    ``start`` on are this place's)."""
    branches: list[str] = []
    inexact: list[str] = []
    with applicators.lenient(t):  # strict mode blames the keyword the user wrote, below
        for conjuncts, evaluated in found:
            judged = _judged(schema, live, evaluated, conjuncts)
            try:
                merged, exact = t.merged({}, [*conjuncts, judged] if judged else list(conjuncts), pointer)
                if not exact:
                    inexact.append("an alternative merged as allOf merges, not exactly")
                branches.append(t.node(merged, pointer))
            except shared.NoValue:
                continue  # the branches it names cannot pass together
    _report_place(t, schema, live, start, inexact, pointer)
    if not branches:
        raise shared.NoValue(f"{pointer or '#'}: no alternative of the schema accepts a value")
    return " | ".join(branches)


_SPLIT_NOTE = "split by the branches that pass, each with what it evaluates"
_BUILT = {"additionalProperties": PROPERTIES, "patternProperties": PROPERTIES, "properties": PROPERTIES,
          "prefixItems": ITEMS, "items": ITEMS, "additionalItems": ITEMS, "not": "if"}
"""Keywords the alternatives hold that the place may not: reported (where not
exact) under the keyword that made them (a ``not`` is ``if``'s failing branch)."""


def _report_place(t: TranslatorCore, schema: dict[str, Any], live: list[str], start: int, inexact: list[str],
                  pointer: str) -> None:
    """The place's own keywords, once each: those the alternatives took apart
    (``not`` built for ``if`` reported as ``if``), and the ``unevaluated*`` ones."""
    kept: list[ReportEntry] = []
    for entry in t.report.entries[start:]:
        built = entry.pointer == pointer and entry.keyword in _BUILT and entry.keyword not in schema
        if not built:
            kept.append(entry)
        elif entry.status != ENFORCED:  # the user wrote none of it: blamed on what made it
            blamed = _BUILT[entry.keyword]
            kept.append(_relabelled(entry, blamed if blamed in live or blamed in schema else live[0]))
    t.report.entries[start:] = kept
    for key in schema:
        if key in shared.DEFINITIONS:
            t.report.add(pointer, key, ENFORCED, "definitions, used through $ref")
        elif key == "$ref":
            t.report.add(pointer, key, ENFORCED, "followed; what its target evaluates counts")
        elif key == "allOf":
            t.report.add(pointer, key, APPROXIMATED if inexact else ENFORCED, inexact[0] if inexact else "merged")
        elif key in ("anyOf", "oneOf", "if", "then", "else", "dependentSchemas"):
            t.report.add(pointer, key, ENFORCED, _SPLIT_NOTE)
    loose = [f"{e.pointer or '#'}: {e.keyword}: {e.note}" for e in t.report.entries[start:] if e.status != ENFORCED]
    if t.options.strict and loose:
        t.approximate(pointer, live[0], "; ".join(loose))
    for key in live:
        if inexact:
            t.approximate(pointer, key, inexact[0])
        else:
            t.report.add(pointer, key, ENFORCED, "per alternative of the branches that pass: "
                         + ("what no adjacent keyword evaluates" if key == PROPERTIES else "the items after those evaluated"))
    t.collapse_report(start)


def _relabelled(entry: ReportEntry, keyword: str) -> ReportEntry:
    """``entry`` under another keyword (a ``not`` the split built for ``if``)."""
    return ReportEntry(entry.pointer, keyword, entry.status, entry.note, entry.narrower)


def expanded_part(t: TranslatorCore, part: dict[str, Any], pointer: str) -> list[Any]:
    """An ``allOf`` part holding ``unevaluated*`` as the parts that mean what it
    means on its own: its one alternative's conjuncts and the schema that judges
    what they leave out (several alternatives: an ``anyOf`` of them), so that the
    merge holds it to its own evaluations, not to its siblings' ("cousins")."""
    rest = {k: v for k, v in part.items() if k not in KEYWORDS}
    alternatives, live = _alternatives_within(t, part, rest, _live_keywords(t, part, pointer), pointer)
    for key in live:
        t.report.add(pointer, key, ENFORCED, "judges what its own schema evaluates")
    built: list[list[Any]] = []
    for conjuncts, evaluated in alternatives:
        judged = _judged(part, live, evaluated, conjuncts)
        built.append([*conjuncts, judged] if judged else list(conjuncts))
    return built[0] if len(built) == 1 else [{"anyOf": [{"allOf": conjuncts} for conjuncts in built]}]


class _Expansion:
    """The alternatives of schemas, for the ``wanted`` keywords' kinds."""

    def __init__(self, t: TranslatorCore, wanted: list[str]) -> None:
        self.t = t
        self.wanted = wanted
        self.stack: list[str] = []  # in-place references being followed
        self.overlapping = False  # a oneOf split whose branches' types may overlap
        declared = t.root.get("$schema") if isinstance(t.root, dict) else None
        self.contains_unsaid = isinstance(declared, str) and "/draft/2019-09/" in declared

    def alternatives(self, schema: Any, depth: int) -> list[Alternative]:
        """``schema`` as a union of alternatives: an instance ``schema`` accepts
        satisfies some alternative's conjuncts, and then evaluates at least what it
        says; the alternative of the branches that pass says exactly that."""
        if depth > complement.MAX_NESTING:
            raise NotStatic(f"in-place applicators nested more than {complement.MAX_NESTING} deep")
        if schema is True or schema == {}:
            return [((), NOTHING)]
        if not isinstance(schema, dict):
            return [((schema,), NOTHING)]  # false, or malformed: the merge says which
        own = [key for key in KEYWORDS if key in schema]  # kept whole: the merge holds it to its own evaluations
        if own:
            return [((schema,), self.judging_itself(schema, own, depth))]
        for key in ("$dynamicRef", "$recursiveRef"):
            if key in schema:
                raise NotStatic(f"{key} evaluates what it resolves to, which is known only at run time")
        base = {k: v for k, v in schema.items() if k not in shared.DEFINITIONS}
        factors: list[list[Alternative]] = []
        if "$ref" in base and not self.t.ref_alone:
            factors.append(self.referenced(base.pop("$ref"), depth))
        evaluated = self.own(base)
        later: list[list[Alternative]] = []
        if isinstance(base.get("allOf"), list):
            later += [self.alternatives(part, depth + 1) for part in base.pop("allOf")]
        for key in ("anyOf", "oneOf"):
            if isinstance(base.get(key), list) and base[key]:
                branches = [self.alternatives(branch, depth + 1) for branch in base[key]]
                common = _common(branches)
                if common is not None:
                    evaluated = evaluated.union(common)
                    continue
                options = base.pop(key)
                if key == "oneOf":
                    self.overlapping = self.overlapping or not shared.disjoint_types(options)
                later.append(self.any_of(branches) if key == "anyOf" else [a for branch in branches for a in branch])
        if "if" in base and self.t.conditional_keywords:
            evaluated = self.conditional(base, evaluated, later, depth)
        if isinstance(base.get("dependentSchemas"), dict):
            self.dependent(base, later, depth)
        self.check_dependencies(base, depth)
        factors.append([((base,) if base else (), evaluated)])
        return _product([*factors, *later])

    def judging_itself(self, schema: dict[str, Any], own: list[str], depth: int) -> Evaluated:
        """What a schema holding ``unevaluated*`` of its own evaluates: everything of
        those kinds (the merge holds it to them apart), and one fixed set of the
        other wanted kinds."""
        others = [key for key in self.wanted if key not in own]
        evaluated = Evaluated(every_name=PROPERTIES in own and PROPERTIES in self.wanted,
                              every_item=ITEMS in own and ITEMS in self.wanted)
        if not others:
            return evaluated
        inner = _Expansion(self.t, others)
        inner.stack = self.stack
        common = _common([inner.alternatives({k: v for k, v in schema.items() if k not in own}, depth + 1)])
        if common is None:
            raise NotStatic("a schema holding unevaluated* of its own splits on what it evaluates")
        return evaluated.union(common)

    def referenced(self, target: Any, depth: int) -> list[Alternative]:
        """The alternatives of a local ``$ref``'s target (2019-09 on, it evaluates in place)."""
        if not isinstance(target, str) or not target.startswith("#"):
            raise NotStatic(f"$ref {target!r} leaves the document")
        if target in self.stack:
            raise NotStatic(f"$ref {target!r} recurs in place")
        self.stack.append(target)
        try:
            return self.alternatives(self.t.resolve(target, ""), depth + 1)
        finally:
            self.stack.pop()

    def own(self, schema: dict[str, Any]) -> Evaluated:
        """What ``schema``'s own keywords evaluate, for the wanted kinds."""
        evaluated = NOTHING
        if PROPERTIES in self.wanted:
            properties, patterns = schema.get("properties"), schema.get("patternProperties")
            evaluated = Evaluated(frozenset(properties) if isinstance(properties, dict) else frozenset(),
                                  frozenset(patterns) if isinstance(patterns, dict) else frozenset(),
                                  "additionalProperties" in schema)
        if ITEMS in self.wanted:
            items = schema.get("items")
            prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else items
            every = ("items" in schema and not isinstance(items, list)) or (isinstance(items, list) and "additionalItems" in schema)
            evaluated = evaluated.union(Evaluated(items=len(prefix) if isinstance(prefix, list) else 0, every_item=every))
            if "contains" in schema and self.t.contains_keyword:
                evaluated = evaluated.union(self.matching(schema["contains"]))
        return evaluated

    def matching(self, contains: Any) -> Evaluated:
        """What a ``contains`` that passed evaluates (2020-12): the items it matches."""
        if self.contains_unsaid:
            raise NotStatic("contains beside it: 2019-09 does not say whether it evaluates the items it matches "
                            "(jsonschema counts them)", ITEMS)
        if contains is True or contains == {}:
            return Evaluated(every_item=True)
        return NOTHING if contains is False else Evaluated(matched=frozenset([json.dumps(contains, sort_keys=True)]))

    def any_of(self, branches: list[list[Alternative]]) -> list[Alternative]:
        """Every non-empty subset of the branches passing, each with one of its
        alternatives (redundant ones left out)."""
        count = 1
        for branch in branches:
            count *= len(branch) + 1
        if count - 1 > MAX_UNEVALUATED_ALTERNATIVES:
            raise NotStatic(f"anyOf would split into more than {MAX_UNEVALUATED_ALTERNATIVES} alternatives")
        choices = [[None, *branch] for branch in branches]
        found: list[Alternative] = []
        for picked in itertools.product(*choices):
            chosen = [a for a in picked if a is not None]
            if chosen:
                found.append(_joined(chosen))
        return _pruned(found)

    def conditional(self, base: dict[str, Any], evaluated: Evaluated, later: list[list[Alternative]],
                    depth: int) -> Evaluated:
        """``if`` and ``then`` passing, or ``not if`` and ``else``: split where they
        evaluate differently (``if``'s own evaluations count where it passes, even
        without ``then``)."""
        passing = _product([self.alternatives(base["if"], depth + 1), self.alternatives(base.get("then", True), depth + 1)])
        failing = self.alternatives(base.get("else", True), depth + 1)
        common = _common([passing, failing])
        if common is not None:
            return evaluated.union(common)
        condition = {key: base.pop(key) for key in shared.CONDITIONAL if key in base}
        if all(found == NOTHING for _, found in failing):  # an alternative evaluating nothing needs no guard
            later.append([*passing, ((condition,), NOTHING)])
        else:
            later.append([*passing, *[(({"not": condition["if"]}, *conjuncts), found) for conjuncts, found in failing]])
        return evaluated

    def dependent(self, base: dict[str, Any], later: list[list[Alternative]], depth: int) -> None:
        """``dependentSchemas``: where a dependent schema evaluates something, an
        object with its name (the schema holds), or any other value."""
        kept: dict[str, Any] = {}
        for name, sub in base["dependentSchemas"].items():
            found = self.alternatives(sub, depth + 1)
            if all(evaluated == NOTHING for _, evaluated in found):
                kept[name] = sub
                continue
            absent: Alternative = (({"properties": {name: False}},), NOTHING)
            present: dict[str, Any] = {"type": "object", "required": [name]}  # it applies to objects only
            later.append([absent, *[((present, *conjuncts), e) for conjuncts, e in found]])
        if kept:
            base["dependentSchemas"] = kept
        else:
            del base["dependentSchemas"]

    def check_dependencies(self, base: dict[str, Any], depth: int) -> None:
        """``dependencies``' schemas are no keyword from 2019-09 on (enforced here
        anyway): what they would evaluate is not said."""
        value = base.get("dependencies")
        if isinstance(value, dict):
            for sub in value.values():
                if not isinstance(sub, list) and any(e != NOTHING for _, e in self.alternatives(sub, depth + 1)):
                    raise NotStatic("a dependencies schema evaluates properties or items, which no draft holding "
                                    "unevaluated* says counts")


def _common(branches: list[list[Alternative]]) -> Evaluated | None:
    """What every alternative of every branch evaluates, when they all evaluate the same."""
    found = {evaluated for branch in branches for _, evaluated in branch}
    return found.pop() if len(found) == 1 else None


def _joined(chosen: list[Alternative]) -> Alternative:
    conjuncts = tuple(c for picked, _ in chosen for c in picked)
    evaluated = NOTHING
    for _, found in chosen:
        evaluated = evaluated.union(found)
    return conjuncts, evaluated


def _product(factors: list[list[Alternative]]) -> list[Alternative]:
    """One alternative per choice of one from each factor (all of them hold)."""
    count = 1
    for factor in factors:
        count *= len(factor)
    if count > MAX_UNEVALUATED_ALTERNATIVES:
        raise NotStatic(f"the branches would split the place into more than {MAX_UNEVALUATED_ALTERNATIVES} alternatives")
    return _pruned([_joined(list(picked)) for picked in itertools.product(*factors)])


def _pruned(found: list[Alternative]) -> list[Alternative]:
    """``found`` without the alternatives another covers: fewer conjuncts (the
    same objects) and at least as much evaluated accepts all they accept."""
    kept: list[Alternative] = []
    for i, (conjuncts, evaluated) in enumerate(found):
        if not any(j != i and other.covers(evaluated) and _within(few, conjuncts) and (j < i or not _within(conjuncts, few)
                                                                                    or not evaluated.covers(other))
                   for j, (few, other) in enumerate(found)):
            kept.append((conjuncts, evaluated))
    return kept


def _within(few: tuple[Any, ...], many: tuple[Any, ...]) -> bool:
    return all(any(c is d for d in many) for c in few)


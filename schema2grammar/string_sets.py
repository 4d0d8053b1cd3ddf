"""The strings a schema accepts, as a boolean formula over character automata.

``complement`` sees a schema kind by kind as a few simple sets; a set of strings
cut by ``pattern`` has no such form, and neither has the set a ``not`` of a
``pattern`` leaves. Here a schema's strings are a ``StringSet``: one automaton per
keyword that judges a string (``pattern``'s ECMA-262 search, one per conjunct of a
pattern with leading lookaheads, ``ecma.conjuncts``; the values ``enum``
or ``const`` list, the ``minLength``/``maxLength`` range), and a formula over their
verdicts for ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else`` and
``$ref``. Their product is one automaton, and ``spelled`` turns the strings it
accepts back into one regex (``automata.to_regex``): what ``propertyNames``
allows among property names, and what a ``not`` leaves of a place's strings.

Strings are matched in every spelling of their characters (``spellings``), as a
``pattern`` terminal's are. A ``format`` that the draft asserts, dynamic
references, draft 3's ``disallow``/``extends``, and schemas past
``MAX_SCHEMAS_READ`` raise ``ecma.Unsupported``: the caller then reports the
keyword approximated.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from schema2grammar import automata, ecma, shared
from schema2grammar.automata import DFA, NFA, Classes
from schema2grammar.conditions import Draft

MAX_SCHEMAS_READ = 256
"""Schema objects one reading may visit (through ``$ref``, ``not``, ``anyOf`` ...):
a bound on the work, and where a ``$ref`` comes back to itself, the end of it."""

MAX_REGEX = 50_000
"""Characters of one set's regex."""

Base = tuple[Any, ...]
"""One automaton of a ``StringSet``: ``("pattern", source)`` (its ECMA-262 search),
``("listed", texts)``, or ``("lengths", low, high)`` (None: unbounded)."""

Formula = tuple[Any, ...]
"""``("base", i)``, ``("not", f)``, or ``("all" | "any" | "one", f, ...)``."""

TRUE: Formula = ("all",)
FALSE: Formula = ("any",)


@dataclass
class StringSet:
    """The strings for which ``formula`` holds over the ``bases``' verdicts."""

    formula: Formula
    bases: list[Base] = field(default_factory=list)

    def holds(self, text: str) -> bool:
        """Whether ``text`` is one of the set's."""
        bits = 0
        for i, base in enumerate(self.bases):
            if base[0] == "pattern":
                verdict = automata.matches(_search(base[1]), text)
            elif base[0] == "listed":
                verdict = text in base[1]
            else:
                verdict = base[1] <= len(text) and (base[2] is None or len(text) <= base[2])
            bits |= verdict << i
        return self.holds_bits(bits)

    def holds_bits(self, bits: int) -> bool:
        """The formula's value where base ``i`` accepts when bit ``i`` of ``bits`` is set."""
        return _value(self.formula, bits)

    def ranges(self) -> list[ecma.Ranges]:
        """The character ranges the bases tell apart (for ``automata.cut_points``)."""
        return _ranges(tuple(self.bases))

    def automata(self, classes: Classes) -> list[DFA]:
        """One DFA per base, over ``classes``."""
        return [automata.determinize(_search(base[1]), classes) if base[0] == "pattern"
                else listed_dfa(list(base[1]), classes) if base[0] == "listed"
                else automata.lengths_dfa(base[1], base[2], classes) for base in self.bases]


def both(first: StringSet, second: StringSet) -> StringSet:
    """The strings in both sets (with ``negate``: in the first, not the second)."""
    shift = len(first.bases)
    return StringSet(_all([first.formula, _shifted(second.formula, shift)]), first.bases + second.bases)


def negate(strings: StringSet) -> StringSet:
    return StringSet(_not(strings.formula), strings.bases)


def spelled(strings: StringSet) -> str | None:
    """A regex of the set's strings between the quotes, in every spelling
    (``spellings``; None: the set is empty); ``ecma.Unsupported`` past the automata's limits
    or ``MAX_REGEX``. The sets of a ``oneOf`` (each branch less the others) share
    their automata: the product of a set of bases is built once."""
    if strings.formula == FALSE:
        return None
    regex, failure = _spelled(tuple(strings.bases), strings.formula)
    if failure:
        raise ecma.Unsupported(failure)
    return regex


def count(strings: StringSet, cap: int) -> int:
    """How many strings the set holds, or ``cap`` when that many or more (an endless
    set too); ``ecma.Unsupported`` past the automata's limits."""
    if strings.formula == FALSE:
        return 0
    built, failure = _accepted(tuple(strings.bases), strings.formula)
    if built is None:
        raise ecma.Unsupported(failure)
    classes, product, accepting = built
    return automata.count_strings(product, accepting, classes, cap)


def _accepted(bases: tuple[Base, ...], formula: Formula) -> tuple[tuple[Classes, DFA, list[bool]] | None, str]:
    """The bases' product and which of its states the formula accepts, or why there is none."""
    unique = sorted(set(bases), key=repr)
    built, failure = _product(tuple(unique))
    if built is None:
        return None, failure
    classes, product, signatures = built
    where = [unique.index(base) for base in bases]  # each base's bit in the product's signatures
    return (classes, product, [_value(formula, sum((s >> at & 1) << i for i, at in enumerate(where)))
                               for s in signatures]), ""


@lru_cache(maxsize=256)
def _spelled(bases: tuple[Base, ...], formula: Formula) -> tuple[str | None, str]:
    """``spelled``'s regex, or why there is none (cached either way)."""
    built, failure = _accepted(bases, formula)
    if built is None:
        return None, failure
    classes, product, accepting = built
    try:
        regex = automata.to_regex(product, accepting, classes, 4 * MAX_REGEX)
    except ecma.Unsupported as exc:
        return None, str(exc)
    if regex is not None and len(regex) > MAX_REGEX:
        return None, f"the regex of these strings exceeds {MAX_REGEX} characters"
    return regex, ""


@lru_cache(maxsize=4)  # a product holds up to 2,000 states times its classes
def _product(bases: tuple[Base, ...]) -> tuple[tuple[Classes, DFA, list[int]] | None, str]:
    """The bases' automata run together (``automata.product``), or why they cannot be."""
    try:
        classes = Classes(automata.cut_points(_ranges(bases)))
        product, signatures = automata.product(StringSet(TRUE, list(bases)).automata(classes), classes)
    except ecma.Unsupported as exc:
        return None, str(exc)
    return (classes, product, signatures), ""


@lru_cache(maxsize=256)
def _search(source: str) -> NFA:
    """The search automaton of a pattern (read once: a set's bases are read again
    and again)."""
    return automata.search_nfa(ecma.parse(source))


def _ranges(bases: tuple[Base, ...]) -> list[ecma.Ranges]:
    found = [ranges for base in bases if base[0] == "pattern" for moves in _search(base[1]).moves for ranges, _ in moves]
    return found + [[(ord(c), ord(c))] for base in bases if base[0] == "listed" for text in base[1] for c in text]


def listed_dfa(texts: list[str], classes: Classes) -> DFA:
    """Exactly ``texts``: a trie, with a dead state for everything else."""
    table: list[list[int]] = [[1] * classes.count, [1] * classes.count]  # 0: start, 1: dead
    accepting = [False, False]
    for text in texts:
        at = 0
        for char in text:
            c = bisect.bisect_right(classes.cuts, ord(char)) - 1
            if table[at][c] == 1:
                table.append([1] * classes.count)
                accepting.append(False)
                table[at][c] = len(table) - 1
            at = table[at][c]
        accepting[at] = True
    return DFA(table, accepting)


# -- reading a schema


def of_schema(schema: Any, pointer: str, draft: Draft) -> StringSet:
    """The strings ``schema`` (at ``pointer``) accepts, as its ``draft`` reads it. A
    keyword of another type judges no string; a malformed keyword is a
    ``shared.SchemaError``; what is not read here is ``ecma.Unsupported``."""
    found = StringSet(TRUE)
    found.formula = _Reader(found.bases, draft).read(schema, pointer)
    return found


class _Reader:
    """``of_schema``'s walk, adding a base per keyword that judges strings."""

    def __init__(self, bases: list[Base], draft: Draft) -> None:
        self.bases = bases
        self.draft = draft
        self.read_count = 0

    def base(self, base: Base) -> Formula:
        self.bases.append(base)
        return ("base", len(self.bases) - 1)

    def read(self, schema: Any, pointer: str) -> Formula:
        self.read_count += 1
        if self.read_count > MAX_SCHEMAS_READ:
            raise ecma.Unsupported(f"the strings' schema takes more than {MAX_SCHEMAS_READ} schemas to read "
                                   "(or a $ref recurs)")
        if schema is True:
            return TRUE
        if schema is False:
            return FALSE
        if not isinstance(schema, dict):
            raise shared.SchemaError(f"{pointer or '#'}: a schema must be an object or a boolean, not {schema!r}")
        parts: list[Formula] = []
        if "$ref" in schema:
            target = schema["$ref"]
            if not isinstance(target, str) or not target.startswith("#") or self.draft.resolve is None:
                raise ecma.Unsupported(f"$ref {target!r} is not followed here")
            parts.append(self.read(self.draft.resolve(target), target[1:]))
            if self.draft.ref_alone:
                return parts[0]
        if "minLength" in schema or "maxLength" in schema:
            low = shared.count_of(schema.get("minLength", 0))
            high = shared.count_of(schema["maxLength"]) if "maxLength" in schema else None
            if low is None or high is None and "maxLength" in schema:
                key = "minLength" if low is None else "maxLength"
                raise shared.SchemaError(f"{pointer}/{key}: must be a non-negative integer, not {schema[key]!r}")
            parts.append(FALSE if high is not None and high < low else self.base(("lengths", low, high)))
        if "if" in schema and self.draft.conditional:
            test = self.read(schema["if"], f"{pointer}/if")
            then = self.read(schema.get("then", True), f"{pointer}/then")
            otherwise = self.read(schema.get("else", True), f"{pointer}/else")
            parts.append(_any([_all([test, then]), _all([_not(test), otherwise])]))
        for key, value in schema.items():
            if key not in ("$ref", "minLength", "maxLength", "if", "then", "else"):
                parts.append(self.keyword(key, value, f"{pointer}/{key}"))
        return _all(parts)

    def keyword(self, key: str, value: Any, pointer: str) -> Formula:
        """What one keyword says of strings (TRUE where it judges none)."""
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            if not all(isinstance(kind, str) for kind in kinds):
                raise shared.SchemaError(f"{pointer}: type must name a type or list them, not {value!r}")
            return TRUE if "string" in kinds else FALSE
        if key in ("enum", "const"):
            values = [value] if key == "const" else value
            if not isinstance(values, list):
                raise shared.SchemaError(f"{pointer}: enum must be a list")
            texts = list(dict.fromkeys(v for v in values if isinstance(v, str)))
            return self.base(("listed", tuple(texts))) if texts else FALSE
        if key == "pattern":
            if not isinstance(value, str):
                raise shared.SchemaError(f"{pointer}: pattern must be a string")
            found: list[Formula] = []
            for holds, part in ecma.conjuncts(value):  # its leading lookaheads: a conjunction
                _search(part)  # a pattern no automaton spells is Unsupported now
                found.append(self.base(("pattern", part)) if holds else _not(self.base(("pattern", part))))
            return _all(found)
        if key == "format":
            if self.draft.format_assertion:  # one the translator spells, or one a validator may know
                raise ecma.Unsupported(f"format {value!r} is not read as a set of strings")
            return TRUE  # an annotation in this draft
        if key == "not":
            return _not(self.read(value, pointer))
        if key in ("allOf", "anyOf", "oneOf"):
            if not isinstance(value, list) or not value:
                raise shared.SchemaError(f"{pointer}: {key} must be a non-empty list")
            found = [self.read(part, f"{pointer}/{i}") for i, part in enumerate(value)]
            return _all(found) if key == "allOf" else _any(found) if key == "anyOf" else _one(found)
        if key in ("$dynamicRef", "$recursiveRef", "disallow", "extends"):
            raise ecma.Unsupported(f"{key} is not read as a set of strings")
        return TRUE  # another type's keyword, an annotation, or an unknown keyword


# -- formulas


def _all(parts: list[Formula]) -> Formula:
    if FALSE in parts:
        return FALSE
    kept = list(dict.fromkeys(part for part in parts if part != TRUE))
    return kept[0] if len(kept) == 1 else ("all", *kept)


def _any(parts: list[Formula]) -> Formula:
    if TRUE in parts:
        return TRUE
    kept = list(dict.fromkeys(part for part in parts if part != FALSE))
    return kept[0] if len(kept) == 1 else ("any", *kept)


def _one(parts: list[Formula]) -> Formula:
    kept = [part for part in parts if part != FALSE]
    return FALSE if not kept else kept[0] if len(kept) == 1 else ("one", *kept)


def _not(formula: Formula) -> Formula:
    if formula == TRUE or formula == FALSE:
        return FALSE if formula == TRUE else TRUE
    return formula[1] if formula[0] == "not" else ("not", formula)


def _shifted(formula: Formula, shift: int) -> Formula:
    if formula[0] == "base":
        return ("base", formula[1] + shift)
    return (formula[0], *(_shifted(part, shift) for part in formula[1:]))


def _value(formula: Formula, bits: int) -> bool:
    kind = formula[0]
    if kind == "base":
        return bool(bits >> formula[1] & 1)
    if kind == "not":
        return not _value(formula[1], bits)
    verdicts = [_value(part, bits) for part in formula[1:]]
    return all(verdicts) if kind == "all" else any(verdicts) if kind == "any" else verdicts.count(True) == 1

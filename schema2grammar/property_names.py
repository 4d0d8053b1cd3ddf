"""Property names split by the ``patternProperties`` they match, as regexes.

A name that matches some patterns takes a value valid against each of their
schemas; a name that matches none takes ``additionalProperties``; a declared name
takes its own schema (and those of the patterns it matches). Each of these sets of
names must be one terminal whose language is exactly that set, so the parser never
has to guess which rule a key belongs to. Regexes cannot say "does not match", so
the names are worked out on automata over decoded characters (``automata``): one
DFA per pattern (ECMA-262 search semantics, as ``ecma`` reads them), one for the
declared names, their product, and each *region* (a set of patterns matched, no
declared name) turned back into a regex by state elimination.

Names are matched in every spelling of their characters (``spellings``, as
``pattern`` matches what it names): ``"é"`` and ``"\\u00e9"`` are one name, in
the same region, and a declared name is left out of the regions however it is
spelled. Patterns no automaton expresses, or regions
whose automata or regexes grow past the limits below, raise ``ecma.Unsupported``;
the translator then falls back to an approximation and says so in the report.

``propertyNames`` joins in as the set of names its schema accepts
(``string_sets``): its automata run in the same product, and every region keeps
only the names of the set.

Declared names (and a merge's names) are matched one by one too, by Python's
``re`` where it runs every pattern (``matchable``, ``found_by``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schema2grammar import automata, ecma, spellings, string_sets
from schema2grammar.automata import Classes
from schema2grammar.string_sets import StringSet

MAX_REGEX = 50_000
"""Characters of the regexes for one object's names, all regions together."""


@dataclass
class Region:
    """The names that match exactly the patterns ``matched`` (indexes into the
    patterns given) and are not declared: ``regex`` spells them between the quotes."""

    matched: tuple[int, ...]
    regex: str


def regions(patterns: list[str], declared: list[str], unmatched: bool = True,
            allowed: StringSet | None = None) -> list[Region]:
    """The non-empty regions of the names that are not ``declared``, for ``patterns``
    (ECMA-262, unanchored search): one per set of patterns a name can match, the
    empty set included only when ``unmatched`` (no ``additionalProperties: false``);
    only names ``allowed`` (by ``propertyNames``) where it is given."""
    tests = [ecma.conjuncts(pattern) for pattern in patterns]  # a pattern with lookaheads: several automata
    if len(patterns) == 1 and len(tests[0]) == 1 and not declared and not unmatched and allowed is None:
        return [Region((0,), ecma.json_string_regex(patterns[0]))]  # one region: the pattern's names, as a string's
    nfas = [automata.search_nfa(ecma.parse(part)) for found in tests for _, part in found]
    cuts = automata.cut_points([ranges for nfa in nfas for moves in nfa.moves for ranges, _ in moves]
                               + [[(ord(c), ord(c))] for name in declared for c in name]
                               + (allowed.ranges() if allowed is not None else []))
    classes = Classes(cuts)
    dfas = [automata.determinize(nfa, classes) for nfa in nfas]
    dfas.append(string_sets.listed_dfa(declared, classes))
    dfas += allowed.automata(classes) if allowed is not None else []
    product, signatures = automata.product(dfas, classes)
    names_bit = 1 << len(nfas)
    kept = [not s & names_bit and (allowed is None or allowed.holds_bits(s >> (len(nfas) + 1))) for s in signatures]
    matches = [_matched(tests, s) for s in signatures]
    written: dict[int, str] = {}
    for matched in sorted({m for m, keep in zip(matches, kept) if keep and (m or unmatched)}):
        accepting = [m == matched and keep for m, keep in zip(matches, kept)]
        try:
            regex = automata.to_regex(product, accepting, classes, 4 * MAX_REGEX)
        except ecma.Unsupported:
            if allowed is not None:
                raise
            regex = _by_lookaheads(patterns, matched, declared)  # the region is not empty: the product says so
        if regex is not None:
            written[matched] = regex
    if allowed is None:  # past the limit, the longest regions by lookaheads where that is shorter
        for matched in sorted(written, key=lambda m: -len(written[m])):
            if sum(map(len, written.values())) <= MAX_REGEX:
                break
            try:
                written[matched] = min(written[matched], _by_lookaheads(patterns, matched, declared), key=len)
            except ecma.Unsupported:
                continue
    if sum(map(len, written.values())) > MAX_REGEX:
        raise ecma.Unsupported(f"the regexes for these property names exceed {MAX_REGEX} characters")
    return [Region(tuple(i for i in range(len(patterns)) if matched >> i & 1), regex) for matched, regex in written.items()]


def _matched(tests: list[list[tuple[bool, str]]], signature: int) -> int:
    """The patterns (a bit each) whose automata's verdicts in ``signature`` (a bit
    per automaton, each pattern's conjuncts in a row) say they match."""
    matched, at = 0, 0
    for i, found in enumerate(tests):
        if all(bool(signature >> (at + j) & 1) == holds for j, (holds, _) in enumerate(found)):
            matched |= 1 << i
        at += len(found)
    return matched


def _by_lookaheads(patterns: list[str], matched: int, declared: list[str]) -> str:
    """A region as lookaheads the engine reads as intersections and differences
    (``structgen.engine.regex``): the names every pattern in ``matched`` (a bit per
    pattern) finds and no other pattern does, declared names left out. Where state
    elimination writes too much (a pattern counting 250 characters, left out of
    the other names), this stays the size of the patterns' own regexes; the
    engine builds the automaton, within its limit."""
    ahead = [f'{"(?=" if holds else "(?!"}{ecma.json_string_regex(part)}")' for i, p in enumerate(patterns)
             if matched >> i & 1 for holds, part in ecma.conjuncts(p)]
    refused = [ecma.json_string_regex(p) for i, p in enumerate(patterns) if not matched >> i & 1]  # lookaheads: Unsupported
    refused += [spellings.spell_text(name) for name in declared if spellings.spellable(name)]
    if refused:
        ahead.append(f'(?!(?:{"|".join(refused)})")')
    return "".join(ahead) + ecma.ANY_SPELLING + "*"


# -- one name at a time, in Python


def found_by(patterns: dict[str, Any] | None, name: str) -> list[Any]:
    """The schemas of the ``patterns`` (ECMA-262) that match somewhere in ``name``."""
    if patterns is None:
        return []
    return [sub for pattern, sub in patterns.items() if re.search(ecma.python_regex(pattern), name) is not None]


def matchable(patterns: dict[str, Any] | None) -> dict[str, Any] | None:
    """``patterns`` when Python's ``re`` can run every one of them (to match declared
    names one by one), else None."""
    if patterns is None:
        return None
    try:
        for pattern in patterns:
            re.compile(ecma.python_regex(pattern))
    except (ecma.Unsupported, re.error):
        return None
    return patterns

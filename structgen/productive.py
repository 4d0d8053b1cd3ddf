"""Whether a grammar derives any text at all: its productive rules.

A nonterminal is productive when one of its rules has only productive symbols:
terminals that match some text, and productive nonterminals (a fixpoint, from the
rules with no nonterminal to wait for). A rule with an unproductive symbol is never
part of a whole derivation, and kept in the LR tables it would let the mask open a
path that cannot end (after ``"d"`` in ``y: "d" x`` with only ``x: x "c"``). So a
grammar keeps only its productive rules, which derive the same language; and when
its start symbol is not productive — ``start: start "a"``, a grammar without a
``start`` rule, a JSON Schema's ``$ref`` cycle or a property required to hold its
own schema, a terminal every text needs that matches nothing — no finite text
matches it: ``EmptyLanguage``, where a matcher would otherwise allow no token at
the first step (or, with a required self-reference, write ``{"x":{"x":...`` until
``max_tokens`` ran out).
"""

from __future__ import annotations

from typing import Collection

from structgen.lark_rules import GrammarError, LarkRules


class EmptyLanguage(GrammarError):
    """A grammar whose start symbol derives no finite text."""

    code = "empty_language"  # the server's error code (docs/server.md)


def productive_rules(rules: LarkRules, matchable: Collection[int]) -> LarkRules:
    """``rules`` without the rules that need an unproductive symbol (``rules``
    itself when none does); ``matchable``: the terminals that match some text.
    ``EmptyLanguage`` when the start symbol derives nothing."""
    end = rules.end
    matched = set(matchable)
    waiting = [0] * len(rules.rules)  # per rule: occurrences of nonterminals not yet productive
    used_in: dict[int, list[int]] = {}  # nonterminal -> the rules it occurs in (once per occurrence)
    ready: list[int] = []
    for index, (_, expansion) in enumerate(rules.rules):
        if any(symbol < end and symbol not in matched for symbol in expansion):
            waiting[index] = -1  # a terminal that matches nothing: never productive
            continue
        for symbol in expansion:
            if symbol > end:
                waiting[index] += 1
                used_in.setdefault(symbol, []).append(index)
        if not waiting[index]:
            ready.append(index)
    productive: set[int] = set()
    while ready:
        origin = rules.rules[ready.pop()][0]
        if origin in productive:
            continue
        productive.add(origin)
        for index in used_in.get(origin, ()):
            waiting[index] -= 1
            if not waiting[index]:
                ready.append(index)
    if rules.start not in productive:
        raise EmptyLanguage(_why_empty(rules, matched))
    kept = [rule for index, rule in enumerate(rules.rules) if not waiting[index]]
    if len(kept) == len(rules.rules):
        return rules
    return LarkRules(rules.terminals, rules.nonterminals, kept, rules.start, rules.ignore, rules.indentation)


def _why_empty(rules: LarkRules, matched: set[int]) -> str:
    start = _name(rules, rules.start)
    if not any(origin == rules.start for origin, _ in rules.rules):
        return f"the grammar has no rule for its start symbol {start!r}: its language is empty"
    unmatched = sorted({rules.terminals[s].name for _, expansion in rules.rules for s in expansion if s < rules.end and s not in matched})
    why = f" (terminals {unmatched} match no text)" if unmatched else ""
    return (
        f"the grammar's language is empty: {start!r} derives no finite text{why}; every rule of it "
        "needs itself again, or a symbol that derives nothing"
    )


def _name(rules: LarkRules, nonterminal: int) -> str:
    index = nonterminal - rules.end - 1
    return rules.nonterminals[index] if 0 <= index < len(rules.nonterminals) else str(nonterminal)

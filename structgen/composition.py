"""Grammars made of grammars: union, sequence, repetition, and a literal.

A tool call is an envelope around a schema's JSON; an answer may be a JSON value
or the start of a call. Such grammars are built from whole grammars here, by
their rules, not by editing their text: each part's nonterminals get a prefix of
their own (no part can capture another's symbols), equal terminals are shared
(one lexer pattern for the ``,`` every part writes), and a new ``start`` rule
joins the parts' start symbols.

The result is rules (``LarkRules``); ``structgen.Grammar`` builds a grammar of
them and writes them as lark text (``lark_writer``) for what needs text: the
grammar cache and a vLLM worker rebuild it from that text.

What composes: the rules, ``%ignore`` (a terminal one part ignores is ignored
wherever the composed grammar is, as in one lark file), and the checks a
grammar's terminals carry (string lengths counted past the lexer: found again in
the composed grammar). What does not: checks that follow a part's text from its
first byte (a schema's ``uniqueItems``); the composed grammar leaves them out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from structgen.lark_rules import GrammarError, LarkRules, Terminal

__all__ = ["MAX_PARTS", "SELF", "composed", "literal_rules"]

MAX_PARTS = 4_096
"""Grammars one composition joins (a tool set's tools, say)."""

SELF = -1
"""In an alternative of ``composed``: the composed grammar's own start symbol."""


def literal_rules(text: str) -> LarkRules:
    """The grammar of exactly ``text`` (one terminal)."""
    if not text:
        raise GrammarError("a literal grammar needs text (an empty terminal matches nothing lark can lex)")
    terminal = Terminal("LITERAL", "str", text, "", 0)
    return LarkRules(terminals=[terminal], nonterminals=["start"], rules=[(2, [0])], start=2, ignore=[])


def composed(parts: Sequence[LarkRules], alternatives: Sequence[Sequence[int]]) -> LarkRules:
    """``start`` derives each of ``alternatives``: a sequence of parts (indices into
    ``parts``; ``SELF`` for ``start`` itself, for repetition). Every part's own
    rules come along, its symbols renamed apart."""
    if not parts:
        raise GrammarError("a composition needs at least one grammar")
    if len(parts) > MAX_PARTS:
        raise GrammarError(f"a composition joins at most {MAX_PARTS} grammars, not {len(parts)}")
    if any(part.indentation is not None for part in parts):
        raise GrammarError("an indentation-sensitive grammar (structgen.indenter) cannot be composed: its levels "
                           "are the whole text's")
    for alternative in alternatives:
        for index in alternative:
            if index != SELF and not 0 <= index < len(parts):
                raise GrammarError(f"no part {index} among {len(parts)}")
    terminals: list[Terminal] = []
    # equal terminals are shared, but not one a part ignores with one another part parses
    shared: dict[tuple[str, str, str, int, bool], int] = {}
    names: set[str] = set()
    part_terminals: list[list[int]] = []
    for part in parts:
        mapping = []
        ignored = set(part.ignore)
        for index, terminal in enumerate(part.terminals):
            key = (terminal.kind, terminal.value, terminal.flags, terminal.priority, index in ignored)
            found = shared.get(key)
            if found is None:
                found = shared[key] = len(terminals)
                terminals.append(Terminal(_unique(terminal.name, names), *key[:4]))
            mapping.append(found)
        part_terminals.append(mapping)
    count = len(terminals)
    nonterminals = ["start"]
    rule_names = {"start"}
    rules: list[tuple[int, list[int]]] = []
    starts: list[int] = []
    ignore: list[int] = []
    for number, (part, mapping) in enumerate(zip(parts, part_terminals)):
        first = count + 1 + len(nonterminals)  # this part's first nonterminal's new symbol
        nonterminals += [_unique_rule(f"p{number}_{name}", rule_names) for name in part.nonterminals]

        def renamed(symbol: int, part: LarkRules = part, mapping: list[int] = mapping, first: int = first) -> int:
            if symbol < len(part.terminals):
                return mapping[symbol]
            return first + symbol - (len(part.terminals) + 1)

        rules += [(renamed(origin), [renamed(symbol) for symbol in expansion]) for origin, expansion in part.rules]
        starts.append(renamed(part.start))
        ignore += [mapping[t] for t in part.ignore if mapping[t] not in ignore]
    start = count + 1
    rules = [(start, [start if index == SELF else starts[index] for index in alternative]) for alternative in alternatives] + rules
    return LarkRules(terminals=terminals, nonterminals=nonterminals, rules=rules, start=start, ignore=ignore)


_NAME = re.compile(r"_?[A-Z][A-Z0-9_]*")
"""A terminal name lark reads in a grammar's text (not its own ``__ANON_0``)."""


def _unique_rule(name: str, taken: set[str]) -> str:
    """A rule name lark reads (``[a-z0-9_]``: a template's ``_sep{A,B}`` is not one),
    with a number where another rule has it."""
    return _numbered(re.sub(r"[^a-z0-9_]", "_", name.lower()), taken)


def _unique(name: str, taken: set[str]) -> str:
    """``name`` (a terminal's), or with a number where another terminal has it."""
    return _numbered(name if _NAME.fullmatch(name) else "T", taken)


def _numbered(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... the first not ``taken`` (then taken)."""
    found, number = base, 1
    while found in taken:
        number += 1
        found = f"{base}_{number}"
    taken.add(found)
    return found

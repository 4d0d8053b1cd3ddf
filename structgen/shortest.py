"""How short the shortest text of a grammar is, in bytes.

A request whose ``max_tokens`` cannot hold even the shortest text its constraint
allows would only ever end cut (``finish_reason: length``) with an output that
breaks the constraint: the server refuses it up front instead.

The count is a lower bound, exact where the lexer cuts a text into the terminals
the rules join (JSON's grammars; ``"x" "y"`` beside a terminal ``"xy"`` is lexed
as that one). Each terminal's shortest lexeme is a breadth-first walk of the lexer
automaton (the first state that accepts it); a nonterminal's shortest text is the
cheapest of its rules, found as Knuth's generalization of Dijkstra's algorithm
finds it (a rule's cost is known once all its symbols' are; the cheapest
unsettled nonterminal is settled next), in time linear in the rules (and a log).
In tokens, a text of ``n`` bytes needs at least ``n`` divided by the
vocabulary's longest token.
"""

from __future__ import annotations

import heapq
from collections import deque

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START
from structgen.grammar import Grammar


def shortest_text_bytes(grammar: Grammar) -> int:
    """The length in bytes of the shortest text ``grammar`` accepts (its language
    is not empty: ``Grammar`` refuses an empty one)."""
    rules = grammar.rules
    lexeme = _shortest_lexemes(grammar)
    for ignored in rules.ignore:  # optional wherever they may stand
        lexeme[ignored] = 0
    places = rules.indentation
    if places is not None:  # terminals the parser writes (structgen.indenter): in the lexed newlines' bytes
        lexeme[places.newline] = min([lexeme[t] for t in places.lexed if t in lexeme], default=0)
        for made in [places.dedent] + [t for t in places.indents if t >= 0]:
            lexeme[made] = 0
    end = rules.end
    cost: dict[int, int] = {}
    waiting = [0] * len(rules.rules)
    partial = [0] * len(rules.rules)
    used_in: dict[int, list[int]] = {}
    heap: list[tuple[int, int]] = []
    for index, (lhs, expansion) in enumerate(rules.rules):
        for symbol in expansion:
            if symbol < end:
                partial[index] += lexeme.get(symbol, _NEVER)
            else:
                waiting[index] += 1
                used_in.setdefault(symbol, []).append(index)
        if waiting[index] == 0:
            heapq.heappush(heap, (partial[index], lhs))
    while heap:
        value, nonterminal = heapq.heappop(heap)
        if nonterminal in cost:
            continue
        cost[nonterminal] = value
        if nonterminal == rules.start:
            return value
        for index in used_in.get(nonterminal, ()):
            partial[index] += value
            waiting[index] -= 1
            if waiting[index] == 0:
                heapq.heappush(heap, (partial[index], rules.rules[index][0]))
    return cost.get(rules.start, _NEVER)


_NEVER = 1 << 62
"""The cost of a terminal no text matches (productive rules never use one)."""


def _shortest_lexemes(grammar: Grammar) -> dict[int, int]:
    """Per terminal, the length of its shortest lexeme: the depth of the first
    lexer state that accepts it, breadth first from ``START``."""
    table, accepts = grammar.lexer.table, grammar.lexer.accepts
    found: dict[int, int] = {}
    depth = {START: 0}
    pending = deque([START])
    while pending:
        state = pending.popleft()
        for terminal in accepts[state]:
            found.setdefault(terminal, depth[state])
        base = state * 256
        for target in set(table[base : base + 256]):
            if target != DEAD and target not in depth:
                depth[target] = depth[state] + 1
                pending.append(target)
    return found

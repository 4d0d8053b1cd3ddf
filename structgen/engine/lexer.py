"""Lexing bytes into terminals: maximal munch with one byte of lookahead.

This is the lexing transducer of the GreatGramma seed (Sec. 3.1, Alg. 2) and the
semantics of docs/design.md §4. One automaton recognises every terminal at once; its
state is the lexer state (0: no lexeme started). A lexeme grows while the next
byte can extend it; when it cannot, the lexeme ends there and the byte starts the
next one. There is no backtracking: a lexeme that cannot be extended and is not
a whole terminal is an error, even if a shorter prefix of it was one. When
several terminals end at the same extent they are all emitted, as alternatives,
and the parser decides between them; ``%ignore`` terminals among them are the
parser's business too (they are dropped by it).
"""

from __future__ import annotations

from typing import Final

from structgen.engine.dfa import DEAD, ByteDFA, PatternCache
from structgen.engine.regex import Node

START: Final = 0
_NOTHING: Final[tuple[int, ...]] = ()  # "no lexeme ended"


class LexerError(ValueError):
    """A grammar whose terminals cannot be lexed (e.g. one matches the empty string)."""


class Lexer:
    """Steps the terminal automaton byte by byte, emitting finished lexemes."""

    dfa: Final[ByteDFA]
    table: Final[tuple[int, ...]]
    accepts: Final[list[tuple[int, ...]]]

    def __init__(
        self,
        dfa: ByteDFA,
        patterns: list[Node] | None = None,
        shortest: list[bool] | None = None,
        reachable_terminals: list[tuple[int, ...]] | None = None,
        pattern_cache: PatternCache | None = None,
    ) -> None:
        """``patterns`` (and ``shortest``, as ``build_dfa`` takes them): what ``dfa``
        was built from, kept for automata of fewer terminals (``views``), with the
        ``pattern_cache`` that built it; ``reachable_terminals``: known already
        (``joined``)."""
        if dfa.accepts[START]:
            raise LexerError(f"terminals {dfa.accepts[START]} match the empty string")
        self.dfa = dfa
        self.table = dfa.table
        self.accepts = dfa.accepts
        self.patterns: Final = patterns
        self.shortest: Final = shortest
        self.pattern_cache: Final = pattern_cache
        self.reachable_terminals: Final[list[tuple[int, ...]]] = (
            reachable_terminals if reachable_terminals is not None else _reachable_terminals(dfa)
        )
        # states with the same reachable terminals share a class: what a lexeme in
        # progress can become is then one int to memoize on
        classes: dict[tuple[int, ...], int] = {}
        self.reach_class: Final[list[int]] = [
            classes.setdefault(tuple(terminals), len(classes)) for terminals in self.reachable_terminals
        ]
        self.reach_class_count: Final[int] = len(classes)

    def joined(self, table: tuple[int, ...], accepts: list[list[int]]) -> Lexer:
        """This automaton with a region's states after its own: ``table`` and
        ``accepts`` as ``build_region`` gives them, its targets numbered on from
        here. Lexing from ``START`` never reaches them; they are where a view of
        fewer terminals (``views``) walks the vocabulary, and a lexeme ended there
        goes on from this automaton's ``START``."""
        dfa = ByteDFA(self.table + table, self.accepts + [tuple(labels) for labels in accepts])  # one copy of the table
        return Lexer(
            dfa,
            self.patterns,
            self.shortest,
            self.reachable_terminals + _reachable_terminals(dfa, self.dfa.state_count),
            self.pattern_cache,
        )

    def step(self, state: int, byte: int) -> tuple[int, tuple[int, ...]]:
        """Feed one byte in lexer ``state``.

        Returns the next lexer state and the terminals of the lexeme the byte
        ended (empty when the byte extended the current lexeme; a tuple, the
        automaton's own). The next state is
        ``DEAD`` when the byte cannot be lexed: it neither extends the lexeme nor
        follows a complete one, or no terminal starts with it.
        """
        following = self.table[state * 256 + byte]
        if following != DEAD:
            return following, _NOTHING
        finished = self.accepts[state]
        if state == START or not finished:
            return DEAD, _NOTHING
        return self.table[START * 256 + byte], finished

    def ends_within(self, state: int, pieces: list[bytes]) -> list[int]:
        """Per piece, the state its bytes lead to from ``state`` while each extends
        the lexeme in progress (``DEAD`` where one ends it or cannot follow): where
        a token leaves a lexeme it does not finish (``structgen.json.string_lengths``)."""
        table = self.table
        ends: list[int] = []
        for piece in pieces:
            current = state
            for byte in piece:
                current = table[current * 256 + byte]
                if current == DEAD:
                    break
            ends.append(current)
        return ends

    def finish(self, state: int) -> tuple[bool, tuple[int, ...]]:
        """End of input in ``state``: whether that is allowed, and the terminals of
        the last lexeme (empty if none was started)."""
        if state == START:
            return True, _NOTHING
        finished = self.accepts[state]
        return bool(finished), finished

    def lex(self, data: bytes) -> list[tuple[int, ...]] | None:
        """The alternatives of every lexeme of ``data``, or None if it cannot be lexed."""
        state = START
        out: list[tuple[int, ...]] = []
        for byte in data:
            state, finished = self.step(state, byte)
            if state == DEAD:
                return None
            if finished:
                out.append(finished)
        complete, finished = self.finish(state)
        if not complete:
            return None
        if finished:
            out.append(finished)
        return out


def _reachable_terminals(dfa: ByteDFA, first: int = 0) -> list[tuple[int, ...]]:
    """For each state from ``first`` on (a joined region, which leads nowhere
    else), the terminals accepted in a state reachable from it (itself included):
    what a lexeme in progress can still become. Terminal sets (as int bitmasks)
    flow backwards along the transitions until nothing changes; each state is
    requeued only when its set grows, so this is O(transitions x terminals) at
    worst and about one pass over the transitions in practice."""
    count = dfa.state_count - first
    table = dfa.table
    predecessors: list[list[int]] = [[] for _ in range(count)]
    for state in range(count):
        targets: set[int] = set()
        last = DEAD
        row = (first + state) * 256
        for byte in range(256):
            target = table[row + byte]
            if target != last:  # rows are runs of equal targets: look each run up once
                last = target
                if target != DEAD and target not in targets:
                    targets.add(target)
                    predecessors[target - first].append(state)
    reach: list[int] = []
    for labels in dfa.accepts[first:]:
        bits = 0
        for terminal in labels:
            bits |= 1 << terminal
        reach.append(bits)
    pending = [state for state in range(count) if reach[state]]
    while pending:
        state = pending.pop()
        bits = reach[state]
        for previous in predecessors[state]:
            merged = reach[previous] | bits
            if merged != reach[previous]:
                reach[previous] = merged
                pending.append(previous)
    out: list[tuple[int, ...]] = []
    for bits in reach:
        terminals: list[int] = []
        terminal = 0
        while bits:
            if bits & 1:
                terminals.append(terminal)
            bits >>= 1
            terminal += 1
        out.append(tuple(terminals))
    return out

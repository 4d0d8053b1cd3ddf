"""``ByteMatcher``: a grammar followed byte by byte, with no vocabulary.

The token ``Matcher`` needs a tokenizer because it computes masks; a validator
only asks, after each byte, whether the text can still become a sentence. That
is the engine's lexer and GLR stacks fed one byte at a time, with the matcher's
prefix test (the lexeme in progress can still become a terminal some stack
takes, docs/design.md §4). Each byte costs a lexer step, a parser step when a lexeme
ends, and a memoized prefix test: the cost of a chunk is proportional to it.
"""

from __future__ import annotations

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START
from structgen.engine.stack import GLRParser, StackNode
from structgen.grammar import Grammar


class ByteMatcher:
    """Feeds bytes to one grammar; refuses (without moving) a byte that leaves no
    completion."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.parser = GLRParser(grammar.table)
        self.state, self.tops = self.parser.start(grammar.lexer, grammar.ignored)
        # (lexer reach class, stack top ids) -> can the lexeme in progress still end well
        self._viable: dict[tuple[int, ...], bool] = {}

    def accept_byte(self, byte: int) -> bool:
        """Take one byte; False, and no change, when no valid text starts with the
        bytes so far and this one."""
        state, finished = self.grammar.lexer.step(self.state, byte)
        if state == DEAD:
            return False
        tops = self.tops
        if finished:
            tops = self.parser.feed_lexeme(tops, finished, self.grammar.ignored)
            if not tops:
                return False
        if not self._can_continue(state, tops):
            return False
        self.state = state
        self.tops = tops
        return True

    def accept(self, data: bytes) -> int:
        """Take bytes while they are viable; how many were taken."""
        for taken, byte in enumerate(data):
            if not self.accept_byte(byte):
                return taken
        return len(data)

    def can_terminate(self) -> bool:
        """Whether the bytes so far are a whole sentence."""
        complete, finished = self.grammar.lexer.finish(self.state)
        if not complete:
            return False
        tops = self.parser.feed_lexeme(self.tops, finished, self.grammar.ignored) if finished else self.tops
        return bool(tops) and self.parser.accepts_end(tops)

    def _can_continue(self, state: int, tops: list[StackNode]) -> bool:
        """Whether the lexeme in progress can still become a terminal that some
        stack takes (the engine matcher's test, remembered per lexer reach class
        and stacks: inside a long string this is one lookup a byte)."""
        if state == START:
            return True
        lexer = self.grammar.lexer
        key = (lexer.reach_class[state], *[node.uid for node in tops])
        known = self._viable.get(key)
        if known is None:
            ignored = self.grammar.ignored
            known = any(ignored[t] or self.parser.takes(tops, t) for t in lexer.reachable_terminals[state])
            self._viable[key] = known
        return known

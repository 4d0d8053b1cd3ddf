"""Which lexer states a compile builds the token groups of, and in what order.

Every JSON grammar's lexer counts a number's digits (a number past 308 digits
leaves the range of a double: about 310 states of a 475-state lexer for a
one-property schema), and the groups of each such state cost 100-130 µs at 128k
tokens: two thirds of a small schema's compile, for states that a text reaches
only after 24 digits in one number. Those states can end their lexeme, so their
groups are the start state's with the ended lexeme in front plus a walk of the
tokens that go on in it (``spanner.ended_groups``): one state's work, never a
chain of states, and nothing another state needs. So ``precompute`` builds
every state nearer the start than ``DEEP_FROM`` bytes, and every state farther
whose groups would not come that way (a bounded string's count, which a step
would build as a chain), nearest first; a step that goes deeper builds its
state then (at most one such state a step: the one it ends in).
"""

from __future__ import annotations

from typing import Final

from structgen.engine.dfa import DEAD
from structgen.engine.lexeme_groups import ends_lexeme
from structgen.engine.lexer import START, Lexer
from structgen.engine.tables import MaskTables

DEEP_FROM: Final = 24
"""Lexer states farther than this many bytes from the start, whose groups come
from the start's, are left to the step that first reaches them."""


def byte_depths(lexer: Lexer) -> list[int]:
    """Each state's distance from the start in bytes (-1: not reached from it)."""
    table = lexer.table
    depth = [-1] * lexer.dfa.state_count
    depth[START] = 0
    queue = [START]
    position = 0
    while position < len(queue):
        state = queue[position]
        position += 1
        row = state * 256
        last = DEAD
        for byte in range(256):
            target = table[row + byte]
            if target != last:  # rows run: one lookup per run
                last = target
                if target != DEAD and depth[target] < 0:
                    depth[target] = depth[state] + 1
                    queue.append(target)
    return depth


def precompute_order(lexer: Lexer, tables: MaskTables, deep_from: int = DEEP_FROM) -> list[int]:
    """The states whose groups a compile builds, nearest the start first (states
    no byte string reaches last: a joined view's)."""
    depth = byte_depths(lexer)
    order = sorted(range(len(depth)), key=lambda state: depth[state] if depth[state] >= 0 else len(depth))
    return [
        state for state in order
        if depth[state] <= deep_from or depth[state] < 0 or not ends_lexeme(tables.first_moves(state))
    ]


def alone_left(tables: MaskTables) -> int:
    """The lexer states whose groups are unbuilt and that a step would build alone,
    from the start's (built) groups and one walk of the tokens going on in the
    lexeme: states other than the start that can end their lexeme (0 while the
    start's own groups are unbuilt). It finds the first moves of every unbuilt
    state (kept by the tables): for ``step_bound``, a report, never for a step."""
    built = tables._groups
    if built[START] is None:
        return 0
    return sum([1 for state in range(len(built)) if built[state] is None and state != START
                and ends_lexeme(tables.first_moves(state))])

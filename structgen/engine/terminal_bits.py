"""Terminal sets as bit sets (an int, bit ``t`` for terminal ``t``): what a lexer
state can still become and what an LR state acts on, intersected without a loop
over terminals (``tables``)."""

from __future__ import annotations

from structgen.engine.lr import ACCEPT, LRTable


def bits(terminals: tuple[int, ...]) -> int:
    """``terminals`` as a bit set."""
    found = 0
    for terminal in terminals:
        found |= 1 << terminal
    return found


def action_bits(table: LRTable) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per LR state, the terminals it shifts (in a conflict too) and those it has
    an action for other than accepting (which ``PartialStacks.feed`` does not follow). A schema
    grammar's string states reach hundreds of terminals (each key is one): checked
    one by one, they made most of an entry's cost."""
    shifts: list[int] = []
    acts: list[int] = []
    for row in table.actions:
        shifted = 0
        acted = 0
        for terminal, actions in row.items():
            for action in actions:
                if action == ACCEPT:
                    continue
                acted |= 1 << terminal
                if action & 1 == 0:
                    shifted |= 1 << terminal
        shifts.append(shifted)
        acts.append(acted)
    return tuple(shifts), tuple(acts)

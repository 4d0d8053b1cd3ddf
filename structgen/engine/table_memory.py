"""What a compiled grammar's tables hold in memory, counted from the objects.

The token groups and mask entries of one grammar at 128k tokens take tens of
megabytes (a BFCL tool's schema: about 28 MB; 128 tools as one calls grammar:
about 140 MB), and they grow as steps build what compile left. A cache of
compiled grammars bounded only by a number of entries is then bounded by
nothing: ``structgen.compiled_budget`` keeps the bytes counted here under a
limit. The count is of the big parts, each shared object once (states share
groups, groups borrow token lists from the start's, entries share rows): the
ids, token sets and words of groups, the rows, the automaton's transition table, the interned
sequences and verdict classes, and a fixed size per memoized result. It leaves out what the
vocabulary's shared trie holds (its lexeme walks serve every grammar).
"""

from __future__ import annotations

from typing import Final

from structgen.engine.spanner import BORROWED_IDS, BORROWED_SET, TokenGroup
from structgen.engine.mask_entry import MaskEntry
from structgen.engine.tables import MaskTables

OBJECT_BYTES: Final = 64
"""A small object or a dictionary slot with its boxed key and value."""

GROUP_BYTES: Final = 212
"""A ``TokenGroup`` (120 bytes), its token list's header (32) and its set of first
bytes (a 256-bit int, 60)."""

ENTRY_BYTES: Final = 280
"""A ``MaskEntry`` with its context list, dependent tuple, refinement dict and slot."""

POINTER_BYTES: Final = 8

MEMO_BYTES: Final = 160
"""One distinct partial result (``partial_stacks.Context.results``): the object, its
stacks tuple and the dictionary slot that finds it by its stacks."""

MAP_ENTRY_BYTES: Final = 32
"""An entry of an ``IntMap``: two 8-byte slots, at most half of them full."""

FOLLOW_BYTES: Final = 120
"""The terminals left to follow from one lexer state and top (``MaskTables._follow_one``):
the dictionary slot and a short list."""


_counts = [0]


def tables_bytes(tables: MaskTables) -> int:
    """Bytes held by ``tables`` and the lexer automaton they walk (see the module)."""
    _counts[0] += 1
    stamp = _counts[0]  # marks the groups this count has seen: no set of ids to hash
    lexer = tables.lexer
    total = len(lexer.table) * POINTER_BYTES + len(lexer.accepts) * OBJECT_BYTES
    total += len(tables.sequences) * (3 * POINTER_BYTES + MAP_ENTRY_BYTES)  # three packed arrays and the intern map
    for groups in tables._groups:
        if groups is not None:
            total += OBJECT_BYTES + len(groups) * POINTER_BYTES
            for group in groups:
                if group.counted != stamp:
                    group.counted = stamp
                    total += _group_bytes(group)
    for entry in tables._entries.values():
        total += _entry_bytes(entry)
    for row in tables._shared:
        total += len(row) + OBJECT_BYTES
    total += len(tables._rows) * 2 * OBJECT_BYTES
    for moves in tables._moves.values():
        total += OBJECT_BYTES + len(moves) * POINTER_BYTES
    marks = tables._shift_marks
    total += (len(marks.their_mark) * 4 + len(marks.runs)) * 8
    memo = tables.memo
    total += memo.memoized * MAP_ENTRY_BYTES + memo.verdicts * OBJECT_BYTES
    for context in memo.contexts.values():  # results are shared by the sequences ending on the same stacks
        total += len(context.results) * MEMO_BYTES
    total += len(tables._verdict_classes) * (MAP_ENTRY_BYTES + POINTER_BYTES)
    total += len(tables._follows) * FOLLOW_BYTES
    total += len(tables.table._chains) * OBJECT_BYTES
    return total


def _group_bytes(group: TokenGroup) -> int:
    """A group's object, and what it owns: its token list and set unless borrowed
    (``TokenGroup.borrowed``), and the words a mask made of it."""
    total = GROUP_BYTES + len(group._words) * POINTER_BYTES
    if not group.borrowed & BORROWED_IDS:
        total += len(group.token_ids) * 4
    if not group.borrowed & BORROWED_SET and group._tokens > 0:
        total += group._tokens.bit_length() // 8
    return total


def _entry_bytes(entry: MaskEntry) -> int:
    total = ENTRY_BYTES + (len(entry.dependent) + len(entry.context)) * POINTER_BYTES
    for deeper in entry.deeper.values():
        total += _entry_bytes(deeper)
    return total


def tables_growth(tables: MaskTables) -> int:
    """A number that grows whenever ``tables`` build something (groups, entries,
    refinements, memoized results): a count taken at one value holds until it changes."""
    built = tables.work.done + tables._builds + len(tables.sequences) + len(tables._groups)
    return built + tables.memo.memoized + tables.memo.verdicts + tables.memo.forgotten

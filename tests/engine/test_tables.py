"""Mask entries (``structgen/engine/tables.py``) against classifying every group."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from structgen import Grammar
from structgen.engine.partial_stacks import ContextMemo
from structgen.engine.tables import ALWAYS, DEPENDS, UNKNOWN_VIEW, MaskTables
from structgen.engine.tokenset import row_token_ids
from structgen.engine.vocab import build_trie

KEYS = [f"key{n}" for n in range(12)]


def schema_tables() -> tuple[Grammar, Callable[[], MaskTables]]:
    """A schema grammar with a dozen keys, and fresh tables for it over a small
    vocabulary of its pieces and random byte strings."""
    schema = {
        "type": "object",
        "properties": {key: {"type": ["integer", "string", "boolean"]} for key in KEYS},
        "required": KEYS[:3],
        "additionalProperties": False,
    }
    grammar = Grammar.from_json_schema(schema)
    rng = random.Random(4)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [f'"{key}"'.encode() for key in KEYS] + [f'"{key}": '.encode() for key in KEYS[::2]]
    pieces += [b'", "', b'"}', b"true, ", b'12, "k', b" ", b"\n  "]
    pieces += [bytes(rng.choice(b'key0123456789 {}:,"tru') for _ in range(rng.randint(2, 6))) for _ in range(800)]
    trie = build_trie(pieces, excluded=[])
    return grammar, lambda: MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))


def test_groups_left_out_by_their_first_lexeme_are_never_taken() -> None:
    """An entry classifies only the groups whose first lexeme the top acts on (or
    that end no lexeme): its row and dependent groups are those of classifying
    every group of the lexer state, under every LR state."""
    grammar, fresh_tables = schema_tables()
    tables = fresh_tables()
    reference = fresh_tables()
    left_out = 0
    for lexer_state in range(grammar.lexer.dfa.state_count):
        groups = reference.groups(lexer_state)
        for lr_state in range(grammar.table.state_count):
            entry = tables.entry(lexer_state, lr_state)
            context = reference.memo.context(UNKNOWN_VIEW, [lr_state])
            verdicts = [reference._classify(context, group.sequence, group.end_state) for group in groups]
            always = sorted(t for g, v in zip(groups, verdicts) if v == ALWAYS for t in g.ids())
            assert row_token_ids(entry.row) == always
            expected = sorted(reference.sequences.states(g.sequence) + [g.end_state] for g, v in zip(groups, verdicts) if v == DEPENDS)
            assert sorted(tables.sequences.states(g.sequence) + [g.end_state] for g in entry.dependent) == expected
            actions = grammar.table.actions[lr_state]
            first = reference.sequences.first
            left_out += sum(1 for g in groups if g.sequence != 0 and not reference._first_taken(first[g.sequence], actions))
    assert left_out > 0  # the filter had groups to leave out


def test_tables_that_share_groups_classify_them_alike() -> None:
    """A group keeps the number of its verdict class in the tables that classified
    it last; tables given another's groups (as ``benchmarks/entry_builds.py`` builds
    entries again over kept groups) number them anew. Built in turns, entry by
    entry, both give every entry the same row and dependent groups."""
    grammar, fresh_tables = schema_tables()
    first = fresh_tables()
    second = fresh_tables()
    second._groups = first._groups
    second.sequences = first.sequences
    for lexer_state in range(grammar.lexer.dfa.state_count):
        for lr_state in range(grammar.table.state_count):
            ours = first.entry(lexer_state, lr_state)
            theirs = second.entry(lexer_state, lr_state)
            assert row_token_ids(ours.row) == row_token_ids(theirs.row)
            assert [id(group) for group in ours.dependent] == [id(group) for group in theirs.dependent]


def test_a_full_memo_forgets_its_least_recently_used_contexts_first() -> None:
    """Past its limit, the memo drops the contexts used longest ago until a
    ``FORGET_SHARE``-th of the limit is free; the others, and one asked for
    again just before, are kept."""
    memo = ContextMemo(64)
    made = []
    for top in range(3):
        context = memo.context(UNKNOWN_VIEW, [top])
        for sequence in range(30):
            context.remember(sequence, (), False)
        memo.memoized += 30
        made.append(context)
    assert memo.context(UNKNOWN_VIEW, [0]) is made[0]  # used again: now the most recent
    newest = memo.context(UNKNOWN_VIEW, [3])  # 90 results > 64: the least recent goes
    assert memo.forgotten == 1 and memo.memoized == 60
    assert memo.context(UNKNOWN_VIEW, [0]) is made[0] and memo.context(UNKNOWN_VIEW, [2]) is made[2]
    assert memo.context(UNKNOWN_VIEW, [3]) is newest
    again = memo.context(UNKNOWN_VIEW, [1])
    assert again is not made[1] and not again.after  # forgotten: made anew, empty


def every_entry_alike(grammar: Grammar, small: MaskTables, reference: MaskTables) -> Iterator[None]:
    """Build every entry in both tables, checking each pair has the same row and
    dependent groups; yields after each, for the caller's own checks."""
    for lexer_state in range(grammar.lexer.dfa.state_count):
        for lr_state in range(grammar.table.state_count):
            entry = small.entry(lexer_state, lr_state)
            expected = reference.entry(lexer_state, lr_state)
            assert row_token_ids(entry.row) == row_token_ids(expected.row)
            assert [g.ids() for g in entry.dependent] == [g.ids() for g in expected.dependent]
            yield


def test_entries_built_under_a_small_memo_are_the_same() -> None:
    """A memo, not a table: tables whose memo forgets all the time build every
    entry as tables that never forget, and the memo's counts stay those of the
    contexts it holds."""
    grammar, fresh_tables = schema_tables()
    small = fresh_tables()
    small.memo.limit = 40
    reference = fresh_tables()
    for _ in every_entry_alike(grammar, small, reference):
        contexts = small.memo.contexts.values()
        assert small.memo.memoized == sum(len(context.after) for context in contexts)
        assert small.memo.verdicts == sum(context.verdicts for context in contexts)
    assert small.memo.forgotten > 0 and small.memo.contexts  # forgot some, never all
    assert reference.memo.forgotten == 0


def test_the_terminals_left_to_follow_drop_their_oldest_past_the_limit() -> None:
    """The terminals a lexeme in progress leaves to follow, per lexer state and
    top, stay within their limit by dropping the oldest, and the entries built
    meanwhile are those of tables that keep them all."""
    grammar, fresh_tables = schema_tables()
    small = fresh_tables()
    small.follow_limit = 30
    reference = fresh_tables()
    for _ in every_entry_alike(grammar, small, reference):
        assert len(small._follows) <= 30
    assert len(reference._follows) > 30  # the small tables had to drop some

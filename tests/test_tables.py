"""Mask entries (``structgen/engine/tables.py``) against classifying every group."""

from __future__ import annotations

import random

from structgen import Grammar
from structgen.engine.tables import ALWAYS, DEPENDS, MaskTables
from structgen.engine.tokenset import row_token_ids
from structgen.engine.vocab import build_trie

KEYS = [f"key{n}" for n in range(12)]


def test_groups_left_out_by_their_first_lexeme_are_never_taken() -> None:
    """An entry classifies only the groups whose first lexeme the top acts on (or
    that end no lexeme): its row and dependent groups are those of classifying
    every group of the lexer state, under every LR state."""
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
    tables = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
    reference = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
    left_out = 0
    for lexer_state in range(grammar.lexer.dfa.state_count):
        groups = reference.groups(lexer_state)
        for lr_state in range(grammar.table.state_count):
            entry = tables.entry(lexer_state, lr_state)
            context = reference._context([lr_state])
            verdicts = [reference._classify(context, group.sequence, group.end_state) for group in groups]
            always = sorted(t for g, v in zip(groups, verdicts) if v == ALWAYS for t in g.ids())
            assert row_token_ids(entry.row) == always
            expected = sorted(reference.sequences.states(g.sequence) + [g.end_state] for g, v in zip(groups, verdicts) if v == DEPENDS)
            assert sorted(tables.sequences.states(g.sequence) + [g.end_state] for g in entry.dependent) == expected
            actions = grammar.table.actions[lr_state]
            first = reference.sequences.first
            left_out += sum(1 for g in groups if g.sequence != 0 and not reference._first_taken(first[g.sequence], actions))
    assert left_out > 0  # the filter had groups to leave out

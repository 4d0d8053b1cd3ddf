"""The token-level transducer equals feeding each token's bytes to the lexer alone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from structgen import Grammar, TokenizerInfo
from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.lexeme_groups import lexeme_groups
from structgen.engine.spanner import (
    EMPTY_SEQUENCE,
    SequenceTable,
    token_groups,
)
from structgen.engine.shifted_groups import ShiftMarks, shift_renaming
from structgen.engine.tables import SHIFT_FROM_STATES, MaskTables
from structgen.engine.vocab import build_trie

JSON_LARK = (Path(__file__).resolve().parents[2] / "grammars" / "json.lark").read_text()


def brute_force(lexer: Lexer, vocab: list[bytes], excluded: set[int], start: int) -> dict[int, tuple[list[int], int]]:
    out = {}
    for token_id, data in enumerate(vocab):
        if not data or token_id in excluded:
            continue
        state = start
        ended: list[int] = []
        for byte in data:
            before = state
            state, finished = lexer.step(state, byte)
            if state == DEAD:
                break
            if finished:
                ended.append(before)
        if state != DEAD:
            out[token_id] = (ended, state)
    return out


def spans_as_dict(lexer: Lexer, trie: TokenTrie, start: int, table: SequenceTable) -> dict[int, tuple[list[int], int]]:
    return {
        t: (table.states(group.sequence), group.end_state)
        for group in token_groups(lexer, trie, start, table)
        for t in group.token_ids
    }


def json_lexer() -> Lexer:
    return Grammar.from_lark(JSON_LARK).lexer


def test_small_vocabulary_every_lexer_state() -> None:
    lexer = json_lexer()
    rng = random.Random(1)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(b'{}[]:,"\\ 0123456789.-eEtrufalsn') for _ in range(rng.randint(2, 7))) for _ in range(2000)]
    pieces += ['"é"'.encode(), "日本".encode(), '"😀",'.encode(), b'1, "a": [true, null]}']
    trie = build_trie(pieces, excluded=[])
    table = SequenceTable()
    for start in range(lexer.dfa.state_count):
        assert spans_as_dict(lexer, trie, start, table) == brute_force(lexer, pieces, set(), start), start


def test_real_vocabulary_matches_brute_force(infos: dict[str, TokenizerInfo]) -> None:
    info = infos["smollm2"]
    lexer = json_lexer()
    trie = build_trie(info.decoded_vocab, info.special_token_ids)
    table = SequenceTable()
    excluded = set(info.special_token_ids)
    for start in [START, lexer.dfa.run(b'"ab'), lexer.dfa.run(b"12"), lexer.dfa.run(b"tr")]:
        assert start != DEAD
        assert spans_as_dict(lexer, trie, start, table) == brute_force(lexer, info.decoded_vocab, excluded, start)


def test_sequences_are_interned() -> None:
    table = SequenceTable()
    a = table.extend(table.extend(EMPTY_SEQUENCE, 3), 5)
    assert table.extend(table.extend(EMPTY_SEQUENCE, 3), 5) == a
    assert table.states(a) == [3, 5] and table.states(EMPTY_SEQUENCE) == []
    assert len(table) == 3
    assert table.first[a] == 3 and table.first[table.parent[a]] == 3 and table.first[EMPTY_SEQUENCE] == -1


def test_states_accepting_the_same_terminals_are_one_name() -> None:
    """A lexeme is its alternatives: the states that accept the same terminals end
    one lexeme, named by the first of them, in every sequence."""
    table = SequenceTable()
    table.canonize([(), (1,), (2,), (1,)])
    assert table.extend(EMPTY_SEQUENCE, 3) == table.extend(EMPTY_SEQUENCE, 1) != table.extend(EMPTY_SEQUENCE, 2)
    assert table.states(table.extend(table.extend(EMPTY_SEQUENCE, 2), 3)) == [2, 1]
    table.canonize([(), (1,), (2,), (1,), (2,)])  # a lexer joined with views has grown
    assert table.extend(EMPTY_SEQUENCE, 4) == table.extend(EMPTY_SEQUENCE, 2)


@pytest.mark.parametrize("text", [b'{"a": 1}', b"[true,false]", b'"x"'])
def test_a_text_as_one_token(text: bytes) -> None:
    """A whole document as a single token ends the same lexemes the lexer does."""
    lexer = json_lexer()
    trie = build_trie([text], excluded=[])
    table = SequenceTable()
    ended, end_state = spans_as_dict(lexer, trie, START, table)[0]
    lexemes = lexer.lex(text)
    assert lexemes is not None
    assert [lexer.accepts[s] for s in ended] + [lexer.accepts[end_state]] == lexemes


SCHEMAS_FOR_GROUPS = [
    ({"type": "object", "properties": {"alpha": {"type": "string", "maxLength": 3}, "beta": {"type": "integer"}, "alps": {}}}, {}),
    (
        {
            "type": "object",
            "properties": {
                "n": {"type": "number", "minimum": 0},
                "k": {"type": "integer", "maximum": 120},
                "e": {"enum": ["x", 1.5, True, None]},
                "l": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2},
            },
            "additionalProperties": {"type": "string"},
        },
        {"max_whitespace": 3},
    ),
    # bounded strings: counted states, renamed from the next one's (shifted_groups)
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 70}, "t": {"type": "string", "minLength": 3, "maxLength": 30}}},
     {"lexer_max_length": 2048}),  # counted by the lexer, not the matcher
]


@pytest.mark.parametrize(("schema", "options"), SCHEMAS_FOR_GROUPS)
def test_groups_built_from_other_states_equal_a_whole_walk(schema: dict[str, object], options: dict[str, int]) -> None:
    """``MaskTables.groups`` converges most states from a similar one (a key's
    prefix from the string body, the k-th space before a token from the start) and
    relabels the start's groups for the bytes that end a lexeme (after a closing
    quote, a number's digits); every state's groups must equal a walk of the
    whole trie."""
    _check_groups_against_whole_walks(Grammar.from_json_schema(schema, **options), None)


def test_short_chains_of_renamed_groups_equal_a_whole_walk() -> None:
    """Built on first use, a chain of renamed groups stops after ``chain_limit``
    states and the next one starts there: chains of 3, states asked for from the
    highest number down (another order than ``precompute``'s)."""
    schema, options = SCHEMAS_FOR_GROUPS[-1]
    tables = _check_groups_against_whole_walks(Grammar.from_json_schema(schema, **options), 3)
    assert tables._partner  # the renaming was used


KEYWORDS_LARK = r"""
start: stmt+
stmt: "for" NAME "{" stmt* "}" | "func" NAME "(" ")" "{" stmt* "}" | "return" NAME ";" | NAME "=" NAME ";"
NAME: /[a-z_][a-z0-9_]*/
%ignore " "
"""


def test_states_inside_an_identifier_end_one_lexeme_and_share_groups() -> None:
    """Every state inside an identifier (``f``, ``fo``, ``fun``, ``x1``) ends the
    same lexeme, NAME, so sequences name it once (``SequenceTable.canonize``) and
    each such state's groups are converged from another's, sharing its group
    objects; a keyword's own state (``for``) ends another lexeme. Every state's
    groups still equal a walk of the whole trie."""
    rng = random.Random(3)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(b"forfuncreturnxyz_019 ;={}()") for _ in range(rng.randint(2, 8))) for _ in range(4000)]
    pieces += [b" for", b"func", b" return", b"turn;", b"or x", b"unc f()"]
    grammar = Grammar.from_lark(KEYWORDS_LARK)
    tables = _check_groups_against_whole_walks(grammar, None, pieces)
    lexer = grammar.lexer
    inside = [lexer.dfa.run(text) for text in [b"f", b"fo", b"fun", b"x1", b"retur"]]
    keyword = lexer.dfa.run(b"for")
    sequences = tables.sequences
    names = {sequences.extend(EMPTY_SEQUENCE, state) for state in inside}
    assert len(set(inside)) == len(inside) and len(names) == 1
    assert sequences.extend(EMPTY_SEQUENCE, keyword) not in names
    objects = [{id(group) for group in tables.groups(state)} for state in inside]
    shared = [i for i in range(len(inside)) if any(objects[i] & objects[j] for j in range(len(inside)) if j != i)]
    assert len(shared) >= len(inside) - 1


def _check_groups_against_whole_walks(grammar: Grammar, chain_limit: int | None, pieces: list[bytes] | None = None) -> MaskTables:
    if pieces is None:
        pieces = _json_pieces()
    trie = build_trie(pieces, excluded=[])
    tables = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
    states = list(range(grammar.lexer.dfa.state_count))
    if chain_limit is not None:
        tables.chain_limit = chain_limit
        states.reverse()
    first_byte = trie.first_byte()
    for state in states:
        derived = tables.groups(state)
        assert all(group.size == len(group.ids()) for group in derived)
        # first bytes carried over from another state's groups (``ended_groups``) are those of the ids
        assert all(group.first_bytes(first_byte) == sum(1 << b for b in {first_byte[t] for t in group.ids()})
                   for group in derived), state
        expected = {
            (group.sequence, group.end_state): sorted(group.token_ids)
            for group in token_groups(grammar.lexer, trie, state, tables.sequences)
        }
        assert {(group.sequence, group.end_state): sorted(group.ids()) for group in derived} == expected, state
    return tables


def _json_pieces() -> list[bytes]:
    rng = random.Random(2)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(b'abelpstxyz{}[]:,"\\ 0123456789') for _ in range(rng.randint(2, 6))) for _ in range(3000)]
    pieces += [bytes(rng.choice(b' \n\t{}[]:,"0.5e-+tnf') for _ in range(rng.randint(2, 7))) for _ in range(2000)]
    pieces += [b'"alpha"', b'"alp', b'ha":', "日本".encode(), b"    ", b" \n  ", b'  "n": ', b"120, ", b"1.5e+3}"]
    # tokens longer than shifted_groups' proof, some ending the string and going on
    long_text = "abxyz 0129日é"
    pieces += ["".join(rng.choice(long_text) for _ in range(rng.randint(14, 45))).encode() for _ in range(300)]
    pieces += ["".join(rng.choice(long_text) for _ in range(rng.randint(14, 40))).encode() + rng.choice([b'"', b'", "t', b'"}', b'\\n']) for _ in range(200)]
    return pieces


def test_lexeme_walks_are_shared_by_grammars_and_equal_a_whole_walk() -> None:
    """What the vocabulary does inside a JSON string is walked once per vocabulary
    (``TokenTrie.lexeme_walks``) and reused by the next grammar whose lexer has the
    same automaton there; the reused groups must still equal a whole walk."""
    rng = random.Random(4)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(b'abkeyz{}[]:,"\\\\ 0123456789u') for _ in range(rng.randint(2, 7))) for _ in range(4000)]
    trie = build_trie(pieces, excluded=[])
    first = Grammar.from_json_schema({"type": "object", "properties": {"key": {"type": "string"}}})
    second = Grammar.from_json_schema({"type": "array", "items": {"enum": ["a", 3]}, "maxItems": 3}, whitespace="compact")
    second_other = Grammar.from_json_schema({"type": "object", "additionalProperties": {"type": "string"}}, max_whitespace=2)
    walks = 0
    for grammar in [first, second, second_other]:
        tables = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
        for state in range(grammar.lexer.dfa.state_count):
            expected = {
                (group.sequence, group.end_state): sorted(group.token_ids)
                for group in token_groups(grammar.lexer, trie, state, tables.sequences)
            }
            assert {(g.sequence, g.end_state): sorted(g.ids()) for g in tables.groups(state)} == expected, state
        assert len(trie.lexeme_walks) >= walks
        walks = len(trie.lexeme_walks)
    string_body = Grammar.from_json_schema({"type": "string"}, whitespace="compact")
    inside = string_body.lexer.dfa.run(b'"ab')
    before = len(trie.lexeme_walks)
    assert lexeme_groups(string_body.lexer, trie, inside, SequenceTable(), len(pieces)) is not None
    assert len(trie.lexeme_walks) == before  # the string body's walk was already there


def test_counted_states_are_proved_alike_until_the_count_runs_out() -> None:
    """Inside a string of at most 70 characters, the state after k characters moves
    on as the state after k + 1 does (renamed), until the count is too close to
    its end for a 16-byte proof (any two far enough from it are alike); unrelated states are not."""
    grammar = Grammar.from_json_schema({"type": "string", "maxLength": 70}, whitespace="compact", lexer_max_length=2048)
    after = [grammar.lexer.dfa.run(b'"' + b"a" * k) for k in range(71)]
    renamed = shift_renaming(grammar.lexer, after[10], after[11])
    assert renamed is not None and renamed[after[11]] == after[10] and renamed[after[20]] == after[19]
    assert shift_renaming(grammar.lexer, after[60], after[61]) is None  # 16 more bytes run past the count
    assert shift_renaming(grammar.lexer, after[10], after[0]) is not None  # 60 and 70 left: alike for 16 bytes
    assert shift_renaming(grammar.lexer, after[10], START) is None


def test_a_chain_follows_the_state_a_proof_pairs_not_the_most_frequent_one() -> None:
    """Counting units of a letter or a space and a letter: at a unit's boundary most
    tokens (space-led here) go to the state inside a unit, yet the state that moves
    on as this one does is the next boundary (``MaskTables._next_link``). Every
    state's groups still equal a whole walk."""
    grammar = Grammar.from_lark('start: S\nS: /"([a-z]| [a-z]){0,600}"/')
    rng = random.Random(5)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [b" " + bytes(rng.choice(b"abcxyz ") for _ in range(rng.randint(1, 5))) for _ in range(3000)]
    pieces += [bytes(rng.choice(b"abcxyz ") for _ in range(rng.randint(2, 20))) for _ in range(1000)]
    trie = build_trie(pieces, excluded=[])
    tables = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
    boundary = grammar.lexer.dfa.run(b'"ab')
    inside = grammar.lexer.dfa.run(b'"ab ')
    followers = tables._references(boundary)[2]
    assert followers[0] == inside
    link = tables._next_link(boundary, followers, {boundary})
    assert link is not None and link[0] == grammar.lexer.dfa.run(b'"abc')
    for state in range(grammar.lexer.dfa.state_count):
        expected = {
            (group.sequence, group.end_state): sorted(group.token_ids)
            for group in token_groups(grammar.lexer, trie, state, tables.sequences)
        }
        assert {(g.sequence, g.end_state): sorted(g.ids()) for g in tables.groups(state)} == expected, state


def test_a_count_of_words_is_renamed_two_bytes_on() -> None:
    """Counting words (at most 600 words of letters, spaces between): inside a
    word the next count's state is two bytes on (a space, then a letter), so
    ``MaskTables._next_link`` looks one byte further than the first bytes lead;
    and asked for one state inside a word, whose best reference (the run of
    spaces after it, where most tokens lead both) is unbuilt, the tables follow
    the count by renaming rather than walk that reference whole. Every state's
    groups still equal a whole walk."""
    grammar = Grammar.from_lark('start: S\nS: /"([a-z]+ +){0,600}[a-z]+"/')
    rng = random.Random(6)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [b" " + bytes(rng.choice(b"abcxyz") for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    pieces += [bytes(rng.choice(b"abcxyz ") for _ in range(rng.randint(2, 24))) for _ in range(1000)]
    pieces += [bytes(rng.choice(b"abc ") for _ in range(rng.randint(2, 20))) + b'"' for _ in range(200)]
    trie = build_trie(pieces, excluded=[])
    tables = MaskTables(grammar.lexer, grammar.table, grammar.ignored, trie, len(pieces))
    assert grammar.lexer.dfa.state_count >= SHIFT_FROM_STATES
    inside = [grammar.lexer.dfa.run(b'"ab' + b" ab" * k) for k in range(8)]
    followers = tables._references(inside[2])[2]
    assert inside[3] not in followers  # two bytes on: no first byte leads there
    link = tables._next_link(inside[2], followers, {inside[2]})
    assert link is not None and link[0] == inside[3]
    tables.groups(inside[5])
    assert all(tables._groups[state] is not None for state in inside[5:])  # renamed along the count, in one chain
    for state in range(grammar.lexer.dfa.state_count):
        expected = {
            (group.sequence, group.end_state): sorted(group.token_ids)
            for group in token_groups(grammar.lexer, trie, state, tables.sequences)
        }
        assert {(g.sequence, g.end_state): sorted(g.ids()) for g in tables.groups(state)} == expected, state


def test_a_row_cut_into_runs_spells_the_row_back() -> None:
    """``shift_renaming`` compares rows run by run (``ShiftMarks.row``): each run's
    last byte and target, in order, must give back every byte's target, and a
    row is cut once however often it is asked for."""
    grammar = Grammar.from_json_schema({"type": "string", "maxLength": 5, "pattern": "^[a-f0-9é]+$"})
    table = grammar.lexer.table
    marks = ShiftMarks()
    marks.begin(grammar.lexer.dfa.state_count)
    for state in range(grammar.lexer.dfa.state_count):
        at = marks.row(table, state)
        spelled: list[int] = []
        index = at
        while len(spelled) < 256:
            spelled += [int(marks.runs[index + 1])] * (int(marks.runs[index]) + 1 - len(spelled))
            assert index == at or marks.runs[index + 1] != marks.runs[index - 1]  # a run holds every byte of its target there
            index += 2
        assert spelled == list(table[state * 256 : state * 256 + 256]) and marks.row(table, state) == at

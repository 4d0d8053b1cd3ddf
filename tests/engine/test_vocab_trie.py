"""The vocabulary trie walk must equal running the automaton on each token alone."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.engine.dfa import DEAD
from structgen.engine.vocab import build_trie


def run(table: list[int], state: int, data: bytes) -> int:
    for byte in data:
        state = table[state * 256 + byte]
        if state == DEAD:
            return DEAD
    return state


def brute_force(vocab: list[bytes], excluded: list[int], table: list[int], start: int) -> dict[int, int]:
    out = {}
    for token_id, data in enumerate(vocab):
        if data and token_id not in excluded:
            state = run(table, start, data)
            if state != DEAD:
                out[token_id] = state
    return out


def random_table(rng: random.Random, states: int, alphabet: bytes, density: float) -> list[int]:
    table = [DEAD] * (states * 256)
    for state in range(states):
        for byte in alphabet:
            if rng.random() < density:
                table[state * 256 + byte] = rng.randrange(states)
    return table


@settings(max_examples=200, deadline=None)
@given(
    vocab=st.lists(st.binary(min_size=0, max_size=6).map(lambda b: bytes(x % 4 + 97 for x in b)), max_size=60),
    seed=st.integers(0, 2**32),
)
def test_walk_matches_brute_force(vocab: list[bytes], seed: int) -> None:
    rng = random.Random(seed)
    excluded = [i for i in range(len(vocab)) if rng.random() < 0.1]
    trie = build_trie(vocab, excluded)
    table = random_table(rng, rng.randint(1, 5), b"abcd", rng.choice([0.3, 0.7, 1.0]))
    for start in range(len(table) // 256):
        ids, states = trie.walk(table, start)
        assert len(ids) == len(set(ids))
        assert dict(zip(ids, states)) == brute_force(vocab, excluded, table, start)


def test_duplicate_bytes_and_prefixes() -> None:
    vocab = [b"a", b"ab", b"", b"ab", b"abc", b"b"]
    trie = build_trie(vocab, excluded=[5])
    # root, a, ab, abc: shared prefixes are one node each
    assert trie.node_count == 4
    assert trie.max_depth == 3
    assert sorted(trie.token_ids) == [0, 1, 3, 4]
    table = [DEAD] * 256
    table[ord("a")] = 0
    table[ord("b")] = 0
    ids, _ = trie.walk(table, 0)
    assert sorted(ids) == [0, 1, 3]  # "abc" dies on "c"; "b" is excluded


def test_dead_subtrees_are_skipped() -> None:
    """A dead first byte skips every token under it in one step."""
    vocab = [bytes([b]) + bytes(range(k)) for b in range(2) for k in range(1, 50)]
    trie = build_trie(vocab, excluded=[])
    table = [DEAD] * 512
    for byte in range(256):
        table[256 + byte] = 1  # state 1 accepts anything
    table[1] = 1  # from the start, only byte 0x01 leads somewhere
    ids, states = trie.walk(table, 0)
    assert sorted(ids) == list(range(49, 98))
    assert set(states) == {1}


def test_empty_vocabulary() -> None:
    trie = build_trie([], excluded=[])
    assert trie.node_count == 1
    assert trie.walk([DEAD] * 256, 0) == ([], [])

"""Token sets as words (``vec[i64]``) and bitmask rows: the same bits whichever way
a set is made, at the edges of words and for vocabularies of any size."""

from __future__ import annotations

import random

import pytest
from librt.vecs import vec
from mypy_extensions import i32

from structgen.engine.spanner import OR_FROM, TokenGroup, union_words
from structgen.engine.tokenset import add_ids, add_words, empty_words, int_words, row_token_ids, row_words, word_count, words_row


def expected_row(ids: set[int], vocab_size: int) -> bytes:
    return sum(1 << i for i in ids).to_bytes(word_count(vocab_size) * 4, "little")


@pytest.mark.parametrize("vocab_size", [1, 31, 32, 33, 63, 64, 65, 100, 50_257, 128_000])
def test_words_and_rows_hold_the_same_bits(vocab_size: int) -> None:
    rng = random.Random(vocab_size)
    edges = {0, 31, 32, 63, 64, 127, 128, vocab_size - 1}
    first = {i for i in edges if i < vocab_size} | {rng.randrange(vocab_size) for _ in range(50)}
    second = {rng.randrange(vocab_size) for _ in range(50)} | {vocab_size - 1}
    words = empty_words(vocab_size)
    add_ids(words, vec[i32]([i32(i) for i in sorted(first)]))
    row = words_row(words, word_count(vocab_size))
    assert row == expected_row(first, vocab_size)
    assert row_token_ids(row) == sorted(first)
    again = row_words(row, vocab_size)  # a row back to words: a copy
    add_words(again, int_words(sum(1 << i for i in second), vocab_size))
    assert words_row(again, word_count(vocab_size)) == expected_row(first | second, vocab_size)
    assert words_row(words, word_count(vocab_size)) == row  # the copy left the original alone


@pytest.mark.parametrize("vocab_size", [65, 50_257, 128_000])
def test_a_union_of_rows_and_groups_holds_every_token_of_each(vocab_size: int) -> None:
    """``union_words`` takes each group by its ids, its token set or its kept words,
    whichever it holds and is cheaper; the union is the same either way, and a
    group's kept words stay its own tokens whatever unions they went into."""
    rng = random.Random(vocab_size)

    def sample(count: int) -> set[int]:
        return {rng.randrange(vocab_size) for _ in range(count)}

    listed = TokenGroup(1, 0)  # ids only
    listed_ids = sample(40)
    listed.token_ids = vec[i32]([i32(i) for i in sorted(listed_ids)])
    listed.size = len(listed_ids)
    held = TokenGroup(2, 0)  # a token set only, as a converged large group
    held_ids = sample(min(vocab_size // 2, OR_FROM + 100))
    held._tokens = sum(1 << i for i in held_ids)
    held.size = len(held_ids)
    both = TokenGroup(3, 0)  # ids and a set, small enough to be listed
    both_ids = sample(30)
    both.token_ids = vec[i32]([i32(i) for i in sorted(both_ids)])
    both.size = len(both_ids)
    both.tokens(vocab_size)
    large = TokenGroup(4, 0)  # ids only, too many to list for every mask: or-ed by its words
    large_ids = sample(min(vocab_size // 2, OR_FROM + 200)) if vocab_size > OR_FROM else set()
    large.token_ids = vec[i32]([i32(i) for i in sorted(large_ids)])
    large.size = len(large_ids)
    first, second = sample(20), sample(20)
    rows = [expected_row(first, vocab_size), expected_row(second, vocab_size)]
    for chosen_rows in ([], rows[:1], rows):
        union = union_words(chosen_rows, [listed, held, both, large], vocab_size)
        expected = listed_ids | held_ids | both_ids | large_ids
        expected = expected | (first if chosen_rows else set()) | (second if len(chosen_rows) == 2 else set())
        assert words_row(union, word_count(vocab_size)) == expected_row(expected, vocab_size)
    assert words_row(union_words(rows, [], vocab_size), word_count(vocab_size)) == expected_row(first | second, vocab_size)
    assert rows[0] == expected_row(first, vocab_size)  # the rows themselves are left alone
    if large_ids:
        assert words_row(large.words(vocab_size), word_count(vocab_size)) == expected_row(large_ids, vocab_size)

"""Token sets as words (``vec[i64]``) and bitmask rows: the same bits whichever way
a set is made, at the edges of words and for vocabularies of any size."""

from __future__ import annotations

import random

import pytest
from librt.vecs import vec
from mypy_extensions import i32

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

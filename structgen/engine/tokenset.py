"""Token sets: Python ints for algebra, bitmask rows for output, words between.

A set over 128k tokens is 16 KB. As an int (bit ``i`` set: token ``i`` is in
the set) a union is one ``|`` running at memory speed in C; the token groups'
algebra uses ints. The output is a bitmask row, bytes in XGrammar's layout (bit
``i % 32`` of little-endian int32 word ``i // 32``), which is exactly
``int.to_bytes(size, "little")``; but that conversion, its reverse and hashing
an int cost ten times a union, and they were a third of a mask entry's cost.
So masks and entries are built as words, a ``vec[i64]`` whose memory is the row
(on a little-endian machine): a row becomes words and back by a copy, and a
union is a native loop. Lists of token ids are packed ``vec[i32]``
(``librt``): a quarter of a list's memory, and nothing for the garbage
collector to scan.
"""

from __future__ import annotations

import sys
from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

assert sys.byteorder == "little", "words are bitmask rows only on a little-endian machine"

_BIT: Final = vec[i64]([i64(1 << k) if k < 63 else i64(-(1 << 63)) for k in range(64)])
"""Bit ``k`` of a word (a table: mypyc shifts the literal ``1`` as a C int)."""


def token_set(token_ids: vec[i32], vocab_size: int) -> int:
    """The set of ``token_ids`` (each below ``vocab_size``); the bits are set in a
    packed ``vec[u8]``, whose indexing is native (a bytearray's is not)."""
    buffer = empty_buffer(vocab_size)
    add_to_row(buffer, token_ids)
    return int.from_bytes(memoryview(buffer), "little")


def empty_buffer(vocab_size: int) -> vec[u8]:
    """A zeroed bit buffer for ``vocab_size`` tokens."""
    return vec[u8]([u8(0)] * ((vocab_size + 7) >> 3))


def word_count(vocab_size: int) -> int:
    """Words in a bitmask row for ``vocab_size`` tokens."""
    return (vocab_size + 31) >> 5


def add_to_row(row: vec[u8], token_ids: vec[i32]) -> None:
    """Set the bits of ``token_ids`` in ``row`` (a row, or a bit buffer)."""
    for token_id in token_ids:
        index = i64(token_id) >> 3
        row[index] = row[index] | u8(1 << (token_id & 7))


def has_id(row: vec[u8], token_id: i32) -> bool:
    """Whether ``token_id`` is set in ``row`` (a row, or a bit buffer)."""
    return (row[i64(token_id) >> 3] >> u8(token_id & 7)) & u8(1) != u8(0)


def row_token_ids(row: bytes) -> list[int]:
    """The ids set in ``row``, ascending."""
    out: list[int] = []
    for index in range(len(row)):
        byte = row[index]
        if byte:
            base = index << 3
            for bit in range(8):
                if byte >> bit & 1:
                    out.append(base + bit)
    return out


def empty_words(vocab_size: int) -> vec[i64]:
    """A zeroed set of ``vocab_size`` tokens as words."""
    return vec[i64]([i64(0)] * ((vocab_size + 63) >> 6))


def row_words(row: bytes, vocab_size: int) -> vec[i64]:
    """A copy of ``row`` (``word_count(vocab_size)`` int32 words) as words."""
    size = ((vocab_size + 63) >> 6) * 8
    if len(row) < size:
        row = row + bytes(size - len(row))
    return vec[i64](memoryview(row).cast("q"))


def int_words(tokens: int, vocab_size: int) -> vec[i64]:
    """The int set ``tokens`` (below ``vocab_size``) as words."""
    return vec[i64](memoryview(tokens.to_bytes(((vocab_size + 63) >> 6) * 8, "little")).cast("q"))


def words_row(words: vec[i64], row_words: int) -> bytes:
    """``words`` as a bitmask row of ``row_words`` int32 words."""
    row = bytes(memoryview(words))
    return row if len(row) == row_words * 4 else row[: row_words * 4]


def add_ids(words: vec[i64], token_ids: vec[i32]) -> None:
    """Put ``token_ids`` in the set ``words``."""
    for token_id in token_ids:
        value = i64(token_id)
        index = value >> 6
        words[index] = words[index] | _BIT[value & 63]


def add_words(words: vec[i64], other: vec[i64]) -> None:
    """Put the tokens of ``other`` (as long) in the set ``words``."""
    for index in range(len(words)):
        words[index] = words[index] | other[index]

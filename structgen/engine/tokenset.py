"""Token sets: Python ints for algebra, bitmask rows for output.

A set over 128k tokens is 16 KB. As an int (bit ``i`` set: token ``i`` is in
the set) a union is one ``|`` running at memory speed in C. The output is a
bitmask row, bytes in XGrammar's layout (bit ``i % 32`` of little-endian int32
word ``i // 32``), which is exactly ``int.to_bytes(size, "little")``; but that
conversion costs twenty times a union, so rows are made once per stored set and
small changes to a row are made bit by bit. Lists of token ids are packed
``vec[i32]`` (``librt``): a quarter of a list's memory, and nothing for the
garbage collector to scan.
"""

from __future__ import annotations

from librt.vecs import vec
from mypy_extensions import i32, i64, u8


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


def to_row(tokens: int, words: int) -> bytes:
    """``tokens`` as a bitmask row of ``words`` int32 words."""
    return tokens.to_bytes(words * 4, "little")


def add_to_row(row: vec[u8], token_ids: vec[i32]) -> None:
    """Set the bits of ``token_ids`` in ``row`` (a row, or a bit buffer)."""
    for token_id in token_ids:
        index = i64(token_id) >> 3
        row[index] = row[index] | u8(1 << (token_id & 7))


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

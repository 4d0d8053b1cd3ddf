"""Token sets as Python ints: bit ``i`` set means token ``i`` is in the set.

A mask over 128k tokens is 16 KB; as one int, a union is a single ``|`` that
runs at memory speed in C, and ``int.to_bytes(n, "little")`` is already the
bitmask row layout (bit ``i % 32`` of little-endian word ``i // 32``). The
engine builds, unions and stores token sets this way; numpy sees only the bytes.
"""

from __future__ import annotations


def token_set(token_ids: list[int], vocab_size: int) -> int:
    """The set of ``token_ids`` (each below ``vocab_size``)."""
    buffer = bytearray((vocab_size + 7) >> 3)
    for token_id in token_ids:
        buffer[token_id >> 3] |= 1 << (token_id & 7)
    return int.from_bytes(buffer, "little")


def token_ids(tokens: int) -> list[int]:
    """The ids in ``tokens``, ascending."""
    out: list[int] = []
    data = tokens.to_bytes((tokens.bit_length() + 7) >> 3, "little")
    for index in range(len(data)):
        byte = data[index]
        if byte:
            base = index << 3
            for bit in range(8):
                if byte >> bit & 1:
                    out.append(base + bit)
    return out


def row_bytes(tokens: int, word_count: int) -> bytes:
    """``tokens`` as ``word_count`` little-endian int32 words (a bitmask row);
    ids past the row are dropped."""
    size = word_count * 4
    if tokens.bit_length() > size * 8:
        tokens &= (1 << (size * 8)) - 1
    return tokens.to_bytes(size, "little")

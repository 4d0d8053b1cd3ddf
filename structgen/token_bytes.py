"""The exact bytes of a token, read from how its vocabulary spells pieces.

Tokenizers store pieces as strings in one of a few spellings; each spelling maps
back to bytes exactly. Decoding a token id to text (``decode([id])``) does not:
it loses partial UTF-8 sequences, strips or adds spaces, and cleans up text, so
nothing here ever calls it.
"""

from __future__ import annotations

import re
from functools import lru_cache

SENTENCEPIECE_SPACE = "\u2581"  # "▁", SentencePiece's spelling of a space
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@lru_cache(maxsize=1)
def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: one printable character per byte.

    Printable Latin-1 bytes stand for themselves; the other 68 bytes (controls,
    space, 0x7F-0xA0, 0xAD) take the characters from U+0100 on, in byte order.
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    decoder = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            decoder[chr(256 + extra)] = b
            extra += 1
    return decoder


class PieceSpellingError(ValueError):
    """A vocabulary piece that its tokenizer's spelling cannot produce."""


def byte_level_piece_bytes(piece: str) -> bytes:
    """Bytes of a byte-level BPE piece (GPT-2, Llama 3, Qwen, DeepSeek, Tekken in HF form)."""
    decoder = gpt2_byte_decoder()
    try:
        return bytes(decoder[ch] for ch in piece)
    except KeyError as exc:
        raise PieceSpellingError(
            f"piece {piece!r} has character {exc.args[0]!r}, outside the byte-level alphabet"
        ) from None


def sentencepiece_piece_bytes(piece: str, byte_fallback: bool) -> bytes:
    """Bytes of a SentencePiece-style piece: ``▁`` is a space, ``<0xNN>`` one raw byte."""
    if byte_fallback:
        match = _BYTE_PIECE.fullmatch(piece)
        if match:
            return bytes([int(match.group(1), 16)])
    return piece.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8")


def is_byte_piece(piece: str) -> bool:
    return _BYTE_PIECE.fullmatch(piece) is not None

"""Sets of Unicode code points, and their UTF-8 spelling as byte ranges.

Terminals are written over characters but lexed over bytes. A character class is
kept as sorted, disjoint, inclusive code-point ranges, flattened
``[lo0, hi0, lo1, hi1, ...]``; ``utf8_sequences`` turns a range into the byte-range
sequences that spell exactly its characters. Surrogates (U+D800-U+DFFF) are never
members: UTF-8 cannot encode them.

Python's ``\\d``, ``\\w``, ``\\s`` and case-insensitive matching are ``re``'s own:
the categories are what ``re`` matches in a string of every character, and each
cased character is put to ``re`` against a case-insensitive class; tests compare
every code point.
"""

from __future__ import annotations

import array
import re
import sys
from typing import Final

MAX_CODE_POINT: Final = 0x10FFFF
SURROGATE_LOW: Final = 0xD800
SURROGATE_HIGH: Final = 0xDFFF
ALL: Final[list[int]] = [0, SURROGATE_LOW - 1, SURROGATE_HIGH + 1, MAX_CODE_POINT]


def normalize(ranges: list[int]) -> list[int]:
    """Sort and merge ``[lo, hi, ...]`` pairs, and drop the surrogates."""
    pairs = sorted((ranges[i], ranges[i + 1]) for i in range(0, len(ranges), 2))
    out: list[int] = []
    for lo, hi in pairs:
        if out and lo <= out[-1] + 1:
            if hi > out[-1]:
                out[-1] = hi
        else:
            out.append(lo)
            out.append(hi)
    return intersect(out, ALL) if _touches_surrogates(out) else out


def _touches_surrogates(ranges: list[int]) -> bool:
    for i in range(0, len(ranges), 2):
        if ranges[i] <= SURROGATE_HIGH and ranges[i + 1] >= SURROGATE_LOW:
            return True
    return False


def union(a: list[int], b: list[int]) -> list[int]:
    return normalize(a + b)


def complement(ranges: list[int]) -> list[int]:
    """Every code point (but surrogates) not in ``ranges`` (which must be normalized)."""
    out: list[int] = []
    next_low = 0
    for i in range(0, len(ranges), 2):
        if ranges[i] > next_low:
            out.append(next_low)
            out.append(ranges[i] - 1)
        next_low = ranges[i + 1] + 1
    if next_low <= MAX_CODE_POINT:
        out.append(next_low)
        out.append(MAX_CODE_POINT)
    return intersect(out, ALL)


def intersect(a: list[int], b: list[int]) -> list[int]:
    out: list[int] = []
    i = 0
    j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i], b[j])
        hi = min(a[i + 1], b[j + 1])
        if lo <= hi:
            out.append(lo)
            out.append(hi)
        if a[i + 1] < b[j + 1]:
            i += 2
        else:
            j += 2
    return out


def contains(ranges: list[int], code_point: int) -> bool:
    for i in range(0, len(ranges), 2):
        if ranges[i] <= code_point <= ranges[i + 1]:
            return True
    return False


def every_character() -> str:
    """Every code point but the surrogates, in order, as one string: ``re`` and
    ``str``'s methods then scan the whole of Unicode in C, where a loop over
    1.1 million code points cost a cold compile 0.4 s a class."""
    codes = array.array("I", range(SURROGATE_LOW))
    codes.extend(range(SURROGATE_HIGH + 1, MAX_CODE_POINT + 1))
    if codes.itemsize != 4:  # no 4-byte array type here: spell it the slow way
        return "".join([chr(code_point) for code_point in codes])
    return codes.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def code_point_at(index: int) -> int:
    """The code point at ``index`` of ``every_character()``."""
    return index if index < SURROGATE_LOW else index + (SURROGATE_HIGH - SURROGATE_LOW + 1)


def _matched_ranges(pattern: str, text: str) -> list[int]:
    """The code points ``pattern`` (one class, repeated) matches in ``text``
    (``every_character()``), as ranges; a run across the surrogates is two."""
    out: list[int] = []
    for match in re.finditer(pattern, text):
        lo = int(match.start())
        hi = int(match.end()) - 1
        if lo < SURROGATE_LOW <= hi:
            out.extend((lo, SURROGATE_LOW - 1, SURROGATE_HIGH + 1, code_point_at(hi)))
        else:
            out.extend((code_point_at(lo), code_point_at(hi)))
    return out


_CASE_CHUNK: Final = 256


def _cased_in(text: str) -> list[int]:
    """Every code point whose match can change under ``re.IGNORECASE``: one whose
    lower, upper, case-folded or swapped form is another. A chunk equal to each of
    its forms holds none (each character maps to at least one, so equal lengths
    mean each maps to itself), so only the chunks that differ are read a
    character at a time."""
    cased: list[int] = []
    for start in range(0, len(text), _CASE_CHUNK):
        chunk = text[start:start + _CASE_CHUNK]
        if chunk.lower() == chunk and chunk.upper() == chunk and chunk.casefold() == chunk \
                and chunk.swapcase() == chunk:
            continue
        for offset in range(len(chunk)):
            ch = chunk[offset]
            if ch.lower() != ch or ch.upper() != ch or ch.casefold() != ch or ch.swapcase() != ch:
                cased.append(code_point_at(start + offset))
    return cased


# ``\d``, ``\w`` and ``\s`` as ``re`` matches them, and the cased code points
# (``_CASED``), read from one scan of every character on first use
_UNICODE_TABLES: Final[dict[str, list[int]]] = {}
_CASED: Final = "cased"
_CATEGORY_PATTERNS: Final = {"digit": r"\d+", "word": r"\w+", "space": r"\s+"}
ASCII_CATEGORIES: Final[dict[str, list[int]]] = {
    "digit": [0x30, 0x39],
    "word": [0x30, 0x39, 0x41, 0x5A, 0x5F, 0x5F, 0x61, 0x7A],
    "space": [0x09, 0x0D, 0x20, 0x20],
}


def _unicode_table(name: str) -> list[int]:
    if not _UNICODE_TABLES:
        text = every_character()
        for category_name, pattern in _CATEGORY_PATTERNS.items():
            _UNICODE_TABLES[category_name] = _matched_ranges(pattern, text)
        _UNICODE_TABLES[_CASED] = _cased_in(text)
    return _UNICODE_TABLES[name]


def category(name: str, ascii_only: bool) -> list[int]:
    """``\\d`` (``"digit"``), ``\\w`` (``"word"``) or ``\\s`` (``"space"``), as ``re`` defines them."""
    if ascii_only:
        return ASCII_CATEGORIES[name]
    return _unicode_table(name)


def _cased_code_points() -> list[int]:
    """Every code point whose match can change under ``re.IGNORECASE``."""
    return _unicode_table(_CASED)


def ignore_case(ranges: list[int], ascii_only: bool) -> list[int]:
    """The characters a class matches under ``re.IGNORECASE``.

    Case-insensitive matching only adds characters (a negated class is the
    complement of its positive part), and only cased ones; each cased character
    is decided by ``re`` itself against the class, so the result is ``re``'s.
    """
    flags = re.IGNORECASE | (re.ASCII if ascii_only else 0)
    pattern = re.compile("[" + class_source(ranges) + "]", flags)
    added: list[int] = []
    for code_point in _cased_code_points():
        if pattern.fullmatch(chr(code_point)) is not None:
            added.append(code_point)
            added.append(code_point)
    return union(ranges, added)


def class_source(ranges: list[int]) -> str:
    """The body of a ``re`` character class matching exactly ``ranges``."""
    parts: list[str] = []
    for i in range(0, len(ranges), 2):
        lo = ranges[i]
        hi = ranges[i + 1]
        parts.append(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}")
    return "".join(parts)


_UTF8_LENGTH_ENDS: Final = (0x7F, 0x7FF, 0xFFFF)


def utf8_sequences(lo: int, hi: int) -> list[list[int]]:
    """Byte-range sequences spelling exactly the code points ``lo..hi`` in UTF-8.

    Each sequence is flat ``[b0_lo, b0_hi, b1_lo, b1_hi, ...]``; a string of bytes
    encodes a code point in the range iff it matches one sequence. The range is
    split until, at each byte position, every combination of the bytes in range is
    a valid encoding inside ``lo..hi``.
    """
    out: list[list[int]] = []
    pending: list[tuple[int, int]] = [(lo, hi)]
    while pending:
        start, end = pending.pop()
        split = False
        for boundary in _UTF8_LENGTH_ENDS:
            if start <= boundary < end:
                pending.append((boundary + 1, end))
                pending.append((start, boundary))
                split = True
                break
        if split:
            continue
        if end <= 0x7F:
            out.append([start, end])
            continue
        length = len(chr(start).encode("utf-8"))
        for i in range(1, length):
            mask = (1 << (6 * i)) - 1
            if start & ~mask != end & ~mask:
                if start & mask != 0:
                    pending.append(((start | mask) + 1, end))
                    pending.append((start, start | mask))
                    split = True
                    break
                if end & mask != mask:
                    pending.append((end & ~mask, end))
                    pending.append((start, (end & ~mask) - 1))
                    split = True
                    break
        if split:
            continue
        first = chr(start).encode("utf-8")
        last = chr(end).encode("utf-8")
        sequence: list[int] = []
        for k in range(length):
            sequence.append(first[k])
            sequence.append(last[k])
        out.append(sequence)
    return out

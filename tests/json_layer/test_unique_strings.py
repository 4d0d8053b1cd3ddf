"""``unique_strings``: the ``uniqueItems`` trie walk inside strings and keys, by
characters, finds what stepping ``Scan`` byte by byte finds: the same tokens
refused, the same tokens left to ``avoidable`` at the same points. Between values
the walk tries only the bytes ``Scan`` may take there."""

from __future__ import annotations

import random
from typing import Any

import pytest

import structgen
from structgen import Grammar, TokenizerInfo
from structgen.json.unique_items import (
    COLON, END, FIRST, MEMBER, MEMBER_FIRST, MODE_BYTES, NEXT, VALUE, Scan, UniqueItems, _canonical,
)
from structgen.json.unique_strings import utf8_length

# escapes (short and \u, a surrogate pair, a lone surrogate), UTF-8 of 2-4 bytes, a quote inside
STRINGS_TEXT = r'["alpha", "al\"pha", "é日本", "a\u00e9", "x/y", "tab\t", "𝄞!", "\ud834\udd1e?", "\ud800x", "al'
OBJECTS_TEXT = '[{"k": "alpha", "né": "日本"}, {"k": "al\\u0070ha", "n\\u00e9": "日'
PIECES = [b'"', b"\\", b"u", b"0", b"00e9", b"al", b"pha", b"ph", b"a", b"l", b"x", b"/", b"t", b"\\t", b"\\u",
          "é".encode(), "日".encode(), "日".encode()[:2], "日".encode()[2:], "𝄞".encode()[:1], "𝄞".encode()[1:],
          b", ", b"]", b"}", b":", b" ", b"k", b"n", b"\x01", b"\xc0", b"?", b"!", b"d834", b"dd1e", b"d800"]


def vocabulary() -> TokenizerInfo:
    rng = random.Random(7)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [b"".join(rng.choice(PIECES) for _ in range(rng.randint(2, 4))) for _ in range(3_000)]
    pieces.append(b"")  # the stop token
    return TokenizerInfo(list(dict.fromkeys(pieces)), stop_token_ids=[len(dict.fromkeys(pieces)) - 1])


def point(scan: Scan) -> tuple[Any, ...]:
    """A point of the JSON text by value (two walks build equal frames apart)."""
    def frame(f: Any) -> tuple[Any, ...]:
        parts = tuple((k, _canonical(v)) for k, v in f.parts) if f.is_object else tuple(map(_canonical, f.parts))
        return (f.is_object, f.node, f.count, f.key, tuple(map(_canonical, f.values)), parts)
    return (scan.mode, scan.raw, scan.lex, scan.node, tuple(map(frame, scan.frames)))


def walked(unique: UniqueItems, scan: Scan, compiled: Any) -> tuple[set[int], list[tuple[Any, ...]]]:
    refused: set[int] = set()
    to_check: list[tuple[int, Scan]] = []
    unique._walk(scan, compiled.trie, refused, to_check)
    return refused, sorted((token, point(after)) for token, after in to_check)


@pytest.mark.parametrize("schema, text", [
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, STRINGS_TEXT),
    ({"type": "array", "uniqueItems": True, "items": {
        "type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": {"type": "string"}}},
     OBJECTS_TEXT),
])
def test_the_string_walk_finds_what_stepping_scan_finds(schema: Any, text: str) -> None:
    info = vocabulary()
    compiled = structgen.compile(Grammar.from_json_schema(schema), info, lazy=True)
    unique = compiled.checks[0].unique
    data = text.encode()
    by_characters = 0
    for end in range(1, len(data) + 1):
        scan = unique.feed(unique.start(), data[:end])
        assert isinstance(scan, Scan) and scan.frames, data[:end]  # no repeat, still inside the array
        if not unique.at_risk(scan):
            continue
        by_characters += unique._string_point(scan) is not None
        fast = walked(unique, scan, compiled)
        unique.by_characters = False
        try:
            assert walked(unique, scan, compiled) == fast, data[:end]
        finally:
            unique.by_characters = True
    assert by_characters >= 10  # points inside strings, where the walk by characters was taken


def test_utf8_lengths() -> None:
    for char in "aé日𝄞":
        spelled = char.encode()
        assert utf8_length(spelled[0]) == len(spelled)
        assert all(utf8_length(b) == 0 for b in spelled[1:])  # a continuation byte begins nothing
    assert utf8_length(0xC0) == utf8_length(0xF5) == 0


def test_between_values_the_walk_tries_every_byte_scan_takes() -> None:
    """``MODE_BYTES`` (the bytes the walk and ``avoidable`` try in each mode) holds
    every byte ``Scan.step`` takes there: leaving the others out changes no mask."""
    schema = {"type": "array", "uniqueItems": True, "items": {
        "type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": {"type": "string"}}}
    unique = structgen.compile(Grammar.from_json_schema(schema), vocabulary(), lazy=True).checks[0].unique
    modes = set()
    for text in ["", "[", '[{"k": "a"}, ', "[{", '[{"k": "a", ', '[{"k"', '[{"k": "a"', '[{"k": "a"}]', '[{"k": "a"} ']:
        scan = unique.feed(unique.start(), text.encode())
        assert isinstance(scan, Scan)
        modes.add(scan.mode)
        assert {byte for byte in range(256) if unique.step(scan, byte) is not None} <= MODE_BYTES[scan.mode], text
    assert modes == {VALUE, FIRST, MEMBER_FIRST, MEMBER, COLON, NEXT, END}

"""``structgen.json.syntax`` against independent oracles: Python's ``json`` and UTF-8
codec for strings, RFC 8259's number grammar as a regex for numbers."""

from __future__ import annotations

import json
import random
import re

import pytest

from structgen.json import syntax

STRING_PIECES = [
    b"a", b"Z", b" ", b"~", b"\x7f", b'\\"', b"\\\\", b"\\/", b"\\n", b"\\t", b"\\b", b"\\u0041", b"\\u00e9",
    b"\\ud83d\\ude00", b"\\uD800\\uDC00", b"\\udbff\\udfff", b"\\ud800", b"\\udc00", b"\\ud800\\ud800\\udc00",
    b"\\uD800\\u0041", b"\\ud800\\n", "é".encode(), "€".encode(), "😀".encode(), "\U0010ffff".encode(), "\ud7ff".encode(),
]
"""Valid pieces of a string's body, surrogates escaped alone or in pairs included."""
NOISE = [b"\\", b"\\x", b"\\u12", b"\\uZ", b"\x00", b"\x1f", b"\n", b'"', b"\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80",
         b"\xed\xa0\x80", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf5", b"\xff", b"\xe2\x82", b"\xf0\x9f"]
"""Pieces that break a string (or close it early)."""


def oracle_string(body: bytes) -> str | None:
    """The value of the JSON string ``"body"``, None where it is none."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        value = json.loads('"' + text + '"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def scanned(body: bytes) -> tuple[int, int, int]:
    """The automaton over ``body`` then a closing quote: the index it stopped at
    (``len(body)``: the quote closed it or came too early; past it: the quote was
    escaped), its state there, characters counted."""
    state, count = syntax.PLAIN, 0
    for index, byte in enumerate(body + b'"'):
        if syntax.starts_character(state, byte):
            count += 1
        following = syntax.string_next(state, byte)
        if following < 0:
            return index, following, count
        state = following
    return len(body) + 1, state, count  # the quote did not close it (it was escaped)


@pytest.mark.parametrize("seed", range(8))
def test_strings_agree_with_json_and_count_characters(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(600):
        pieces = [rng.choice(STRING_PIECES) for _ in range(rng.randrange(0, 6))]
        if rng.random() < 0.4:
            pieces.insert(rng.randrange(len(pieces) + 1), rng.choice(NOISE))
        body = b"".join(pieces)
        value = oracle_string(body)
        stopped, state, count = scanned(body)
        if value is not None:
            assert (stopped, state) == (len(body), syntax.CLOSED), body
            assert count == len(value), (body, count, value)
        else:
            assert (stopped, state) != (len(body), syntax.CLOSED), body
            # the automaton refuses the first byte after which no string is valid:
            # the body up to it can still be finished, the byte itself cannot
            if state == syntax.ERROR:
                assert _finishable(body[:stopped]), body
                if stopped < len(body):  # (else the closing quote came too early)
                    assert not _finishable(body[: stopped + 1]), body


def _finishable(prefix: bytes) -> bool:
    """Whether some bytes make ``prefix`` a whole string body (a brute-force oracle:
    every continuation a character in progress can take, then the quote)."""
    endings = [b""] + [bytes([a]) for a in range(0x80, 0xC0)]
    tails = [b"", b"0", b"00", b"000", b"0000", b"n", b"u0000", b"\\u0000"]
    for tail in tails:
        for ending in endings:
            for more in (b"", ending, ending + ending, b"\x80\x80", b"\xa0\x80", b"\x90\x80\x80", b"\x80\x80\x80"):
                if oracle_string(prefix + tail + more) is not None:
                    return True
    return False


def test_states_named() -> None:
    assert syntax.string_run(syntax.PLAIN, b"ab\\") == syntax.ESCAPE
    assert syntax.string_run(syntax.PLAIN, b"\\ud83d") == syntax.PAIR
    assert syntax.string_run(syntax.PLAIN, b"\\ud83d\\") == syntax.PAIR_ESCAPE
    assert syntax.string_run(syntax.PLAIN, b"\\ud83d\\ude00") == syntax.PLAIN
    assert syntax.string_run(syntax.PLAIN, "€".encode()[:1]) == syntax.CONT2
    assert syntax.string_run(syntax.PLAIN, b'x"y') == syntax.CLOSED
    assert syntax.string_run(syntax.PLAIN, b"\x01") == syntax.ERROR
    states = [syntax.PLAIN, syntax.PAIR, syntax.ESCAPE, syntax.PAIR_ESCAPE, syntax.HEX4, syntax.HEX3, syntax.HEX2,
              syntax.HEX1, syntax.HIGH3, syntax.HIGH2, syntax.HIGH1, syntax.LOW4, syntax.LOW3, syntax.CONT1,
              syntax.CONT2, syntax.CONT3, syntax.CONT2_E0, syntax.CONT2_ED, syntax.CONT3_F0, syntax.CONT3_F4]
    assert sorted(states) == list(range(syntax.STRING_STATES))  # distinct, small, and ERROR/CLOSED apart


def test_expected_names_what_was_wanted() -> None:
    def wanted(body: bytes) -> str:
        stopped, state, _ = scanned(body)
        assert state == syntax.ERROR
        before = syntax.string_run(syntax.PLAIN, body[:stopped])
        return syntax.string_expected(before, body[stopped])

    assert wanted(b"\\x").startswith("an escape")
    assert wanted(b"\\u12g") == "a hexadecimal digit"
    assert wanted(b"\xe2\x82A") == "the next byte of a UTF-8 character"
    assert wanted(b"\xff") == "UTF-8 text"
    assert wanted(b"a\tb").startswith("a character (control characters")


NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""RFC 8259's ``number``."""


@pytest.mark.parametrize("seed", range(4))
def test_numbers_agree_with_the_rfc(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "-+.eE0123456789" + "0123456789" * 2
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 9)))
        state = syntax.number_run(text.encode())
        whole = NUMBER.fullmatch(text) is not None
        assert (state >= 0 and syntax.number_ended(state)) == whole, text
        # a prefix the automaton keeps is one some number goes on from
        viable = state >= 0
        extendable = any(NUMBER.fullmatch(text + tail) for tail in ("", "0", "1", ".0", "e0", "0e0", "1.0", "1e1"))
        assert viable == extendable, text


def test_literals() -> None:
    assert syntax.literal_of(ord("t")) == b"true"
    assert syntax.literal_of(ord("n")) == b"null"
    assert syntax.literal_of(ord("x")) == b""

"""JSON's lexical automata, one byte at a time: strings, numbers, literals (RFC 8259).

The project's one JSON scanner below the structure: the streaming validator
(``structgen.json_scan``), the ``uniqueItems`` check (``unique_items``) and the
counted string lengths (``string_lengths``) each keep their own structure above
(open containers, values, counts) and follow strings and numbers through these
automata, so the three agree on what JSON text is byte by byte.

States are small ints, so a caller keeps one in a slot or a tuple; ``ERROR``
(the byte continues no JSON text) and ``CLOSED`` (the closing quote) are negative.
"""

from __future__ import annotations

from typing import Final

ERROR: Final = -1
CLOSED: Final = -2

# -- strings (read from just after the opening quote)

PLAIN: Final = 0
"""Between characters."""
PAIR: Final = 1
"""Between characters, just after a high surrogate's ``\\uD8xx`` escape: a low
half that follows is the same character."""
ESCAPE: Final = 2
"""After a backslash."""
PAIR_ESCAPE: Final = 3
"""After a backslash in ``PAIR``."""
HEX4: Final = 4
HEX3: Final = 5
HEX2: Final = 6
HEX1: Final = 7
"""After ``\\u``, with 4-1 hex digits to come."""
HIGH3: Final = 8
HIGH2: Final = 9
HIGH1: Final = 10
"""A ``\\u`` escape that is a high surrogate so far (``\\uD``, ``\\uD8``...), 3-1 to come."""
LOW4: Final = 11
LOW3: Final = 12
"""After ``\\u`` in ``PAIR_ESCAPE`` (a low half if it goes on ``D[C-F]``), 4-3 to come."""
CONT1: Final = 13
CONT2: Final = 14
CONT3: Final = 15
"""Before 1-3 continuation bytes (0x80-0xBF) of a UTF-8 character."""
CONT2_E0: Final = 16
CONT2_ED: Final = 17
CONT3_F0: Final = 18
CONT3_F4: Final = 19
"""After the first byte E0, ED, F0 or F4, whose next byte has a narrower range
(RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF)."""
STRING_STATES: Final = 20

SHORT_ESCAPES: Final = b'"\\/bfnrt'
HEX_DIGITS: Final = b"0123456789abcdefABCDEF"


def _is_hex(byte: int) -> bool:
    return 0x30 <= byte <= 0x39 or 0x61 <= byte <= 0x66 or 0x41 <= byte <= 0x46


def string_next(state: int, byte: int) -> int:
    """The state after ``byte`` inside a string: ``CLOSED`` at its closing quote,
    ``ERROR`` where no JSON string goes on so."""
    if state <= PAIR:
        if byte == 0x22:
            return CLOSED
        if byte == 0x5C:
            return PAIR_ESCAPE if state == PAIR else ESCAPE
        if byte < 0x20:
            return ERROR  # a control character is written escaped
        if byte < 0x80:
            return PLAIN
        return _utf8_first(byte)
    if state == ESCAPE or state == PAIR_ESCAPE:
        if byte == 0x75:
            return LOW4 if state == PAIR_ESCAPE else HEX4
        return PLAIN if byte in SHORT_ESCAPES else ERROR
    if state >= CONT1:
        return _utf8_next(state, byte)
    if not _is_hex(byte):
        return ERROR
    if state == HEX4 or state == LOW4:
        if byte == 0x64 or byte == 0x44:  # d, D
            return HIGH3 if state == HEX4 else LOW3
        return HEX3
    if state == HIGH3:
        return HIGH2 if byte in b"89abAB" else HEX2
    if state == LOW3:  # a low half (two hex digits to come), else another escape, maybe a high half
        return HIGH2 if byte in b"89abAB" else HEX2
    if state == HIGH2:
        return HIGH1
    if state == HIGH1:
        return PAIR
    return PLAIN if state == HEX1 else state + 1  # HEX3 -> HEX2 -> HEX1


def _utf8_first(byte: int) -> int:
    if 0xC2 <= byte <= 0xDF:
        return CONT1
    if byte == 0xE0:
        return CONT2_E0
    if byte == 0xED:
        return CONT2_ED
    if 0xE1 <= byte <= 0xEF:
        return CONT2
    if byte == 0xF0:
        return CONT3_F0
    if byte == 0xF4:
        return CONT3_F4
    if 0xF1 <= byte <= 0xF3:
        return CONT3
    return ERROR  # a continuation byte, C0, C1 or F5-FF


def _utf8_next(state: int, byte: int) -> int:
    low, high = 0x80, 0xBF
    if state == CONT2_E0:
        low = 0xA0
    elif state == CONT2_ED:
        high = 0x9F
    elif state == CONT3_F0:
        low = 0x90
    elif state == CONT3_F4:
        high = 0x8F
    if not low <= byte <= high:
        return ERROR
    if state == CONT1:
        return PLAIN
    if state == CONT2 or state == CONT2_E0 or state == CONT2_ED:
        return CONT1
    return CONT2


def starts_character(state: int, byte: int) -> bool:
    """Whether ``byte`` (which ``string_next`` takes from ``state``) begins a
    character of the string's value, as JSON Schema counts them: an escape, a
    ``\\u`` surrogate pair or a UTF-8 sequence is one. A low half's escape counts
    where it turns out not to be one (at its first hex digit, or second)."""
    if state <= PAIR:
        return byte != 0x22 and not (state == PAIR and byte == 0x5C)
    if state == PAIR_ESCAPE:
        return byte != 0x75
    if state == LOW4:
        return byte != 0x64 and byte != 0x44
    if state == LOW3:
        return byte not in b"cdefCDEF"
    return False


def string_run(state: int, data: bytes) -> int:
    """The state after ``data`` read inside a string from ``state`` (``CLOSED``
    or ``ERROR`` at the first byte that closes or breaks it)."""
    for byte in data:
        state = string_next(state, byte)
        if state < 0:
            return state
    return state


def string_expected(state: int, byte: int) -> str:
    """What a string in ``state`` wanted where ``byte`` took it to ``ERROR``."""
    if state == ESCAPE or state == PAIR_ESCAPE:
        return 'an escape (one of " \\ / b f n r t u)'
    if HEX4 <= state <= LOW3:
        return "a hexadecimal digit"
    if state >= CONT1:
        return "the next byte of a UTF-8 character"
    if byte < 0x20:
        return "a character (control characters must be escaped)"
    return "UTF-8 text"


# -- numbers (read from their first byte)

NUMBER_START: Final = 0
MINUS: Final = 1
ZERO: Final = 2
INTEGER: Final = 3
DOT: Final = 4
FRACTION: Final = 5
E: Final = 6
EXPONENT_SIGN: Final = 7
EXPONENT: Final = 8
"""Before the first byte; after ``-``, a leading ``0``, digits of the integer part,
``.``, fraction digits, ``e``, the exponent's sign, exponent digits."""


def number_next(state: int, byte: int) -> int:
    """The number automaton of RFC 8259: the state after ``byte``, or ``ERROR``
    where the number does not go on so (it may still have ended before it:
    ``number_ended``)."""
    digit = 0x30 <= byte <= 0x39
    if state == NUMBER_START:
        if byte == 0x2D:
            return MINUS
        return (ZERO if byte == 0x30 else INTEGER) if digit else ERROR
    if state == MINUS:
        return (ZERO if byte == 0x30 else INTEGER) if digit else ERROR
    if state == ZERO or state == INTEGER:
        if digit:
            return INTEGER if state == INTEGER else ERROR
        if byte == 0x2E:
            return DOT
        return E if byte == 0x65 or byte == 0x45 else ERROR
    if state == DOT:
        return FRACTION if digit else ERROR
    if state == FRACTION:
        if digit:
            return FRACTION
        return E if byte == 0x65 or byte == 0x45 else ERROR
    if state == E:
        if byte == 0x2B or byte == 0x2D:
            return EXPONENT_SIGN
        return EXPONENT if digit else ERROR
    if state == EXPONENT_SIGN or state == EXPONENT:
        return EXPONENT if digit else ERROR
    return ERROR


def number_ended(state: int) -> bool:
    """Whether a number in ``state`` is whole (a byte that does not go on ends it)."""
    return state == ZERO or state == INTEGER or state == FRACTION or state == EXPONENT


def number_run(data: bytes) -> int:
    """The state after ``data`` read as a number from its first byte."""
    state = NUMBER_START
    for byte in data:
        state = number_next(state, byte)
        if state < 0:
            return state
    return state


# -- literals

LITERALS: Final = (b"true", b"false", b"null")


def literal_of(first: int) -> bytes:
    """The literal a value beginning with ``first`` must be (empty: none)."""
    for literal in LITERALS:
        if literal[0] == first:
            return literal
    return b""

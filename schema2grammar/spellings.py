"""How a grammar spells the characters of a JSON string: one convention for every
terminal that holds a string's text.

JSON writes most characters several ways (``é``, ``\\u00e9``, ``\\u00E9``; ``/``
and ``\\/``; ``A`` and ``\\u0041``). Where a terminal for a constrained string
(``const``, ``enum``, a property name, a ``pattern``, a ``format``) takes fewer
spellings than the terminal for a free string, the grammar refuses valid text
(``json.dumps`` escapes every non-ASCII character by default); where a
complement ("any string but these words") misses a spelling of a word, it
accepts the word itself. So every such terminal spells each character the same
way, by this module:

- printable ASCII (0x20-0x7E) other than ``"`` and ``\\``: the character itself
  only, and ``/`` also as ``\\/``;
- ``"`` as ``\\"`` or ``\\u0022``, ``\\`` as ``\\\\`` or ``\\u005c``;
- a control character (0x00-0x1F): its short escape where JSON has one (``\\b \\f
  \\n \\r \\t``) and ``\\u00XX``, never raw (JSON forbids it);
- 0x7F and every other character of the BMP that is not a surrogate: itself (its
  UTF-8 bytes) or ``\\uXXXX``;
- a character past the BMP: itself or its surrogate pair ``\\uD8xx\\uDCxx`` (a
  high half, then a low one); a lone surrogate is no character and has no spelling.

Hex digits are read in either case everywhere.

One narrowing, everywhere (free strings too): printable ASCII is never written
as a ``\\u`` escape (``\\u0041`` for ``A``, ``\\u002f`` for ``/``). No JSON encoder
writes one, and without them the sets that fill schemas, ASCII names and values
and classes like ``[a-z0-9_]``, keep their plain literal and class regexes, while
"any character but these ASCII ones" has the same escapes as any character: a
complement's regex stays small and refuses every spelling of its words.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable
from typing import Any, Final

Ranges = list[tuple[int, int]]
"""Sorted, disjoint, inclusive code point ranges."""

MAX_CODE = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

ALL: Ranges = [(0, SURROGATES[0] - 1), (SURROGATES[1] + 1, MAX_CODE)]
"""Every character a string may hold (a lone surrogate has no spelling)."""

RAW: Ranges = [(0x20, 0x21), (0x23, 0x5B), (0x5D, SURROGATES[0] - 1), (SURROGATES[1] + 1, MAX_CODE)]
"""The characters that may be written as themselves."""

ESCAPED_BMP: Ranges = [(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0x7F, SURROGATES[0] - 1), (SURROGATES[1] + 1, 0xFFFF)]
"""The characters that may be written as one ``\\uXXXX``."""

ASTRAL = 0x10000
"""The first character written as a surrogate pair."""

SHORT_ESCAPES = {0x22: '"', 0x5C: "\\\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
"""The characters with a short escape, and the regex text for what follows the backslash."""

PLAIN_TEXT = re.compile(r"[ !#-.0-\[\]-~]*")
"""Texts whose only spelling is themselves (printable ASCII but ``"``, ``\\``, ``/``)."""

HEX_DIGIT = "[0-9a-fA-F]"

_sre: Final[Any] = importlib.import_module("re._parser")
_const: Final[Any] = importlib.import_module("re._constants")


def spellable(text: str) -> bool:
    """Whether some JSON text spells ``text``: it holds no lone surrogate."""
    return not any(SURROGATES[0] <= ord(char) <= SURROGATES[1] for char in text)


def spell_ranges(ranges: Iterable[tuple[int, int]]) -> str:
    """A regex for one character of ``ranges`` in each of its spellings (``ValueError``
    where no character of them has one)."""
    return _spell(tuple(normalize(ranges)))


def spell_char(char: str) -> str:
    """A regex for ``char`` in each of its spellings."""
    return _spell(((ord(char), ord(char)),))


def spell_text(text: str) -> str:
    """A regex for ``text`` (a string's decoded value) between the quotes, in each
    spelling of each character. Printable ASCII but ``"``, ``\\`` and ``/`` has one
    spelling: such a text (an ordinary name or value) is its plain escaped literal,
    as cheap as before. A lone surrogate has none: ``ValueError``."""
    if PLAIN_TEXT.fullmatch(text):
        return re.escape(text)
    out: list[str] = []
    plain = ""
    for char in text:
        if PLAIN_TEXT.fullmatch(char):
            plain += char
            continue
        out.append(re.escape(plain))
        plain = ""
        out.append(spell_char(char))
    out.append(re.escape(plain))
    return "".join(out)


@functools.lru_cache(maxsize=256)
def spell_regex(regex: str) -> str:
    """A regex over decoded text (Python's syntax: characters, classes, groups,
    alternatives, repeats) as a regex over its JSON text: each character it names
    in each of its spellings. What has no such reading (anchors, lookarounds,
    backreferences, ``\\d`` and its kin, flags) is a ``ValueError``."""
    parsed = _sre.parse(regex)
    if parsed.state.flags & ~int(re.UNICODE):
        raise ValueError("a flag has no reading over a string's characters here")
    return _spell_items(list(parsed.data))


def _spell_items(items: list[Any]) -> str:
    out: list[str] = []
    plain = ""
    for op, av in items:
        if op is _const.LITERAL and PLAIN_TEXT.fullmatch(chr(av)):
            plain += chr(av)
            continue
        out.append(re.escape(plain))
        plain = ""
        out.append(_spell_item(op, av))
    out.append(re.escape(plain))
    return "".join(out)


def _spell_item(op: Any, av: Any) -> str:
    if op is _const.LITERAL:
        return spell_char(chr(av))
    if op is _const.NOT_LITERAL:
        return spell_ranges(minus(ALL, [(av, av)]))
    if op is _const.ANY:
        return spell_ranges(minus(ALL, [(0x0A, 0x0A)]))
    if op is _const.IN:
        return spell_ranges(_class_ranges(av))
    if op is _const.BRANCH:
        return "(?:" + "|".join(_spell_items(list(branch)) for branch in av[1]) + ")"
    if op is _const.SUBPATTERN and not av[1] and not av[2]:
        return "(?:" + _spell_items(list(av[3])) + ")"
    if op in (_const.MAX_REPEAT, _const.MIN_REPEAT):
        low, high, body = av
        upper = "" if high is _const.MAXREPEAT else str(high)
        return f"(?:{_spell_items(list(body))}){{{low},{upper}}}"
    raise ValueError(f"{op} has no reading over a string's characters here")


def _class_ranges(members: list[Any]) -> Ranges:
    """The code points of a parsed class (``[...]``)."""
    negated = bool(members) and members[0][0] is _const.NEGATE
    ranges: Ranges = []
    for op, av in members[1:] if negated else members:
        if op is _const.LITERAL:
            ranges.append((av, av))
        elif op is _const.RANGE:
            ranges.append(av)
        else:
            raise ValueError(f"{op} in a class has no reading here")
    found = normalize(ranges)
    return minus(ALL, found) if negated else found


def escapes(ranges: Iterable[tuple[int, int]]) -> str | None:
    """A regex for the escaped spellings (a backslash first) of the characters of
    ``ranges`` (None: none has one)."""
    return _escapes(tuple(normalize(ranges)))


def raw(ranges: Iterable[tuple[int, int]]) -> str | None:
    """A regex for the characters of ``ranges`` written as themselves (None: none is)."""
    return _raw(tuple(normalize(ranges)))


def minus(ranges: Iterable[tuple[int, int]], holes: Iterable[tuple[int, int]]) -> Ranges:
    """``ranges`` less ``holes``."""
    return _meet(normalize(ranges), complement(normalize(holes)))


@functools.lru_cache(maxsize=4096)
def _spell(ranges: tuple[tuple[int, int], ...]) -> str:
    options = [found for found in (_raw(ranges), _escapes(ranges)) if found is not None]
    if not options:
        raise ValueError("no character of these ranges has a spelling")
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


@functools.lru_cache(maxsize=4096)
def _raw(ranges: tuple[tuple[int, int], ...]) -> str | None:
    plain = _meet(list(ranges), RAW)
    if not plain:
        return None
    if len(plain) == 1 and plain[0][0] == plain[0][1]:
        char = chr(plain[0][0])
        return re.escape(char) if " " <= char <= "~" else char_class(plain)
    positive = char_class(plain)
    others = complement(plain)  # controls, the quote and the backslash among them
    negative = "[^" + "".join(_member_range(a, b) for a, b in _meet(others, [(0, SURROGATES[0] - 1),
                                                                             (SURROGATES[1] + 1, MAX_CODE)])) + "]"
    return negative if len(negative) < len(positive) else positive


@functools.lru_cache(maxsize=4096)
def _escapes(ranges: tuple[tuple[int, int], ...]) -> str | None:
    codes = list(ranges)
    short = "".join(text for code, text in SHORT_ESCAPES.items() if _holds(codes, code))
    after: list[str] = []
    if short:
        after.append(short if len(short) == 1 or short == "\\\\" else "[" + short + "]")
    units: list[str] = []
    bmp = _meet(codes, ESCAPED_BMP)
    if bmp:
        units.append(hex_digits(bmp, 4))
    units += _pairs(_meet(codes, [(ASTRAL, MAX_CODE)]))
    if units:
        after.append("u" + (units[0] if len(units) == 1 else "(?:" + "|".join(units) + ")"))
    if not after:
        return None
    return "\\\\" + (after[0] if len(after) == 1 else "(?:" + "|".join(after) + ")")


def _pairs(astral: Ranges) -> list[str]:
    """The surrogate pairs of the characters ``astral`` (past the BMP), after the
    first ``\\u``: high halves grouped by the low halves they take."""
    by_lows: dict[tuple[int, int], Ranges] = {}
    for low, high in astral:
        (high_a, low_a), (high_b, low_b) = _halves(low), _halves(high)
        if high_a == high_b:
            by_lows.setdefault((low_a, low_b), []).append((high_a, high_a))
            continue
        first, last = high_a, high_b
        if low_a != 0xDC00:
            by_lows.setdefault((low_a, 0xDFFF), []).append((high_a, high_a))
            first += 1
        if low_b != 0xDFFF:
            by_lows.setdefault((0xDC00, low_b), []).append((high_b, high_b))
            last -= 1
        if first <= last:
            by_lows.setdefault((0xDC00, 0xDFFF), []).append((first, last))
    return [hex_digits(highs, 4) + "\\\\u" + hex_digits([lows], 4)
            for lows, highs in sorted(by_lows.items(), key=lambda item: min(item[1]))]


def _halves(code: int) -> tuple[int, int]:
    return 0xD800 + ((code - ASTRAL) >> 10), 0xDC00 + ((code - ASTRAL) & 0x3FF)


def hex_digits(ranges: Ranges, width: int) -> str:
    """``width`` hex digits, in either case, of a value in ``ranges``: built digit
    by digit, leading digits that take the same rest sharing one class."""
    return _hex(tuple(normalize(ranges)), width)


@functools.lru_cache(maxsize=4096)
def _hex(ranges: tuple[tuple[int, int], ...], width: int) -> str:
    if width == 0:
        return ""
    size = 16 ** (width - 1)
    if ranges == ((0, 16 * size - 1),):
        return HEX_DIGIT + (f"{{{width}}}" if width > 1 else "")
    rests: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for digit in range(16):
        base = digit * size
        rest = tuple((max(a, base) - base, min(b, base + size - 1) - base) for a, b in ranges
                     if a <= base + size - 1 and b >= base)
        if rest:
            rests.setdefault(rest, []).append(digit)
    options = [_digit_class(digits) + _hex(rest, width - 1) for rest, digits in sorted(rests.items(), key=lambda i: i[1][0])]
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def _digit_class(digits: list[int]) -> str:
    """One hex digit of ``digits`` (values 0-15), in either case."""
    if len(digits) == 1 and digits[0] < 10:
        return str(digits[0])
    numeric = _runs([d for d in digits if d < 10], "0123456789")
    letters = [d - 10 for d in digits if d >= 10]
    lower = _runs(letters, "abcdef")
    return "[" + numeric + lower + lower.upper() + "]"


def _runs(values: list[int], alphabet: str) -> str:
    """Class members for ``values`` (indexes into ``alphabet``), runs as ranges."""
    out = ""
    at = 0
    while at < len(values):
        end = at
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        first, last = alphabet[values[at]], alphabet[values[end]]
        out += first if at == end else first + last if end == at + 1 else f"{first}-{last}"
        at = end + 1
    return out


def char_class(ranges: Ranges) -> str:
    """A regex class of ``ranges`` (code points as themselves, not spelled)."""
    return "[" + "".join(_member_range(a, b) for a, b in ranges) + "]"


def _member_range(low: int, high: int) -> str:
    return class_member(low) if low == high else f"{class_member(low)}-{class_member(high)}"


def class_member(code: int) -> str:
    """A class member spelled so that lark, which turns ``\\x5d`` into ``]`` before
    the regex is parsed, leaves it a member."""
    if chr(code) in "]\\^-[":
        return "\\" + chr(code)
    if chr(code).isascii() and chr(code).isalnum():
        return chr(code)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _holds(ranges: Ranges, code: int) -> bool:
    return any(a <= code <= b for a, b in ranges)


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """``ranges`` sorted, with overlapping and adjacent ones merged."""
    out: Ranges = []
    for low, high in sorted(ranges):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def complement(ranges: Ranges) -> Ranges:
    """The code points no range of (normalized) ``ranges`` holds."""
    out: Ranges = []
    start = 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= MAX_CODE:
        out.append((start, MAX_CODE))
    return out


def _meet(first: Ranges, second: Ranges) -> Ranges:
    """The code points in both (each sorted and disjoint)."""
    out: Ranges = []
    i = j = 0
    while i < len(first) and j < len(second):
        low, high = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if low <= high:
            out.append((low, high))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return out


CHAR = spell_ranges(ALL)
"""One character of a JSON string, in any spelling the convention takes (an
escape, a surrogate pair, a UTF-8 sequence is one character)."""

ESCAPE = escapes(ALL)
"""One character written as an escape."""

UNICODE_ESCAPE = "\\\\u" + "(?:" + hex_digits(ESCAPED_BMP, 4) + "|" + "|".join(_pairs([(ASTRAL, MAX_CODE)])) + ")"
"""One character written as a ``\\u`` escape or a surrogate pair of them."""

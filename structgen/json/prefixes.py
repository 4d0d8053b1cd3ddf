"""Whether a JSON scalar begun so far can still become a given value.

``uniqueItems`` refuses an item that can only end equal to an earlier one, so it
asks, of a string, number or literal in progress, which earlier values it can
still become: a string by its characters (escapes and UTF-8 sequences in progress
count as the characters they can still be), a number by value (``1``, ``1.0`` and
``10e-1`` are one).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final


def some_begins(started: tuple[str, bytes], texts: tuple[str, ...]) -> bool:
    """Whether one of ``texts`` (sorted) can still be a string begun as ``started``."""
    at = bisect_left(texts, started[0])
    while at < len(texts) and texts[at].startswith(started[0]):
        if text_prefix(started, texts[at]):
            return True
        at += 1
    return False


def text_prefix(started: tuple[str, bytes], target: str) -> bool:
    """Whether a string begun as ``started`` (its characters, and the bytes of one
    still in progress) can still be ``target``."""
    text, pending = started
    if not target.startswith(text):
        return False
    if not pending:
        return True
    if len(target) == len(text):
        return False
    following = target[len(text)]
    if pending[0] != 0x5C:  # a UTF-8 sequence
        return following.encode("utf-8", "surrogatepass").startswith(pending)
    if len(pending) == 1:
        return True  # a backslash: any character has an escape
    if pending[1] != 0x75:  # \u
        return False  # (a short escape is whole at once)
    code = ord(following)
    units = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
    spelled = "".join(f"\\u{unit:04x}" for unit in units)
    return spelled.startswith(pending.decode("ascii", "replace").lower())


@lru_cache(maxsize=4096)
def decoded(raw: bytes) -> tuple[str, bytes] | None:
    """The characters a string's bytes so far spell, and the bytes of a character
    still in progress (an escape, a UTF-8 sequence, or a surrogate pair's first
    half); None where they are no JSON string's beginning."""
    if b"\\" not in raw:
        try:
            return raw.decode("utf-8"), b""
        except UnicodeDecodeError as exc:
            if exc.end < len(raw) or exc.reason != "unexpected end of data":
                return None
            return raw[: exc.start].decode("utf-8"), raw[exc.start:]
    for cut in range(0, min(len(raw), 11) + 1):
        whole = raw[: len(raw) - cut]
        try:
            text = json.loads(b'"' + whole + b'"')
        except ValueError:
            continue
        if text and 0xD800 <= ord(text[-1]) <= 0xDBFF and re.search(rb"\\u[dD][89abAB][0-9a-fA-F]{2}$", whole):
            return text[:-1], raw[len(whole) - 6:]  # the first half of a surrogate pair: its second may follow
        return text, raw[len(whole):]
    return None


NUMBER_PARTS: Final = re.compile(r"(-?)([0-9]*)(?:(\.)([0-9]*))?(?:[eE]([+-]?)([0-9]*))?")


def number_prefix(written: str, target: Decimal) -> bool:
    """Whether a JSON number begun as ``written`` can still equal ``target``: its
    digits so far must lead to the target's significant digits (then zeros),
    and once the exponent is begun, its digits to the one that scales them."""
    parts = NUMBER_PARTS.fullmatch(written)
    if parts is None or not target.is_finite():
        return parts is not None
    sign, whole, _, fraction, exponent_sign, exponent = parts.groups()
    digits = (whole + (fraction or "")).lstrip("0")
    if target.is_zero():
        return digits == ""
    if (target < 0) != (sign == "-"):
        return False
    significant, scale = significant(abs(target))
    fits = significant.startswith(digits) or (digits.startswith(significant) and not digits[len(significant):].strip("0"))
    if exponent_sign is None or not fits:
        return fits
    if not digits.startswith(significant):
        return False  # the exponent froze the digits short of the target's
    needed = scale - (len(digits) - len(significant)) + len(fraction or "")
    typed = exponent.lstrip("0")
    if exponent_sign == "-" and needed > 0 or exponent_sign != "-" and needed < 0:
        return needed < 0 and exponent_sign == "" and exponent == ""  # a minus may still come
    return str(abs(needed)).startswith(typed) if typed else True


def number_phase(raw: bytes) -> tuple[Any, ...]:
    """What of a number in progress decides where it can still go: two numbers
    that differ only by zeros that change nothing (``12.0``, ``12.00``; ``0e1``,
    ``0e10``; ``1e05``, ``1e005``) go on alike, so a search visits one of them."""
    parts = NUMBER_PARTS.fullmatch(raw.decode("ascii", "replace"))
    if parts is None:
        return (raw,)
    sign, whole, dot, fraction, exponent_sign, exponent = parts.groups()
    zero = not (whole + (fraction or "")).strip("0")
    if exponent_sign is not None and zero:
        return (sign, "0", dot, exponent_sign, bool(exponent))  # 0 whatever the exponent's digits
    exponent_digits = None if exponent is None else (exponent.lstrip("0"), bool(exponent))
    return (sign, whole, dot, (fraction or "").rstrip("0"), bool(fraction), exponent_sign, exponent_digits)


def significant(number: Decimal) -> tuple[str, int]:
    """``number`` (positive) as its digits without zeros at either end, and the
    power of ten they are scaled by."""
    sign_, digits, exponent = number.normalize().as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exponent, int)
    return text, exponent

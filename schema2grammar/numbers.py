"""Numbers between decimal bounds, as regexes over their JSON spellings.

Bounds compare exactly, as decimals: ``0.1`` is one tenth, as the schema writes
it, not the float nearest it. The spellings taken are the plain ones (``12``,
``12.50``, ``-0``) and the normalized exponent ones (``1.25e+16``, ``1e-05``,
``0e3``): every spelling ``json.dumps`` writes. A nonzero number written with an
exponent and a mantissa outside [1, 10) (``10e2``, ``0.5e1``) is refused, since
no regex compares an exponent with a count of digits.

``places`` (from ``multipleOf: 0.01``) keeps to numbers with at most that many
decimal places. Exponent spellings of those are taken with up to 16 digits after
the mantissa's point (``repr`` of a float writes at most 17 significant digits).
"""

from __future__ import annotations

from decimal import Decimal

from schema2grammar.regexes import natural_range

Bound = tuple[Decimal, bool]
"""A bound's value and whether it is exclusive."""

MAX_BOUND_DIGITS = 1_000
"""Bounds whose plain spelling has more digits than this are not enforced
(reported): each digit is a state of the number's automaton."""

MANTISSA_DIGITS = 16
"""Digits after a mantissa's point taken where ``places`` limits them: ``repr``
of a float writes at most 17 significant digits."""

ZERO: Bound = (Decimal(0), False)
ONE: Bound = (Decimal(1), False)
TEN: Bound = (Decimal(10), True)
ZERO_WITH_EXPONENT = r"0(?:\.0+)?[eE][+-]?[0-9]+"


def exact(value: int | float) -> Decimal:
    """A schema's number as the decimal it spells: a float as the shortest decimal
    that reads back as it (``0.1`` is one tenth)."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def exact_bound(value: int | float, exclusive: bool) -> Bound | None:
    """``value`` as an exact decimal bound (``exact``). None when it is not finite
    or past ``MAX_BOUND_DIGITS``."""
    number = exact(value)
    if not number.is_finite() or len(format(number, "f")) > MAX_BOUND_DIGITS:
        return None
    return number, exclusive


def decimal_places(step: int | float) -> int | None:
    """The ``places`` a ``multipleOf`` amounts to when it is a power of ten at most
    1 (``0.01``: 2); None for any other step."""
    number = exact(step)
    if not number.is_finite() or number <= 0:
        return None
    sign, digits, exponent = number.normalize().as_tuple()
    if digits != (1,) or not isinstance(exponent, int) or exponent > 0:
        return None
    return -exponent


def number_range(low: Bound | None, high: Bound | None, places: int | None = None) -> str | None:
    """Numbers between ``low`` and ``high`` (None: unbounded) with at most
    ``places`` decimal places (None: any), spelled as the module says; ``-0`` for
    zero too. None when no number lies within the bounds."""
    parts: list[str] = []
    if high is None or high[0] > 0 or high == ZERO:  # unsigned: the value is the magnitude
        at_least = ZERO if low is None or low[0] < 0 else low
        parts += _magnitudes(at_least, high, places)
    if low is None or low[0] < 0 or low == ZERO:  # signed: the value is minus the magnitude
        at_most = None if low is None else (low[0].copy_negate(), low[1])
        above = ZERO if high is None or high[0] > 0 else (high[0].copy_negate(), high[1])
        negative = _magnitudes(above, at_most, places)
        if negative:
            parts.append("-" + _group(negative))
    return _group(parts) if parts else None


def _magnitudes(low: Bound, high: Bound | None, places: int | None) -> list[str]:
    """Unsigned spellings of magnitudes between ``low`` (at least 0) and ``high``."""
    if high is not None and (high[0] < low[0] or high[0] == low[0] and (low[1] or high[1])):
        return []
    parts = _plain(low, high, places)
    if low == ZERO:
        parts.append(ZERO_WITH_EXPONENT)
    return parts + _scientific(low, high, places)


def _plain(low: Bound, high: Bound | None, places: int | None) -> list[str]:
    """``12``, ``12.5``: by integer part, with the fractions each allows."""
    if places is not None and places < 0:
        return []
    first, low_digits = _split(low[0])
    lower = (low_digits, low[1])
    if high is None:
        found = [_point(str(first), _fractions(lower, None, places)),
                 _group(natural_range(first + 1, None)) + _any_fraction(places)]
    else:
        last, high_digits = _split(high[0])
        upper = (high_digits, high[1])
        if first == last:
            found = [_point(str(first), _fractions(lower, upper, places))]
        else:
            middle = natural_range(first + 1, last - 1)
            found = [_point(str(first), _fractions(lower, None, places)),
                     _group(middle) + _any_fraction(places) if middle else None,
                     _point(str(last), _fractions(None, upper, places))]
    return [part for part in found if part is not None]


def _scientific(low: Bound, high: Bound | None, places: int | None) -> list[str]:
    """``1.25e+16``: a mantissa in [1, 10) and an exponent, by exponent: the
    exponents of the bounds with the mantissas they allow, any mantissa between."""
    if high is not None and high[0] == 0:
        return []
    low_exponent = None if low[0] == 0 else low[0].adjusted()
    high_exponent = None if high is None else high[0].adjusted()
    pieces: list[tuple[int | None, int | None, Bound, Bound]] = []  # exponents first..last, mantissas
    if low_exponent is not None and low_exponent == high_exponent and high is not None:
        pieces.append((low_exponent, low_exponent, _mantissa(low), _mantissa(high)))
    else:
        if low_exponent is not None:
            pieces.append((low_exponent, low_exponent, _mantissa(low), TEN))
        first = None if low_exponent is None else low_exponent + 1
        last = None if high_exponent is None else high_exponent - 1
        if first is None or last is None or first <= last:
            pieces.append((first, last, ONE, TEN))
        if high is not None and high_exponent is not None:
            pieces.append((high_exponent, high_exponent, ONE, _mantissa(high)))
    parts: list[str] = []
    for first, last, above, below in pieces:
        for start, end, room in _rooms(first, last, places):
            mantissas = _plain(above, below, room)
            if mantissas:
                parts.append(_group(mantissas) + "[eE]" + _exponents(start, end))
    return parts


def _rooms(first: int | None, last: int | None, places: int | None) -> list[tuple[int | None, int | None, int | None]]:
    """Exponents ``first``..``last`` split by the digits a mantissa may have after
    its point: ``exponent + places`` (a number ``d.ddd e k`` has ``digits - k``
    decimal places), one exponent at a time up to ``MANTISSA_DIGITS`` of room."""
    if places is None:
        return [(first, last, None)]
    start = -places if first is None else max(first, -places)
    rooms: list[tuple[int | None, int | None, int | None]] = []
    while (last is None or start <= last) and start + places < MANTISSA_DIGITS:
        rooms.append((start, start, start + places))
        start += 1
    if last is None or start <= last:
        rooms.append((start, last, MANTISSA_DIGITS))
    return rooms


def _fractions(lower: tuple[str, bool] | None, upper: tuple[str, bool] | None, room: int | None) -> list[str]:
    """Digit strings ``F``, the empty one too, with ``lower`` <(=) 0.F <(=) ``upper``
    (each a digit string without trailing zeros and whether it is exclusive; None:
    no bound) and at most ``room`` digits before only zeros follow, as
    alternatives ("" for the empty string)."""
    if lower is not None and lower[0] == "" and not lower[1]:
        lower = None  # at least zero: every F
    if room == 0 or (upper is not None and upper[0] == ""):  # only zeros may follow
        zero_allowed = lower is None and (upper is None or upper[0] != "" or not upper[1])
        return ["", "0+"] if zero_allowed else []
    if upper is None and lower is None:
        return ["", "[0-9]+" if room is None else f"[0-9]{{1,{room}}}0*"]
    if upper is None and lower == ("", True) and room is None:
        return ["[0-9]*[1-9][0-9]*"]
    low_digit = None if lower is None else int(lower[0][0]) if lower[0] else 0
    high_digit = None if upper is None else int(upper[0][0])
    free_from = 0 if low_digit is None else low_digit + 1
    free_to = 9 if high_digit is None else high_digit - 1
    below = None if room is None else room - 1
    found = [""] if lower is None else []
    if free_from <= free_to:
        digits = str(free_from) if free_from == free_to else f"[{free_from}-{free_to}]"
        found.append(digits + ("[0-9]*" if below is None else "0*" if below == 0 else f"[0-9]{{0,{below}}}0*"))
    for digit in sorted({d for d in (low_digit, high_digit) if d is not None}):
        if (low_digit is not None and digit < low_digit) or (high_digit is not None and digit > high_digit):
            continue
        rest = _fractions(_after(lower, digit), _after(upper, digit), below)
        if rest:
            found.append(str(digit) + _optional(rest))
    return found


def _after(bound: tuple[str, bool] | None, digit: int) -> tuple[str, bool] | None:
    """What a fraction bound asks of the digits after a first ``digit``: nothing
    once the digit differs from the bound's own first digit (``_fractions`` tries
    no digit beyond the bound)."""
    if bound is None:
        return None
    own = int(bound[0][0]) if bound[0] else 0
    return (bound[0][1:], bound[1]) if digit == own else None


def _exponents(first: int | None, last: int | None) -> str:
    """Exponent spellings (sign optional, leading zeros allowed) of the integers
    ``first``..``last`` (None: unbounded)."""
    parts: list[str] = []
    if (first is None or first <= 0) and (last is None or last >= 0):
        parts.append("[+-]?0+")
    positive_from = 1 if first is None else max(first, 1)
    if last is None or last >= positive_from:
        parts.append(r"\+?0*" + _group(natural_range(positive_from, last)))
    negative_from = 1 if last is None else max(-last, 1)
    negative_to = None if first is None else -first
    if negative_to is None or negative_to >= negative_from:
        parts.append("-0*" + _group(natural_range(negative_from, negative_to)))
    return _group(parts)


def _mantissa(bound: Bound) -> Bound:
    """A positive bound's value scaled into [1, 10), exactly (no context rounding)."""
    digits = bound[0].as_tuple().digits
    return Decimal((0, digits, 1 - len(digits))), bound[1]


def _split(value: Decimal) -> tuple[int, str]:
    """A magnitude's integer part and the digits after its point, trailing zeros
    dropped (read from its plain spelling: exact at any length)."""
    whole, _, fraction = format(value, "f").partition(".")
    return int(whole), fraction.rstrip("0")


def _point(head: str, fractions: list[str]) -> str | None:
    """``head`` followed by a point and one of ``fractions`` ("": no point)."""
    if not fractions:
        return None
    written = [f for f in fractions if f]
    if not written:
        return head
    return head + r"(?:\." + _group(written) + (")?" if "" in fractions else ")")


def _any_fraction(places: int | None) -> str:
    if places is None:
        return r"(?:\.[0-9]+)?"
    return r"(?:\.0+)?" if places == 0 else rf"(?:\.[0-9]{{1,{places}}}0*)?"


def _optional(alternatives: list[str]) -> str:
    written = [a for a in alternatives if a]
    if not written:
        return ""
    return "(?:" + "|".join(written) + (")?" if "" in alternatives else ")")


def _group(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 and alternatives[0].isalnum() else "(?:" + "|".join(alternatives) + ")"

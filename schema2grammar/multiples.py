"""Multiples of a step whose digits divide a power of ten, between bounds, as
regexes over their JSON spellings.

A step ``m = c·10^-s`` where ``c`` has no prime factor but 2 and 5 (``5``, ``4``,
``20``, ``2.5``, ``0.25``, ``0.05``) divides ``10^t`` once scaled, so whether ``v``
is a multiple is a matter of its last digits: ``N = v·10^s`` must be an integer
whose last ``t`` digits are one of the ``10^t / c`` multiples of ``c`` below
``10^t``. A range of such ``N`` is, per last-digits suffix ``x``, the numbers
``P·10^T + x`` for ``P`` in a range of integers: one integer range (``natural_range``)
followed by the suffixes that share it. Steps that are powers of ten at most 1
(``0.01``) are ``numbers.number_range``'s ``places``; other steps (``3``, ``0.3``)
have no such last digits: their factor ``d`` prime to ten is ``divisible``'s.

A number ``v`` spelled with mantissa digits ``M`` (the digits before any
exponent, the point left out) is ``M·10^x`` for some ``x``; where ``v·10^s`` is an
integer, ``d`` (prime to ten) divides it exactly when it divides ``M``, since ten
is invertible modulo ``d``. So ``m = c·d·10^-s`` keeps the multiples of
``c·10^-s`` whose mantissa digits ``d`` divides: the engine's ``divisible_by_D``
group (``structgen/engine/regex.py``) around this module's regex, whichever way
the number is spelled (``21``, ``2.1e+1``, ``21.0``).

Spellings taken: plain ones, and exponent ones as ``json.dumps`` writes them
(``1.5e+17``: from 1e16, where the range reaches there without a bound) — not
other exponent spellings, as for ``numbers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from fractions import Fraction

from schema2grammar.numbers import MANTISSA_DIGITS, ZERO_WITH_EXPONENT, Bound, exact
from schema2grammar.regexes import BIG, natural_range

MAX_SUFFIXES = 200
"""Steps needing more last-digit suffixes than this (``10^T / c``: 125 for ``8``,
20 for ``0.05``) are not enforced: each is an alternative of the regex."""

MAX_DIVISOR = 1_000
"""Largest factor prime to ten enforced (``divisible``: an automaton of that many
states inside a number's terminal)."""

MAX_SCALE = 4
"""Steps with more decimal places than this (below 1e-4 json.dumps writes exponents)
are not enforced, but for powers of ten (``numbers``)."""


@dataclass(frozen=True)
class Step:
    """``multipleOf`` as ``c·d·10^-s``, with ``c`` dividing ``10^t`` and ``d`` prime
    to ten (``divisible``)."""

    c: int
    s: int
    t: int
    d: int = 1

    @property
    def width(self) -> int:
        """The digits of ``N`` that decide: the fraction's and the divisor's."""
        return max(self.t, self.s)

    def suffixes(self) -> list[int]:
        return list(range(0, 10**self.width, self.c))

    def for_integers(self) -> Step:
        """The step integers keep to: the least integer multiple of this one."""
        c = self.c // math.gcd(self.c, 10**self.s)
        return Step(c, 0, self.t, self.d)

    @property
    def value(self) -> Decimal:
        return Decimal(self.c * self.d).scaleb(-self.s)


def step_of(value: int | float) -> Step | None:
    """``multipleOf`` as a ``Step``, when it has at most ``MAX_SCALE`` decimal places,
    its factor prime to ten is at most ``MAX_DIVISOR``, and the rest needs at most
    ``MAX_SUFFIXES`` suffixes."""
    number = exact(value)
    if not number.is_finite() or number <= 0:
        return None
    _, digits, exponent = number.normalize().as_tuple()
    assert isinstance(exponent, int)
    whole = int("".join(map(str, digits))) * 10 ** max(exponent, 0)
    s = max(-exponent, 0)
    d = _prime_to_ten(whole)
    c = whole // d
    t = _power_of_ten_divided(c)
    if s > MAX_SCALE or t is None or d > MAX_DIVISOR:
        return None
    step = Step(c, s, t, d)
    return step if c == 1 or 10**step.width // c <= MAX_SUFFIXES else None  # c = 1: no suffixes (places)


def divisible(regex: str, step: Step) -> str:
    """``regex`` (numbers spelled in JSON) less those whose mantissa digits ``step.d``
    does not divide."""
    return regex if step.d == 1 else f"(?P<divisible_by_{step.d}>{regex})"


def has_multiple(low: Bound | None, high: Bound | None, step: Step) -> bool:
    """Whether some multiple of ``step`` lies within the bounds."""
    if low is None or high is None:
        return True
    size = Fraction(step.value)
    first, last = Fraction(low[0]) / size, Fraction(high[0]) / size
    least = math.ceil(first) + (1 if low[1] and first.denominator == 1 else 0)
    most = math.floor(last) - (1 if high[1] and last.denominator == 1 else 0)
    return least <= most


def multiples(low: Bound | None, high: Bound | None, step: Step, fractions: bool, float_spellings: bool = True) -> str | None:
    """Multiples of ``step`` between ``low`` and ``high``, spelled as the module
    says; ``fractions``: numbers (``2.50``, ``0e3``) rather than integers, which
    ``float_spellings`` also writes ``2.0`` and ``1e+16`` (draft 6 on). None when no
    multiple lies within the bounds; ``ValueError`` when a bound is at or beyond
    1e16."""
    if any(bound is not None and abs(bound[0]) >= BIG for bound in (low, high)):
        raise ValueError("a bound at or beyond 1e16")
    scale = Decimal(10) ** step.s
    first = None if low is None else _ceiling(low[0] * scale, low[1])
    last = None if high is None else _floor(high[0] * scale, high[1])
    if first is not None and last is not None and first > last:
        return None
    parts: list[str] = []
    if last is None or last >= 0:
        parts += _magnitudes(max(first or 0, 0), last, step, float_spellings or fractions)
    if first is None or first <= 0:
        negative = _magnitudes(max(-last, 0) if last is not None else 0, None if first is None else -first, step,
                               float_spellings or fractions)
        if negative:
            parts.append("-(?:" + "|".join(negative) + ")")
    if not parts:
        return None
    if fractions and (first is None or first <= 0) and (last is None or last >= 0):
        parts.append(ZERO_WITH_EXPONENT)
    return "(?:" + "|".join(parts) + ")"


def _magnitudes(first: int, last: int | None, step: Step, floats: bool) -> list[str]:
    """Spellings of the multiples ``N·10^-s`` for ``N`` in ``first``..``last``: per
    group of suffixes sharing a range of the digits before them; ``floats``: with
    ``.0`` after an integer, and json.dumps's exponents from 1e16."""
    width = step.width
    groups: dict[tuple[int, int | None], list[int]] = {}
    for suffix in step.suffixes():
        above = max(-((suffix - first) // 10**width), 0)  # the least P with P·10^T + x >= first
        below = None if last is None else (last - suffix) // 10**width
        if below is None or below >= above:
            groups.setdefault((above, below), []).append(suffix)
    parts: list[str] = []
    for (above, below), suffixes in groups.items():
        if below is None or below >= max(above, 1):  # P written before the suffix's digits
            written = [_spelled(f"{x:0{width}d}", step.s, floats) for x in suffixes]
            parts.append("(?:" + "|".join(natural_range(max(above, 1), below)) + ")(?:" + "|".join(written) + ")")
        if above == 0:  # the suffix alone, without leading zeros
            parts += [_spelled(f"{x:0{width}d}", step.s, floats, alone=True) for x in suffixes]
    if last is None and parts and floats:
        parts.append(_big(step))
    return parts


def _spelled(digits: str, places: int, floats: bool, alone: bool = False) -> str:
    """A suffix's digits with the point ``places`` from the end, trailing zeros
    after it optional; ``alone``: the whole integer part, without leading zeros."""
    whole, fraction = digits[: len(digits) - places], digits[len(digits) - places:].rstrip("0")
    if alone:
        whole = whole.lstrip("0") or "0"
    if fraction:
        return whole + r"\." + fraction + "0*"
    return whole + (r"(?:\.0+)?" if floats else "")


def _big(step: Step) -> str:
    """json.dumps's spellings of multiples from 1e16 on: ``D.F e+K`` is the integer
    ``DF`` followed by ``K - f`` zeros, a multiple once ``K - f + s`` zeros reach
    ``t``; below that, the last digits of ``DF`` decide."""
    free_from = max(16, 16 + step.t - step.s)  # every mantissa of up to 16 digits after its point
    parts = [rf"[1-9](?:\.[0-9]{{1,{MANTISSA_DIGITS}}})?e\+(?:" + "|".join(natural_range(free_from, None)) + ")"]
    for exponent in range(16, free_from):
        fractions = [f"[0-9]{{1,{exponent + step.s - step.t}}}"] if exponent + step.s - step.t >= 1 else []
        for length in range(max(exponent + step.s - step.t + 1, 1), MANTISSA_DIGITS + 1):
            zeros = exponent - length + step.s  # the zeros N has after DF
            tail = step.t - zeros  # DF's last digits that decide
            allowed = [y for y in range(10**tail) if (y * 10**zeros) % step.c == 0]
            fractions.append(f"[0-9]{{{length - tail}}}(?:" + "|".join(f"{y:0{tail}d}" for y in allowed) + ")")
        parts.append(r"[1-9](?:\.(?:" + "|".join(fractions) + rf"))?e\+{exponent}")
    return "|".join(parts)


def _ceiling(value: Decimal, exclusive: bool) -> int:
    whole = int(value.to_integral_value(rounding=ROUND_CEILING))
    return whole + 1 if exclusive and whole == value else whole


def _floor(value: Decimal, exclusive: bool) -> int:
    whole = int(value.to_integral_value(rounding=ROUND_FLOOR))
    return whole - 1 if exclusive and whole == value else whole


def _prime_to_ten(number: int) -> int:
    """``number`` without its factors 2 and 5."""
    for prime in (2, 5):
        while number % prime == 0:
            number //= prime
    return number


def _power_of_ten_divided(c: int) -> int | None:
    """The least ``t`` with ``c`` dividing ``10^t`` (None: ``c`` has another prime
    factor than 2 and 5)."""
    counts = []
    for prime in (2, 5):
        count = 0
        while c % prime == 0:
            c //= prime
            count += 1
        counts.append(count)
    return max(counts) if c == 1 else None

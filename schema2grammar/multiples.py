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

A step with trailing zeros (``20``, ``1e10``, ``1e300``) has a negative ``s``:
its multiples are the multiples of ``c·d`` followed by ``-s`` zeros (``0{300}``
in the regex, not ``10^300`` of anything), and json.dumps's exponent spellings
from 1e16 are decided by the last digits of the mantissa and the exponent
(``_big``): the regex grows with ``t`` (at most 7) and not with the power of ten.

Spellings taken: plain ones, and exponent ones as ``json.dumps`` writes them
(``1.5e+17``: from 1e16, where the range reaches there without a bound) — not
other exponent spellings, as for ``numbers``.

Read as doubles (``as_doubles``, ``Options(numbers="readable")``): a reader
(``json.loads``, ``JSON.parse``) reads ``7e300`` as the double nearest it, which
is no multiple of 7, and jsonschema divides doubles (``0.3 / 0.1`` is
``2.9999999999999996``). The multiples kept there are those a double holds
exactly, below ``2**53`` of their step's binary unit, of a step whose double is
its decimal or within ``2**-54`` of it: their quotient is then exact, or rounds
to the integer it is.
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

MAX_STEP_ZEROS = 1_000
"""Steps with more trailing zeros than this (Python integers from ``10**1000``; a
float has at most 308) are not enforced: each zero is a state of the number's
automaton."""

DOUBLE_BITS = 53
"""Bits of a double's significand: the integers a double holds exactly lie below
``2**53`` (in units of a power of two)."""


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

    @property
    def places_only(self) -> bool:
        """A power of ten at most 1 (times ``d``): ``numbers.number_range``'s ``places``."""
        return self.c == 1 and self.s >= 0

    def suffixes(self) -> list[int]:
        return list(range(0, 10**self.width, self.c))

    def for_integers(self) -> Step:
        """The step integers keep to: the least integer multiple of this one."""
        if self.s <= 0:
            return self  # an integer already
        c = self.c // math.gcd(self.c, 10**self.s)
        t = _power_of_ten_divided(c)
        assert t is not None  # a divisor of c
        return Step(c, 0, t, self.d)  # its own t: 7.8125's integers, multiples of 125, need 8 suffixes, not 80,000

    @property
    def value(self) -> Decimal:
        return Decimal(self.c * self.d).scaleb(-self.s)


def step_of(value: int | float | Decimal) -> Step | None:
    """``multipleOf`` as a ``Step``, when it has at most ``MAX_SCALE`` decimal places
    and at most ``MAX_STEP_ZEROS`` trailing zeros, its factor prime to ten is at
    most ``MAX_DIVISOR``, and the rest needs at most ``MAX_SUFFIXES`` suffixes."""
    number = value if isinstance(value, Decimal) else exact(value)
    if not number.is_finite() or number <= 0:
        return None
    _, digits, exponent = number.as_tuple()  # not normalize(): it rounds to 28 digits
    assert isinstance(exponent, int)
    spelled = "".join(map(str, digits))
    kept = spelled.rstrip("0")
    s = -(exponent + len(spelled) - len(kept))  # negative: the step's trailing zeros
    if -s > MAX_STEP_ZEROS:
        return None
    whole = int(kept)
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


def as_doubles(value: int | float, integers: bool) -> tuple[Step, int | None] | None:
    """The multiples of ``multipleOf`` (integers only, where ``integers``) that a
    reader of doubles takes for multiples too, as a coarser step and the magnitude
    they stay below (None: any). None where no such step but zero is known here.

    jsonschema reads a number as a double and checks ``value % step`` (an integer
    step: exact for doubles) or whether ``value / step`` rounds to an integer (a
    float step). A multiple ``v = N·m`` (``m`` the step's decimal) that a double
    holds exactly passes both where the step's double ``D`` is ``m``; where it is
    only near (``0.1``), the quotient ``N·m/D`` is within ``N·|D - m|/D`` of ``N``,
    less than half a unit of ``N``'s last place when ``|D - m| <= D·2**-54``, so it
    rounds to ``N``, or is past ``2**52``, where every double is an integer. A
    double holds ``v`` exactly when ``v`` is a multiple of a power of two ``2**e``
    (so of ``m·5**j``, ``m``'s least such multiple: ``0.5`` for ``0.1``, ``0.25``
    for ``0.01``) below ``2**(53 + e)``. A step that is a power of two itself
    (``0.5``, ``4``) needs no bound: past ``2**(53 + e)`` every double is a
    multiple of it. The bound stays at or below ``2**53``, where quotients cannot
    overflow for steps above ``2**-969``, and below 1e16 (``multiples``)."""
    step = Fraction(exact(value))
    try:
        double = Fraction(float(value))
    except OverflowError:  # an integer step past the largest double
        return None
    if double != step:
        if isinstance(value, int):
            return None  # an integer no double holds: a double instance is checked against its double (fmod)
        if abs(double - step) * 2**54 > double or double < Fraction(1, 2**969):
            return None  # the quotient may round off an integer, or overflow
    target = Fraction(step.numerator) if integers else step  # integers: the least integer multiple
    denominator, fives = target.denominator, 0
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    lattice = target * 5**fives  # the least multiple a double may hold: an odd number times 2**e
    odd, e = lattice.numerator, -(lattice.denominator.bit_length() - 1)
    while odd % 2 == 0:
        odd //= 2
        e += 1
    if odd == 1 and double == step:
        kept = step_of(Decimal(lattice.numerator) / Decimal(lattice.denominator))
        return None if kept is None else (kept.for_integers() if integers else kept, None)
    if e < -MAX_SCALE:  # a coarser power of two, so that the step has at most MAX_SCALE places
        lattice, e = Fraction(odd, 2**MAX_SCALE), -MAX_SCALE
    below = 10 ** ((2 ** (DOUBLE_BITS + min(e, 0))).bit_length() * 3 // 10)  # a power of ten at most 2**(53 + e)
    while below > 2 ** (DOUBLE_BITS + min(e, 0)):
        below //= 10
    if lattice >= below:
        return None  # no multiple but zero
    kept = step_of(Decimal(lattice.numerator) / Decimal(lattice.denominator))
    return None if kept is None else (kept.for_integers() if integers else kept, below)


def has_multiple(low: Bound | None, high: Bound | None, step: Step | Fraction) -> bool:
    """Whether some multiple of ``step`` lies within the bounds."""
    if low is None or high is None:
        return True
    size = step if isinstance(step, Fraction) else Fraction(step.value)
    first, last = Fraction(low[0]) / size, Fraction(high[0]) / size
    least = math.ceil(first) + (1 if low[1] and first.denominator == 1 else 0)
    most = math.floor(last) - (1 if high[1] and last.denominator == 1 else 0)
    return least <= most


def multiples(low: Bound | None, high: Bound | None, step: Step, fractions: bool, float_spellings: bool = True,
              most_digits: int | None = None) -> str | None:
    """Multiples of ``step`` between ``low`` and ``high``, spelled as the module
    says; ``fractions``: numbers (``2.50``, ``0e3``) rather than integers, which
    ``float_spellings`` also writes ``2.0`` and ``1e+16`` (draft 6 on);
    ``most_digits``: for a step with trailing zeros, plain spellings with at most
    that many digits before the point (readable numbers: where a reader's limit
    counts digits beside the step's run of zeros, their automaton is a product of
    both). None when no
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
        parts += _magnitudes(max(first or 0, 0), last, step, float_spellings or fractions, most_digits)
    if first is None or first <= 0:
        negative = _magnitudes(max(-last, 0) if last is not None else 0, None if first is None else -first, step,
                               float_spellings or fractions, most_digits)
        if negative:
            parts.append("-(?:" + "|".join(negative) + ")")
    if not parts:
        return None
    if fractions and (first is None or first <= 0) and (last is None or last >= 0):
        parts.append(ZERO_WITH_EXPONENT)
    return "(?:" + "|".join(parts) + ")"


def _magnitudes(first: int, last: int | None, step: Step, floats: bool, most_digits: int | None = None) -> list[str]:
    """Spellings of the multiples ``N·10^-s`` for ``N`` in ``first``..``last``: per
    group of suffixes sharing a range of the digits before them; ``floats``: with
    ``.0`` after an integer, and json.dumps's exponents from 1e16; ``most_digits``:
    as ``multiples`` says."""
    width = step.width
    # the digits of P before the suffix's and the step's zeros (or after them, its places)
    room = None if most_digits is None or last is not None or step.s >= 0 else most_digits - width + step.s
    groups: dict[tuple[int, int | None], list[int]] = {}
    for suffix in step.suffixes():
        above = max(-((suffix - first) // 10**width), 0)  # the least P with P·10^T + x >= first
        below = None if last is None else (last - suffix) // 10**width
        if room is not None:
            below = 10 ** max(room, 0) - 1
        if below is None or below >= above:
            groups.setdefault((above, below), []).append(suffix)
    parts: list[str] = []
    for (above, below), suffixes in groups.items():
        if below is None or below >= max(above, 1):  # P written before the suffix's digits
            written = [_spelled(_digits(x, width), step.s, floats) for x in suffixes]
            parts.append("(?:" + "|".join(natural_range(max(above, 1), below)) + ")(?:" + "|".join(written) + ")")
        if above == 0:  # the suffix alone, without leading zeros
            parts += [_spelled(_digits(x, width), step.s, floats, alone=True) for x in suffixes]
    if last is None and floats:
        parts.append(_big(step))
    return parts


def _digits(number: int, width: int) -> str:
    """``number`` in ``width`` digits, leading zeros included (none for width 0)."""
    return f"{number:0{width}d}" if width else ""


def _zeros(count: int) -> str:
    return "0" * count if count <= 3 else f"0{{{count}}}"


def _spelled(digits: str, places: int, floats: bool, alone: bool = False) -> str:
    """A suffix's digits with the point ``places`` from the end, trailing zeros
    after it optional (negative ``places``: followed by that many zeros);
    ``alone``: the whole integer part, without leading zeros."""
    if places < 0:
        if alone:
            digits = digits.lstrip("0")
        written = "0" if alone and not digits else digits + _zeros(-places)  # alone, N = 0 is the number 0
        return written + (r"(?:\.0+)?" if floats else "")
    whole, fraction = digits[: len(digits) - places], digits[len(digits) - places:].rstrip("0")
    if alone:
        whole = whole.lstrip("0") or "0"
    if fraction:
        return whole + r"\." + fraction + "0*"
    return whole + (r"(?:\.0+)?" if floats else "")


def _big(step: Step) -> str:
    """json.dumps's spellings of multiples from 1e16 on: ``D.F e+K`` is the integer
    ``DF`` followed by ``K - f`` zeros (``f`` digits in ``F``), a multiple once
    ``K - f + s`` zeros reach ``t``; below that, the last digits of ``DF`` decide
    (``_mantissas``). Exponents below the step's own power of ten hold no multiple;
    from ``16 - s + t`` on, every mantissa is one: the exponents between are at most
    ``t + 17``, whatever the step's power of ten."""
    shift = -step.s  # N = v / 10**shift is a multiple of c
    free_from = max(16, 16 + shift + step.t)  # every mantissa of up to 16 digits after its point
    parts = [rf"[1-9](?:\.[0-9]{{1,{MANTISSA_DIGITS}}})?e\+(?:" + "|".join(natural_range(free_from, None)) + ")"]
    for exponent in range(max(16, shift), free_from):
        mantissas = _mantissas(step.c, step.t, exponent - shift)
        if mantissas:
            parts.append("(?:" + "|".join(mantissas) + rf")e\+{exponent}")
    return "|".join(parts)


def _mantissas(c: int, t: int, room: int) -> list[str]:
    """Mantissas ``D.F`` (``F`` of ``f`` digits, up to ``MANTISSA_DIGITS``, maybe
    none) whose digits ``DF`` times ``10**(room - f)`` are a multiple of ``c``
    (which divides ``10**t``). Where ``f <= room - t`` every one is; where ``f`` is
    below ``room``, the last digits of ``DF`` decide (fewer the more zeros follow);
    from ``f = room`` on, ``DF`` is its first ``room + 1`` digits (a multiple of
    ``c``) followed by ``f - room`` zeros: one alternative for all of them. The
    endings listed are at most ``10**t / c`` per alternative, and the alternatives
    at most ``t + 2``."""
    found = []
    free = room - t  # fractions of up to this many digits leave t zeros or more
    if free >= 0:
        found.append("[1-9]" + (rf"(?:\.[0-9]{{1,{min(free, MANTISSA_DIGITS)}}})?" if free else ""))
    for f in range(max(free + 1, 0), min(room, MANTISSA_DIGITS + 1)):  # the zeros after DF: 1 to t - 1
        modulus = c // math.gcd(c, 10 ** (room - f))
        found += _multiples_of_length(modulus, f + 1, "")
    if room <= MANTISSA_DIGITS:  # f = room, room + 1, ...: the multiple of c that DF starts with, then zeros
        more = MANTISSA_DIGITS - room
        zeros = (rf"(?:\.0{{1,{more}}})?" if room == 0 else f"0{{0,{more}}}") if more else ""
        found += _multiples_of_length(c, room + 1, zeros)
    return found


def _multiples_of_length(modulus: int, length: int, after: str) -> list[str]:
    """Digit strings of ``length`` digits (the first not 0) that ``modulus`` (a
    divisor of a power of ten) divides, spelled as a mantissa (a point after the
    first digit), then ``after``."""
    width = _power_of_ten_divided(modulus)
    assert width is not None
    if width == 0:
        return ["[1-9]" + (rf"\.[0-9]{{{length - 1}}}" if length > 1 else "") + after]
    if width < length:  # the first digit is free: the last ``width`` decide
        endings = "|".join(_digits(y, width) for y in range(0, 10**width, modulus))
        middle = f"[0-9]{{{length - 1 - width}}}" if length - 1 > width else ""
        return [r"[1-9]\." + middle + (f"(?:{endings})" if width else "") + after]
    first = -(-(10 ** (length - 1)) // modulus) * modulus
    spelled = [str(y) for y in range(first, 10**length, modulus)]
    if not spelled:
        return []
    if length == 1:
        return [f"[{''.join(spelled)}]" + after]
    return ["(?:" + "|".join(digits[0] + r"\." + digits[1:] for digits in spelled) + ")" + after]


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

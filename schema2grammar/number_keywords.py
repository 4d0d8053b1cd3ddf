"""Numbers and integers: bounds and ``multipleOf`` as the regex of one terminal,
spelled as readers read numbers back (``numbers`` and ``multiples`` write the
regexes; this module reads the keywords and reports them)."""

from __future__ import annotations

import math
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

from schema2grammar import multiples, numbers, regexes
from schema2grammar.core import TranslatorCore
from schema2grammar.report import APPROXIMATED, ENFORCED
from schema2grammar.shared import NoValue, SchemaError

STEP_NOTE = ("enforced for steps of at most 4 decimal places whose digits are a divisor of a power of ten (0.01, 5, "
             "0.25) times a number up to 1,000 (3, 0.7, 12), within bounds below 1e16")
"""Why a ``multipleOf`` is approximated (``multiples``)."""

DOUBLES_NOTE = ("readable numbers are read as doubles (jsonschema divides doubles: 0.3 / 0.1 is 2.9999999999999996), "
                "so only multiples a double holds exactly are taken")
"""Why a ``multipleOf`` is narrower under ``numbers="readable"`` (``multiples.as_doubles``)."""

DECIMAL_NOTE = ("readable numbers are read as doubles, and no multiple of this step within the bounds but zero is "
                "known to read back as one (jsonschema divides doubles): every decimal multiple is taken, as "
                "multiple_of='decimal' does")
"""Why a ``multipleOf`` is approximated under ``numbers="readable"`` where ``as_doubles`` finds no step."""


def _lower_key(bound: numbers.Bound) -> tuple[Decimal, bool]:
    """Orders lower bounds by how much they keep out (an exclusive one, at the same value, more)."""
    return bound[0], bound[1]


def _upper_key(bound: numbers.Bound) -> tuple[Decimal, bool]:
    """Orders upper bounds by how much they let in (an exclusive one, at the same value, less)."""
    return bound[0], not bound[1]


class NumberKeywords(TranslatorCore):
    """The terminal of a number or integer place."""

    def type_integer(self, schema: dict[str, Any], pointer: str) -> str:
        low, high = self.bounds(schema, pointer, integer=True)
        if low is not None and high is not None and low > high:
            raise NoValue(f"{pointer or '#'}: no integer lies within the bounds")
        if self.readable and (low is not None and low >= regexes.READABLE_INTEGER
                              or high is not None and high <= -regexes.READABLE_INTEGER):
            raise NoValue(f"{pointer or '#'}: no integer within the bounds has at most 308 digits, as readable "
                          "numbers do (numbers='draft' writes longer ones)")
        if "multipleOf" in schema:
            found = self.integer_multiples(schema, low, high, pointer)
            if found is not None:
                return self.number_terminal(found, True)
        return self.number_terminal(self.integers(low, high), True)

    def integers(self, low: int | None, high: int | None) -> str:
        """The regex of the integers within the bounds, spelled as the draft allows."""
        if not self.float_integers or self.readable:
            return regexes.INTEGER if low is None and high is None else regexes.integer_range(low, high)
        return regexes.integer_spellings(low, high)

    def integer_multiples(self, schema: dict[str, Any], low: int | None, high: int | None, pointer: str) -> str | None:
        """The regex of the integers ``multipleOf`` keeps (None: every integer, or
        the step is not enforced). Read as doubles (``self.doubles``): those that
        ``multiples.as_doubles`` keeps, where it finds a step."""
        value = schema["multipleOf"]
        step = self.step(schema, pointer)
        read = self.as_doubles(value, integers=True)
        if read is not None and (read[1] is not None or self.within_reach(read[0], low, high)):
            kept, below = read
            inner_low = low if below is None else 1 - below if low is None else max(low, 1 - below)
            inner_high = high if below is None else below - 1 if high is None else min(high, below - 1)
            found = self.integer_steps(kept, inner_low, inner_high)
            if found != "":
                whole = Fraction(Fraction(numbers.exact(value)).numerator)  # the least integer multiple
                bounds = [None if b is None else (Decimal(b), False) for b in (low, high)]
                self.report_doubles(pointer, kept, below, whole, bounds[0], bounds[1],
                                    "every integer is a multiple of it" if found is None else
                                    "integers spelled as json.dumps spells them")
                return found
        whole_step = None if step is None else step.for_integers()
        if numbers.decimal_places(value) is not None or (whole_step is not None and whole_step.s == 0
                                                          and whole_step.c * whole_step.d == 1):
            self.decimal_multiples(pointer, "every integer is a multiple of it")
            return None
        if whole_step is not None and self.within_reach(whole_step, low, high):
            found = self.integer_steps(whole_step, low, high)
            if found == "":
                raise NoValue(f"{pointer or '#'}: no multiple of {value!r} lies within the bounds")
            self.decimal_multiples(pointer, "integers spelled as json.dumps spells them")
            return found
        self.approximate(pointer, "multipleOf", self.step_note())
        return None

    def integer_steps(self, step: multiples.Step, low: int | None, high: int | None) -> str | None:
        """The regex of the integers within the bounds that ``step`` (an integer step
        within reach, ``within_reach``) keeps: None where that is every integer, ""
        where there is none."""
        low_bound = None if low is None else (Decimal(low), False)
        high_bound = None if high is None else (Decimal(high), False)
        if (low is not None and high is not None and low > high) or not multiples.has_multiple(low_bound, high_bound, step):
            return ""
        if step.places_only and step.d == 1 and low is None and high is None:
            return None
        found = self.integers(low, high) if step.places_only else multiples.multiples(
            low_bound, high_bound, step, fractions=False, float_spellings=self.float_integers and not self.readable)
        return "" if found is None else multiples.divisible(found, step)

    def type_number(self, schema: dict[str, Any], pointer: str) -> str:
        keys: list[str] = [key for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if key in schema]
        if not keys and "multipleOf" not in schema:
            return self.number_terminal(regexes.NUMBER, False)
        found = self.number_bounds(schema, pointer)
        if found is None:
            for key in keys:
                self.approximate(pointer, key, f"bounds of more than {numbers.MAX_BOUND_DIGITS} digits are not enforced")
            found = (None, None)
        largest = Decimal(sys.float_info.max)
        if self.readable and (found[0] is not None and found[0][0] > largest or found[1] is not None and found[1][0] < -largest):
            raise NoValue(f"{pointer or '#'}: no number within the bounds is a finite double, as readable numbers are "
                          "(numbers='draft' writes larger ones)")
        regex = self.number_multiples(schema, *found, pointer) if "multipleOf" in schema else None
        if regex is None:
            regex = numbers.number_range(*found)
        if regex is None:
            raise NoValue(f"{pointer or '#'}: no number lies within the bounds")
        for key in keys:
            self.report.add(pointer, key, ENFORCED, "numbers spelled as json.dumps spells them")
        return self.number_terminal(regex, False)

    def number_multiples(self, schema: dict[str, Any], low: numbers.Bound | None, high: numbers.Bound | None,
                         pointer: str) -> str | None:
        """The regex of the numbers within the bounds that ``multipleOf`` keeps (None:
        the step is not enforced). Read as doubles (``self.doubles``): those that
        ``multiples.as_doubles`` keeps, where it finds a step."""
        value = schema["multipleOf"]
        step = self.step(schema, pointer)
        read = self.as_doubles(value, integers=False)
        if read is not None and (read[1] is not None or self.within_reach(read[0], low, high)):
            kept, below = read
            inner_low, inner_high = low, high
            if below is not None:
                inner_low = max(low or (Decimal(-below), True), (Decimal(-below), True), key=_lower_key)
                inner_high = min(high or (Decimal(below), True), (Decimal(below), True), key=_upper_key)
            found = self.number_steps(kept, inner_low, inner_high)
            if found is not None:
                self.report_doubles(pointer, kept, below, Fraction(numbers.exact(value)), low, high,
                                    "numbers spelled as json.dumps spells them")
                return found
        places = numbers.decimal_places(value)
        if places is not None:
            found = numbers.number_range(low, high, places)
        elif step is not None and self.within_reach(step, low, high):
            found = self.number_steps(step, low, high)
        else:
            self.approximate(pointer, "multipleOf", self.step_note())
            return None
        if found is None:
            raise NoValue(f"{pointer or '#'}: no multiple of {value!r} lies within the bounds")
        self.decimal_multiples(pointer, "numbers spelled as json.dumps spells them")
        return found

    def number_steps(self, step: multiples.Step, low: numbers.Bound | None, high: numbers.Bound | None) -> str | None:
        """The regex of the multiples of ``step`` (within reach, ``within_reach``)
        within the bounds (None: there are none)."""
        if not multiples.has_multiple(low, high, step):
            return None
        found = numbers.number_range(low, high, step.s) if step.places_only else \
            multiples.multiples(low, high, step, fractions=True, most_digits=self.most_number_digits)
        return None if found is None else multiples.divisible(found, step)

    @staticmethod
    def within_reach(step: multiples.Step, low: int | numbers.Bound | None, high: int | numbers.Bound | None) -> bool:
        """Whether ``multiples`` spells the multiples of ``step`` between these bounds:
        a power of ten at most 1 between any (``numbers``), others below 1e16."""
        values = [abs(b[0]) if isinstance(b, tuple) else None if b is None else Decimal(abs(b)) for b in (low, high)]
        return step.places_only or all(v is None or v < regexes.BIG for v in values)

    def as_doubles(self, value: int | float, integers: bool) -> tuple[multiples.Step, int | None] | None:
        """``multiples.as_doubles`` where numbers are read as doubles (``self.doubles``),
        a step within the options (``remainders``); None elsewhere."""
        if not self.doubles:
            return None
        read = multiples.as_doubles(value, integers)
        if read is None or (read[0].d > 1 and not self.options.remainders):
            return None
        return read

    def report_doubles(self, pointer: str, kept: multiples.Step, below: int | None, step: Fraction,
                       low: numbers.Bound | None, high: numbers.Bound | None, note: str) -> None:
        """``multipleOf`` read as doubles: enforced where the multiples kept are every
        multiple of ``step`` within the bounds, narrower where they are fewer."""
        beyond = below is not None and (multiples.has_multiple((Decimal(below), False), high, step)
                                        or multiples.has_multiple(low, (Decimal(-below), False), step))
        if Fraction(kept.value) == step and not beyond:
            self.report.add(pointer, "multipleOf", ENFORCED, note)
            return
        where = "" if below is None else f" below 1e{len(str(below)) - 1} in magnitude"
        # narrower, from an option's reading of numbers (as closed_objects): not an error under strict
        self.report.add(pointer, "multipleOf", APPROXIMATED, f"{DOUBLES_NOTE}: multiples of {kept.value:f}{where} "
                        "(multiple_of='decimal' or numbers='draft' take every one)", narrower=True)

    def decimal_multiples(self, pointer: str, note: str) -> None:
        """``multipleOf`` enforced as decimals: exactly, or (read as doubles, where
        ``as_doubles`` found no step) approximated."""
        if self.doubles:
            self.approximate(pointer, "multipleOf", DECIMAL_NOTE)
        else:
            self.report.add(pointer, "multipleOf", ENFORCED, note)

    def step_note(self) -> str:
        """Why a ``multipleOf`` is approximated."""
        if self.options.remainders:
            return STEP_NOTE
        return STEP_NOTE + " (remainders=False, where the lexer would pass its state limit: not with a factor prime to ten)"

    def step(self, schema: dict[str, Any], pointer: str) -> multiples.Step | None:
        """``multipleOf`` as a ``multiples.Step`` (None: not one the grammar enforces)."""
        step = schema["multipleOf"]
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0:
            raise SchemaError(f"{pointer or '#'}: multipleOf must be a number above 0, not {step!r}")
        found = multiples.step_of(step)
        return None if found is None or found.d > 1 and not self.options.remainders else found

    def number_bounds(self, schema: dict[str, Any], pointer: str) -> tuple[numbers.Bound | None, numbers.Bound | None] | None:
        """The tightest lower and upper bounds, as exact decimals (None when one has
        more than ``numbers.MAX_BOUND_DIGITS`` digits: not enforced)."""
        low: numbers.Bound | None = None
        high: numbers.Bound | None = None
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            value = schema.get(key)
            if value is None or isinstance(value, bool):  # draft 4: exclusive* qualify minimum/maximum
                continue
            if not isinstance(value, (int, float)) or value != value:
                raise SchemaError(f"{pointer or '#'}: {key} must be a number")
            lower = key in ("minimum", "exclusiveMinimum")
            if isinstance(value, float) and math.isinf(value):  # 1e400 read as infinity: beyond every number
                if (value < 0) == lower:
                    continue
                raise NoValue(f"{pointer or '#'}: no number lies within the bounds")
            exclusive = key.startswith("exclusive") or schema.get("exclusive" + key[0].upper() + key[1:]) is True
            bound = numbers.exact_bound(value, exclusive)
            if bound is None:
                return None
            if lower:
                low = bound if low is None or (bound[0], bound[1]) > (low[0], low[1]) else low
            else:
                high = bound if high is None or (bound[0], not bound[1]) < (high[0], not high[1]) else high
        return low, high

    def bounds(self, schema: dict[str, Any], pointer: str, integer: bool) -> tuple[int | None, int | None]:
        """Integer bounds from minimum/maximum/exclusive* (drafts 4 and 6+)."""
        low: int | None = None
        high: int | None = None
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key not in schema:
                continue
            value = schema[key]
            self.report.add(pointer, key, ENFORCED)
            if isinstance(value, bool):  # draft 4: exclusive* qualify minimum/maximum
                continue
            if not isinstance(value, (int, float)) or value != value:
                raise SchemaError(f"{pointer or '#'}: {key} must be a number")
            if isinstance(value, float) and math.isinf(value):  # 1e400 read as infinity: a bound beyond every integer
                if (value < 0) == (key in ("minimum", "exclusiveMinimum")):
                    continue
                raise NoValue(f"{pointer or '#'}: no integer lies within the bounds")
            exclusive = key.startswith("exclusive") or schema.get("exclusive" + key[0].upper() + key[1:]) is True
            if key in ("minimum", "exclusiveMinimum"):
                bound = int(value) + 1 if exclusive and value == int(value) else -(-value // 1)
                low = int(bound) if low is None else max(low, int(bound))
            else:
                bound = int(value) - 1 if exclusive and value == int(value) else value // 1
                high = int(bound) if high is None else min(high, int(bound))
        return low, high

"""Number bounds and ``multipleOf`` (``schema2grammar.numbers``,
``schema2grammar.multiples``): compared as exact decimals, spelled as
``json.dumps`` spells numbers, every spelling the draft allows
(``schema_checks.draft_grammar``; the narrower default: test_readable_numbers.py)."""

from __future__ import annotations

import json
import random
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from schema2grammar import APPROXIMATED, ENFORCED, Options, SchemaError, multiples, numbers, translate
from schema_checks import draft_grammar

PLAIN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
NORMALIZED = re.compile(r"-?[1-9](?:\.([0-9]+))?[eE][+-]?[0-9]+")
ZERO_WITH_EXPONENT = re.compile(r"-?0(?:\.0+)?[eE][+-]?[0-9]+")
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _spellings(rng: random.Random) -> list[str]:
    """json.dumps spellings of ints and floats of every size, and others: exponents
    anywhere, mantissas outside [1, 10), trailing zeros, -0."""
    values: list[float | int] = [0.0, -0.0, 1e16, 3.5e20, -2e17, 1e-7, -4.5e-9, 10**20, -(10**17)]
    for _ in range(600):
        value = rng.choice([rng.uniform(-300, 300), rng.uniform(-2, 2), rng.uniform(-1e-3, 1e-3),
                            rng.uniform(-1e-6, 1e-6), rng.uniform(-1e18, 1e18), float(rng.randint(-300, 300))])
        values += [value, round(value, rng.randint(0, 3)), rng.randint(-300, 300)]
    found = {json.dumps(v) for v in values}
    for head in ["0", "1", "5", "10", "100", "99", "2.5", "0.5", "0.25", "1.05", "0.01", "0.015", "9.99"]:
        for tail in ["", ".0", ".00", ".5", "0", "e0", "e1", "e-1", "E2", "e+2", "e-05", "e-5", "e16", "e+017", ".5e1"]:
            found.update(sign + head + tail for sign in ("", "-"))
    return sorted(text for text in found if JSON_NUMBER.fullmatch(text))


def _bound(rng: random.Random) -> numbers.Bound:
    choice = rng.random()
    if choice < 0.2:
        value = Decimal(rng.choice([0, 1, 5, 10, 100, -1, -5]))
    elif choice < 0.5:
        value = Decimal(rng.randint(-300, 300)).scaleb(-rng.randint(0, 3))
    elif choice < 0.7:
        value = Decimal(repr(rng.uniform(-2, 2)))
    elif choice < 0.85:
        value = Decimal(rng.choice(["1e-5", "2.5e-6", "1e16", "1.5e17", "-3e20", "0.0001", "9.99e-5", "-1e-5", "1e-7"]))
    else:
        value = Decimal(repr(rng.uniform(-1e-3, 1e-3)))
    return value, rng.random() < 0.3


def _inside(value: Decimal, low: numbers.Bound | None, high: numbers.Bound | None, places: int | None) -> bool:
    above = low is None or (value > low[0] if low[1] else value >= low[0])
    below = high is None or (value < high[0] if high[1] else value <= high[0])
    scaled = value.scaleb(places or 0)
    return above and below and (places is None or scaled == scaled.to_integral_value())


def _in_family(text: str, places: int | None) -> bool:
    """The spellings a range must take when its number is inside: plain ones,
    zero with an exponent, normalized exponents (with up to 16 digits after the
    mantissa's point where ``places`` limits them)."""
    if PLAIN.fullmatch(text) or ZERO_WITH_EXPONENT.fullmatch(text):
        return True
    normalized = NORMALIZED.fullmatch(text)
    return normalized is not None and (places is None or len(normalized.group(1) or "") <= numbers.MANTISSA_DIGITS)


@pytest.mark.parametrize("seed", range(4))
def test_number_ranges_equal_the_decimal_comparison(seed: int) -> None:
    """Every spelling a range's regex takes is a number inside it; every plain or
    normalized spelling inside it (so every json.dumps spelling) is taken."""
    rng = random.Random(seed)
    spellings = _spellings(rng)
    for _ in range(120):
        low = None if rng.random() < 0.25 else _bound(rng)
        high = None if rng.random() < 0.25 else _bound(rng)
        places = None if rng.random() < 0.5 else rng.choice([0, 1, 2, 3])
        regex = numbers.number_range(low, high, places)
        pattern = re.compile(regex) if regex is not None else None
        for text in spellings:
            inside = _inside(Decimal(text), low, high, places)
            taken = pattern is not None and pattern.fullmatch(text) is not None
            assert not taken or inside, (low, high, places, text)
            assert taken or not inside or not _in_family(text, places), (low, high, places, text)


def _accepts(schema: Any, instance: Any) -> bool:
    return draft_grammar(schema).accepts(json.dumps(instance))


def test_fractional_bounds_are_enforced_exactly() -> None:
    schema = {"type": "number", "minimum": 0.5, "exclusiveMaximum": 2.75}
    grammar = draft_grammar(schema)
    assert all(grammar.accepts(t) for t in ("0.5", "0.50", "0.51", "1", "2.7499", "5e-1", "2.5E0"))
    assert not any(grammar.accepts(t) for t in ("0.49999", "0.1", "2.75", "2.750", "3", "-1", "1e-05", "5.0e-1x"))
    assert {(e.keyword, e.status) for e in grammar.report.entries} >= {("minimum", ENFORCED), ("exclusiveMaximum", ENFORCED)}
    assert _accepts({"type": "number", "maximum": 0.1}, 0.1) and not _accepts({"type": "number", "maximum": 0.1}, 0.1000001)
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "maximum": -0.25,
              "exclusiveMaximum": True}
    assert _accepts(draft4, -0.3) and not _accepts(draft4, -0.25) and not _accepts(draft4, 0)


def test_bounds_of_any_size_are_enforced() -> None:
    """Bounds past json.dumps's switch to exponents (1e16) and below 1e-4 compare
    exponent spellings too."""
    big = {"type": "number", "minimum": 1e20, "maximum": 2.5e300}
    assert all(_accepts(big, v) for v in (1e20, 1.5e21, 10**25, 2.5e300))
    assert not any(_accepts(big, v) for v in (9.99e19, 10**19, 3e300, 0))
    small = {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5e-6}
    assert all(_accepts(small, v) for v in (1e-7, 2.5e-6, 2e-6, 5e-324))
    assert not any(_accepts(small, v) for v in (0, 0.0, 2.6e-6, 0.001, -1e-7))
    huge = {"type": "number", "minimum": 10**(numbers.MAX_BOUND_DIGITS + 1)}
    grammar = draft_grammar(huge)
    assert grammar.accepts("1")  # past the limit: approximated, and reported so
    assert ("minimum", APPROXIMATED) in {(e.keyword, e.status) for e in grammar.report.entries}
    with pytest.raises(SchemaError, match=r"#: minimum cannot be enforced exactly"):
        translate(huge, Options(strict=True))
    with pytest.raises(SchemaError, match="no number lies within the bounds"):
        draft_grammar({"type": "number", "maximum": 0.25, "minimum": 0.26})


def test_multiple_of_a_power_of_ten_keeps_to_decimal_places() -> None:
    cents = {"type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.01}
    grammar = draft_grammar(cents)
    assert all(grammar.accepts(t) for t in ("0", "0.5", "19.99", "19.990", "100", "100.00", "1.5e1", "0e5"))
    assert not any(grammar.accepts(t) for t in ("0.001", "19.999", "100.01", "-0.01", "1.2345e1", "1e-05"))
    assert ("multipleOf", ENFORCED) in {(e.keyword, e.status) for e in grammar.report.entries}
    assert _accepts({"type": "number", "multipleOf": 1}, 3.0) and not _accepts({"type": "number", "multipleOf": 1}, 3.5)
    assert _accepts({"type": "number", "multipleOf": 0.1}, 1.5e16)  # json.dumps's exponents: integers
    integers = draft_grammar({"type": "integer", "multipleOf": 0.01})
    assert ("multipleOf", ENFORCED) in {(e.keyword, e.status) for e in integers.report.entries}


STEPS = [2, 4, 5, 8, 10, 20, 25, 50, 0.5, 0.25, 2.5, 0.05, 0.2, 0.125, 12.5, 40]


def _multiple_spellings(rng: random.Random) -> list[str]:
    """Spellings of multiples and near misses of the steps above, json.dumps's
    exponents from 1e16 with every count of mantissa digits among them."""
    values: list[float | int] = []
    for _ in range(800):
        values += [rng.randint(-300, 300) * rng.choice([0.25, 0.5, 2.5, 0.05, 0.125, 1, 4]), rng.randint(-1000, 1000),
                   round(rng.uniform(-300, 300), rng.randint(0, 3)), rng.uniform(1e16, 1e19),
                   float(rng.randint(1, 10**4)) * 10 ** rng.randint(12, 20), rng.randint(1, 99) * 10 ** rng.randint(14, 19)]
    found = {json.dumps(v) for v in values}
    for head in ["0", "1", "5", "10", "100", "12.5", "2.5", "0.5", "0.25", "0.05", "0.125", "40", "8"]:
        for tail in ["", ".0", ".00", "0", "00", "e0", "e1", "e-1", "e+2", "e16", "e+17"]:
            found.update(sign + head + tail for sign in ("", "-"))
    return sorted(text for text in found if JSON_NUMBER.fullmatch(text))


@pytest.mark.parametrize("seed", range(3))
def test_multiples_equal_the_decimal_division(seed: int) -> None:
    """Every spelling ``multiples`` takes is a multiple of the step within the
    bounds (an integer, for integers); every plain or json.dumps spelling of one
    is taken."""
    rng = random.Random(seed)
    spellings = _multiple_spellings(rng)
    for _ in range(70):
        value = rng.choice(STEPS)
        step = multiples.step_of(value)
        assert step is not None, value
        integers = rng.random() < 0.3
        if integers:
            step = step.for_integers()
        low = None if rng.random() < 0.3 else (_multiple_bound(rng), rng.random() < 0.3)
        high = None if rng.random() < 0.3 else (_multiple_bound(rng), rng.random() < 0.3)
        regex = multiples.multiples(low, high, step, fractions=not integers)
        pattern = re.compile(regex) if regex is not None else None
        for text in spellings:
            number = Decimal(text)
            quotient = number / Decimal(repr(value) if isinstance(value, float) else value)
            inside = (_inside(number, low, high, None) and quotient == quotient.to_integral_value()
                      and (not integers or number == number.to_integral_value()))
            taken = pattern is not None and pattern.fullmatch(text) is not None
            assert not taken or inside, (value, integers, low, high, text)
            if inside and (PLAIN.fullmatch(text) or text == json.dumps(json.loads(text)) != "-0.0"):
                assert taken, (value, integers, low, high, text)


def _multiple_bound(rng: random.Random) -> Decimal:
    choice = rng.random()
    if choice < 0.5:
        return Decimal(rng.randint(-300, 300))
    if choice < 0.8:
        return Decimal(rng.randint(-3000, 3000)).scaleb(-rng.randint(1, 3))
    return Decimal(rng.choice(["0", "1e15", "-1e15", "9999999999999999"]))


def test_steps_dividing_a_power_of_ten_are_enforced() -> None:
    """MaskBench's cases: ``age`` a multiple of 4 in [16, 100], a number a multiple
    of 10 below 100, hours in quarters."""
    age = {"type": "integer", "minimum": 16, "maximum": 100, "multipleOf": 4}
    assert all(_accepts(age, v) for v in (16, 20, 100, 100.0)) and not any(_accepts(age, v) for v in (21, 12, 104, 18))
    tens = {"type": "number", "exclusiveMaximum": 100, "multipleOf": 10}
    assert all(_accepts(tens, v) for v in (20, 30.0, 0, -1e17)) and not any(_accepts(tens, v) for v in (21, 100, 25.5))
    quarters = {"type": "number", "minimum": 0.25, "multipleOf": 0.25}
    assert all(_accepts(quarters, v) for v in (0.25, 2.0, 2.75, 1e16)) and not any(_accepts(quarters, v) for v in (0, 0.3, 2.1))
    grammar = draft_grammar({"type": "integer", "multipleOf": 2.5})  # the integers among them: 5, 10, ...
    assert grammar.accepts("15") and not grammar.accepts("12") and grammar.report.exact
    assert draft_grammar({"type": "integer", "multipleOf": 1e-8}).report.exact  # every integer
    with pytest.raises(SchemaError, match="no multiple of 4 lies within the bounds"):
        draft_grammar({"type": "integer", "minimum": 5, "maximum": 7, "multipleOf": 4})


OTHER_STEPS = [3, 7, 11, 12, 33, 0.3, 1.5, 0.7, 6.75, 13.5, 77, 0.0003]


@pytest.mark.parametrize("value", OTHER_STEPS)
def test_steps_with_a_factor_prime_to_ten_equal_the_decimal_division(value: float) -> None:
    """``3`` or ``0.7``: the multiples of the power-of-ten part whose mantissa digits
    the rest divides (``divisible_by_D``), however the number is spelled."""
    rng = random.Random(str(value))
    spellings = _multiple_spellings(rng)
    step = Decimal(repr(value) if isinstance(value, float) else value)
    spelled = {json.dumps(k * value) for k in range(-40, 40)}
    if step == int(step):
        spelled |= {json.dumps(k * int(step)) for k in range(-40, 40)}
    spellings = sorted(set(spellings) | {text for text in spelled if JSON_NUMBER.fullmatch(text)})
    for integers in (False, True):
        low = (Decimal(rng.randint(-300, 0)), rng.random() < 0.5)
        high = None if integers else (Decimal(rng.randint(1, 300)), rng.random() < 0.5)
        schema: dict[str, Any] = {"type": "integer" if integers else "number", "multipleOf": value}
        schema["exclusiveMinimum" if low[1] else "minimum"] = int(low[0])
        if high is not None:
            schema["exclusiveMaximum" if high[1] else "maximum"] = int(high[0])
        grammar = draft_grammar(schema)
        assert grammar.report.exact, grammar.report.entries
        for text in spellings:
            number = Decimal(text)
            quotient = Fraction(number) / Fraction(step)  # exact: a Decimal quotient rounds past 28 digits
            inside = (_inside(number, low, high, None) and quotient.denominator == 1
                      and (not integers or number == number.to_integral_value()))
            taken = grammar.accepts(text)
            assert not taken or inside, (schema, text)
            if inside and (PLAIN.fullmatch(text) or text == json.dumps(json.loads(text)) != "-0.0"):
                assert taken, (schema, text)


def test_a_step_prime_to_ten_is_enforced_where_maskbench_has_it() -> None:
    """Github o25195 (draft 6): an integer property that is a multiple of 3."""
    schema = {"$schema": "http://json-schema.org/draft-06/schema#",
              "properties": {"bar": {"type": "integer", "multipleOf": 3}}}
    grammar = draft_grammar(schema)
    assert grammar.accepts('{"bar": 6}') and grammar.accepts('{"bar": 6.0}') and grammar.accepts('{"bar": 3e+16}')
    assert not grammar.accepts('{"bar": 7}') and not grammar.accepts('{"bar": 4.5}')
    with pytest.raises(SchemaError, match="no multiple of 7 lies within the bounds"):
        draft_grammar({"type": "integer", "minimum": 1, "maximum": 6, "multipleOf": 7})


@pytest.mark.parametrize("schema", [
    {"type": "number", "multipleOf": 1009},  # a factor prime to ten past MAX_DIVISOR
    {"type": "number", "multipleOf": 0.0025},  # 400 suffixes: past MAX_SUFFIXES
    {"type": "number", "multipleOf": 0.00005},  # past MAX_SCALE
    {"type": "integer", "multipleOf": 4, "maximum": 10**17},  # a bound beyond 1e16
])
def test_other_multiples_are_approximated_and_reported(schema: dict[str, Any]) -> None:
    """As decimals (readable numbers take fewer: ``0.0025``'s multiples of ``0.0625``,
    test_readable_numbers.py)."""
    report = translate(schema, Options(numbers="draft"))[1]
    assert ("", "multipleOf", APPROXIMATED) in {(e.pointer, e.keyword, e.status) for e in report.entries}
    with pytest.raises(SchemaError, match="#: multipleOf cannot be enforced exactly"):
        translate(schema, Options(strict=True, numbers="draft"))


def test_the_suffix_limit_is_where_it_says() -> None:
    eight = multiples.step_of(8)
    assert eight is not None and len(eight.suffixes()) == 125 <= multiples.MAX_SUFFIXES
    assert multiples.step_of(0.005) is not None and multiples.step_of(0.0025) is None  # 200 and 400 suffixes


@pytest.mark.parametrize("step", [0, -0.5, "0.1", True, None])
def test_a_malformed_multiple_of_is_named(step: Any) -> None:
    with pytest.raises(SchemaError, match=r"/properties/x: multipleOf must be a number above 0"):
        translate({"properties": {"x": {"type": "number", "multipleOf": step}}})


def test_remainders_go_last_where_the_lexer_would_pass_its_limit() -> None:
    """MaskBench's Handwritten allany8: numbers under several steps at once, each
    pair of ``oneOf`` branches one terminal, whose remainders the lexer runs side
    by side past its 50,000 states; the ladder's last stage gives them up, and the
    report says where the option came from."""
    steps = {"definitions": {"any1": {"oneOf": [{"multipleOf": 33}, {"multipleOf": 12}, {"multipleOf": 77}]},
                             "any2": {"oneOf": [{"allOf": [{"not": {"multipleOf": 6}}, {"not": {"multipleOf": 7}}]},
                                                {"multipleOf": 44}]},
                             "any3": {"oneOf": [{"not": {"multipleOf": 11}}, {"multipleOf": 13}]}},
             "type": "number", "allOf": [{"$ref": "#/definitions/any1"}, {"$ref": "#/definitions/any2"},
                                         {"$ref": "#/definitions/any3"}, {"not": {"multipleOf": 8}}]}
    grammar = draft_grammar(steps)
    notes = {e.note for e in grammar.report.entries if e.keyword == "multipleOf" and e.status == APPROXIMATED}
    assert notes and all("remainders=False" in note for note in notes)
    assert grammar.accepts("429") and grammar.accepts("12")  # 12: wider than the schema, as reported
    assert draft_grammar({"type": "integer", "multipleOf": 7}, remainders=False).accepts("8")


BIG_STEPS = [10, 20, 40, 30, 1e10, 2e10, 5e17, 1e20, 3e20, 1.25e21, 1e100, 1e300, 2e300, 8e300, 10**40, 7 * 10**30]


def _big_step_spellings(rng: random.Random, step: Decimal) -> list[str]:
    """Plain and json.dumps spellings of multiples of ``step`` (of every size, a
    float's digits or more) and of near misses: half steps, a unit more, powers of
    ten around the step's own."""
    found: set[str] = set()
    power = step.adjusted()
    for _ in range(300):
        k = rng.choice([rng.randint(-40, 40), rng.randint(-10**6, 10**6), rng.randint(1, 10**17), 2 ** rng.randint(0, 60)])
        value = step * k
        for near in (value, value + step / 2, value + 1, value + step / 10):
            found.add(format(near, "f").rstrip("0").rstrip(".") if "." in format(near, "f") else format(near, "f"))
            try:
                found.add(json.dumps(float(near)))
            except OverflowError:
                pass
        found.add(f"{rng.randint(1, 9)}.{rng.randint(0, 10**rng.randint(1, 16))}e+{power + rng.randint(-3, 20)}")
        found.add(f"{rng.randint(1, 9)}e+{max(power + rng.randint(-20, 20), 16)}")
    return sorted(text for text in found if JSON_NUMBER.fullmatch(text))


@pytest.mark.parametrize("value", BIG_STEPS, ids=str)
def test_steps_with_trailing_zeros_equal_the_decimal_division(value: int | float) -> None:
    """``1e10``, ``1e300``: the multiples of the digits before the zeros, followed by
    the zeros, and json.dumps's exponents decided by the mantissa's last digits and
    the exponent (once a schema-hang fuzz case: the old construction listed
    ``10**k`` candidate endings for a step's power of ten ``k``)."""
    step = Decimal(repr(value) if isinstance(value, float) else value)
    rng = random.Random(str(value))
    spellings = _big_step_spellings(rng, step)
    for integers in (False, True):
        grammar = draft_grammar({"type": "integer" if integers else "number", "multipleOf": value})
        assert grammar.report.exact, grammar.report.entries
        taken_count = 0
        for text in spellings:
            number = Decimal(text)
            inside = (Fraction(number) / Fraction(step)).denominator == 1 and (not integers or number == number.to_integral_value())
            taken = grammar.accepts(text)
            taken_count += taken
            assert not taken or inside, (value, integers, text)
            if inside and (PLAIN.fullmatch(text) or text == json.dumps(json.loads(text)) != "-0.0"):
                assert taken, (value, integers, text)
        assert taken_count > 50, value


def test_a_steps_power_of_ten_does_not_grow_its_regex() -> None:
    """The regex of a step's multiples grows with the digits its suffixes need, not
    with its power of ten; past ``MAX_STEP_ZEROS`` zeros (a Python integer: each
    zero is an automaton state) the step is approximated."""
    for digits in (1, 8, 125):
        sizes = {}
        for power in (10, 20, 100, 300):
            step = multiples.step_of(Decimal(digits).scaleb(power))
            assert step is not None
            sizes[power] = len(multiples.multiples(None, None, step, fractions=True) or "")
        assert max(sizes.values()) < 2 * min(sizes.values()) and max(sizes.values()) < 40_000, (digits, sizes)
    assert translate({"type": "number", "multipleOf": 10**multiples.MAX_STEP_ZEROS}, Options(numbers="draft"))[1].exact
    huge = {"type": "number", "multipleOf": 10 ** (multiples.MAX_STEP_ZEROS + 1)}
    assert ("", "multipleOf", APPROXIMATED) in {(e.pointer, e.keyword, e.status) for e in translate(huge)[1].entries}
    with pytest.raises(SchemaError, match="#: multipleOf cannot be enforced exactly"):
        translate(huge, Options(strict=True))


def test_a_step_is_read_exactly_and_integers_keep_few_suffixes() -> None:
    assert multiples.step_of(10**50 + 1) is None  # not 1e50 (Decimal.normalize rounds to 28 digits)
    assert multiples.step_of(3 * 10**50) == multiples.Step(1, -50, 0, 3)
    whole = multiples.step_of(7.8125)  # 125/16: its integers are the multiples of 125
    assert whole is not None and len(whole.for_integers().suffixes()) == 8

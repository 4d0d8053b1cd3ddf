"""Numbers a JSON reader reads back as meant (``Options.numbers``, default
``"readable"``): an integer as digits, every number a finite double.

Under the draft's spellings a model wrote ``"population": 2.8752525252525267e+3018``
for an integer field (``json.loads`` reads infinity) and ``1.0`` for integers that
Pydantic then reads as floats; what a grammar allows, a model eventually writes.
"""

from __future__ import annotations

import json
import math
import random
import sys
from decimal import Decimal, localcontext
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import structgen
from schema2grammar import Options, regexes
from structgen.constraint import OutputValidationError
from structgen.schema_validator import json_schema_validator

INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}


def _reads_finite(text: str) -> bool:
    """What ``json.loads`` reads, and what ``JSON.parse`` would: a finite double."""
    value = json.loads(text)
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer past the largest double: JSON.parse reads infinity
        return False


def _random_spelling(rng: random.Random) -> str:
    """A JSON number of any size and spelling: 1 to 400 digits before the point,
    maybe a fraction, maybe an exponent of up to four digits (leading zeros, sign)."""
    digits = rng.choice([1, 1, 2, 3, 17, 200, 209, 210, 308, 309, 400])
    whole = "0" if digits == 1 and rng.random() < 0.2 else str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(digits - 1))
    text = ("-" if rng.random() < 0.3 else "") + whole
    if rng.random() < 0.5:
        text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
    if rng.random() < 0.7:
        exponent = rng.choice([rng.randint(0, 99), rng.randint(290, 330), rng.randint(0, 4000)])
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + "0" * rng.choice([0, 0, 1, 2]) + str(exponent)
    return text


def test_every_float_json_dumps_writes_is_a_readable_number() -> None:
    grammar = structgen.Grammar.from_json_schema(NUMBER)
    rng = random.Random(7)
    edges = [sys.float_info.max, -sys.float_info.max, sys.float_info.min, 5e-324, 1e16, 1e-5, 1e-4, 0.1, -0.0, 1e308]
    values = edges + [rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308) for _ in range(2_000)]
    for value in values:
        if math.isfinite(value):
            assert grammar.accepts(json.dumps(value)), json.dumps(value)


def test_a_readable_number_reads_as_a_finite_double() -> None:
    """Sound: whatever the grammar accepts reads back finite. Not empty: most of
    the random spellings that read finite are accepted too."""
    readable = structgen.Grammar.from_json_schema(NUMBER)
    draft = structgen.Grammar.from_json_schema(NUMBER, numbers="draft")
    rng = random.Random(11)
    finite = accepted = refused_infinite = 0
    for _ in range(3_000):
        text = _random_spelling(rng)
        assert draft.accepts(text), text  # every spelling is a JSON number
        if readable.accepts(text):
            assert _reads_finite(text), text
            accepted += 1
        elif not _reads_finite(text):
            refused_infinite += 1
        finite += _reads_finite(text)
    assert refused_infinite > 300 and accepted > 0.8 * finite


def test_the_boundary_of_the_largest_double() -> None:
    grammar = structgen.Grammar.from_json_schema(NUMBER)
    for text in ["1.7976931348623157e+308", "1.7976931348623157E308", "-1.79769313486231570e+0308", "9.99e307",
                 "1" * 308, "0.5e308", "1e-400", "12.5e3", "9" * 209 + "e99"]:
        assert grammar.accepts(text), text
    for text in ["1.7976931348623158e+308", "1.79769313486231571e308", "2e308", "1e309", "0.5e309", "1e4000",
                 "1" * 309, "10e299", "9" * 210 + "e1", "2.8752525252525267e+3018"]:
        assert not grammar.accepts(text), text


@pytest.mark.parametrize(
    "schema",
    [INTEGER, {"type": "integer", "minimum": 0}, {"type": "integer", "multipleOf": 3}, {"type": "integer", "maximum": 10**20},
     {"type": "integer", "not": {"enum": [3]}}, {"type": ["integer", "string"]}],
)
def test_an_integer_is_written_as_digits(schema: dict[str, Any]) -> None:
    readable = structgen.Grammar.from_json_schema(schema, multiple_of="decimal")  # doubles' multiples: below
    draft = structgen.Grammar.from_json_schema(schema, numbers="draft")
    for text in ["6", "-6", "0", "12345678901234567890"]:
        assert readable.accepts(text) == draft.accepts(text), text  # the same integers...
    for text in ["6.0", "6.00", "1.2e+17", "6e0", "-0.0"]:
        assert not readable.accepts(text), text  # ...never spelled as floats
    assert any(draft.accepts(text) for text in ["6.0", "1.2e+17"])  # the draft's spellings are wider
    assert not readable.accepts("9" * 309)


def test_listed_numbers_are_spelled_as_written() -> None:
    grammar = structgen.Grammar.from_json_schema({"enum": [5, 2.5, 1e20]})
    assert [grammar.accepts(t) for t in ["5", "2.5", "1e+20", "5.0", "100000000000000000000"]] == [True, True, True, False, False]
    assert structgen.Grammar.from_json_schema({"const": 5}, numbers="draft").accepts("5.0")


def test_any_value_holds_readable_numbers() -> None:
    grammar = structgen.Grammar.from_json_schema({"type": "object"}, closed_objects=False)
    assert grammar.accepts('{"a": [1.5, -2e-400, {"b": 1e300}]}')
    assert not grammar.accepts('{"a": [1e400]}')


def test_the_option_is_checked() -> None:
    with pytest.raises(ValueError, match="numbers must be one of"):
        Options(numbers="json")
    assert regexes.readable("[0-9]+", True).startswith("(?!")


class Measures(BaseModel, strict=True):
    n: float
    i: int
    xs: list[float]


MEASURES = {
    "type": "object",
    "properties": {"n": NUMBER, "i": INTEGER, "xs": {"type": "array", "items": NUMBER, "maxItems": 4}},
    "required": ["n", "i", "xs"],
}
NUMBERISH = ["e", "E", "e+", "e-", ".", "0", "1", "3", "5", "7", "9", "}", ",", "]", "-"]


@pytest.fixture(scope="module")
def exponent_model() -> tuple[Any, Any]:
    """A random-weight model that likes exponents: what a real model does now and then."""
    import torch

    from tiny_model import tiny_model

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer, seed=3, closing_bias=1.0)
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        for text in NUMBERISH:
            for token in tokenizer.encode(text, add_special_tokens=False):
                head[token] *= 5.0
    return model, tokenizer


def _unreadable(text: str) -> bool:
    try:
        Measures.model_validate_json(text)
        value = json.loads(text)
    except (ValidationError, ValueError):
        return True
    return not all(math.isfinite(x) for x in [value["n"], *value["xs"]])


def test_generated_numbers_read_back(exponent_model: tuple[Any, Any]) -> None:
    """Every output of a sampling run reads with ``json.loads`` (finite) and
    Pydantic's strict mode; the same model under the draft's spellings writes
    numbers no reader takes."""
    model, tokenizer = exponent_model
    outputs = []
    for seed in (1, 2, 3):
        outputs += structgen.generate_batch(model, tokenizer, ["Numbers:"] * 16, schema=MEASURES, temperature=1.0, seed=seed,
                                            max_tokens=120, details=True)
    finished = [g for g in outputs if g.finish_reason == "stop"]
    assert len(finished) > 40
    assert sum("e" in g.text.lower() for g in finished) > 10  # the model did write exponents
    for generation in finished:
        assert not _unreadable(generation.text), generation.text
        assert isinstance(json.loads(generation.text)["i"], int)
    unreadable = 0
    for seed in (1, 2, 3):
        try:
            drafts = structgen.generate_batch(model, tokenizer, ["Numbers:"] * 16, schema=MEASURES, temperature=1.0,
                                              seed=seed, max_tokens=120, details=True, numbers="draft")
        except OutputValidationError:  # the final check found one (an infinite integer)
            unreadable += 1
            continue
        unreadable += sum(_unreadable(g.text) for g in drafts if g.finish_reason == "stop")
    assert unreadable > 0


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "integer", "minimum": 10**400}, "no integer within the bounds has at most 308 digits"),
        ({"type": "integer", "maximum": -(10**308)}, "no integer within the bounds has at most 308 digits"),
        ({"type": "number", "exclusiveMinimum": 10**309}, "no number within the bounds is a finite double"),
    ],
)
def test_bounds_past_every_readable_number_say_so(schema: dict[str, Any], message: str) -> None:
    """Valid under the draft, no value under readable numbers: a ``SchemaError``
    that names the option, not a grammar that matches nothing."""
    from schema2grammar import SchemaError

    with pytest.raises(SchemaError, match=f"^#: {message}"):
        structgen.Grammar.from_json_schema(schema)
    assert structgen.Grammar.from_json_schema(schema, numbers="draft").report.exact


def _step_multiples(rng: random.Random, step: int | float) -> list[str]:
    """Spellings of multiples of ``step`` (as decimals) of every size, and near
    misses: plain, json.dumps's of the float, exponents of any mantissa."""
    exact = Decimal(repr(step)) if isinstance(step, float) else Decimal(step)
    found: set[str] = set()
    for _ in range(400):
        k = rng.choice([rng.randint(-60, 60), rng.randint(-10**4, 10**4), rng.randint(-10**9, 10**9),
                        rng.randint(1, 10**17), rng.randint(1, 10**40), 2 ** rng.randint(0, 80), 7 * 10 ** rng.randint(0, 300)])
        k *= rng.choice([1, 1, 5 ** rng.randint(1, 8), 10 ** rng.randint(1, 8)])  # multiples a double may hold exactly
        found.add(str(rng.randint(-10**6, 10**6)))
        with localcontext() as context:
            context.prec = 400
            for value in (exact * k, exact * k + exact / 2, exact * k + Decimal("1e-20")):
                plain = format(value, "f")
                found.add(plain.rstrip("0").rstrip(".") if "." in plain else plain)
                if abs(value) < Decimal("1e308"):
                    found.add(json.dumps(float(value)))
                    found.add(f"{float(value):.{rng.randint(1, 20)}e}")
    return sorted(text for text in found if len(text) < 400)


DOUBLE_STEPS = [7, 3, 10, 24, 1e10, 0.5, 0.25, 2.5, 0.01, 0.1, 1e-3, 0.3, 1.5, 7.8125, 0.05, 1e-8, 0.7, 1e300]


@pytest.mark.parametrize("step", DOUBLE_STEPS, ids=str)
def test_readable_multiples_are_multiples_to_jsonschema(step: int | float) -> None:
    """What a readable grammar takes, ``jsonschema`` (reading doubles, dividing them)
    takes too: ``7e300`` and ``5.90111146354847740e49`` are decimal multiples of 7
    but no double multiple (fuzz cases schema-walk-0-164 and 0-656), ``0.3 / 0.1``
    is ``2.9999999999999996``. Exact where the report says so; otherwise narrower
    (the report says so), or approximated where no step is known (``0.7``, ``1e300``)."""
    import jsonschema

    rng = random.Random(repr(step))
    spellings = _step_multiples(rng, step)
    for kind, bounds in [("number", {}), ("integer", {}), ("number", {"minimum": -100, "exclusiveMaximum": 1000}),
                         ("integer", {"exclusiveMinimum": 0})]:
        schema = json.loads(json.dumps({"type": kind, "multipleOf": step, **bounds}))  # as a JSON reader has it
        grammar = structgen.Grammar.from_json_schema(schema, multiple_of="double")
        validator = jsonschema.Draft202012Validator(schema)
        entry = next(e for e in grammar.report.entries if e.keyword == "multipleOf")
        taken = [text for text in spellings if grammar.accepts(text)]
        if entry.status == "approximated" and not entry.narrower:  # no step known: checked after
            assert step in (0.7, 1e300), entry
            continue
        assert grammar.report.sound
        for text in taken:
            assert validator.is_valid(json.loads(text)), (schema, text)
        assert len(taken) >= 20 or bounds, (schema, taken)
        draft = structgen.Grammar.from_json_schema(schema, numbers="draft")
        assert all(draft.accepts(text) for text in taken)  # narrower than the draft's decimal multiples


@pytest.mark.parametrize(("text", "readable"), [
    ("7e300", False), ("5.90111146354847740e49", False), ("1.078e81", False), (str(7 * 2**60), False),
    ("14", True), ("14.0", True), ("1.4e1", True), ("-700000000000000", True), ("7e14", True), ("7e15", False),
])
def test_multiples_of_seven_read_as_doubles(text: str, readable: bool) -> None:
    """The fuzz cases: decimal multiples of 7 (taken by default, as the draft means
    them) whose doubles are none (left out with ``multiple_of="double"``); below 1e15
    every multiple is a double and its remainder exact."""
    schema = {"type": "number", "multipleOf": 7}
    assert structgen.Grammar.from_json_schema(schema, multiple_of="double").accepts(text) is readable
    assert structgen.Grammar.from_json_schema(schema, numbers="draft").accepts(text)
    assert structgen.Grammar.from_json_schema(schema).accepts(text)
    assert structgen.Grammar.from_json_schema(schema).report.exact
    assert not list(json_schema_validator(schema).iter_errors(json.loads(text, parse_float=Decimal)))


def test_the_report_says_where_doubles_take_fewer() -> None:
    from schema2grammar import APPROXIMATED, ENFORCED, SchemaError

    def entry(schema: dict[str, Any], **options: Any) -> Any:
        report = structgen.Grammar.from_json_schema(schema, **{"multiple_of": "double", **options}).report
        return next(e for e in report.entries if e.keyword == "multipleOf")

    assert entry({"type": "integer", "minimum": 0, "maximum": 1000, "multipleOf": 7}).status == ENFORCED
    assert entry({"type": "number", "multipleOf": 0.5}).status == ENFORCED  # a power of two: every double is exact
    for schema in [{"type": "number", "multipleOf": 7}, {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 0.01}]:
        found = entry(schema)
        assert (found.status, found.narrower) == (APPROXIMATED, True) and "read as doubles" in found.note, found
        assert entry(schema, multiple_of="decimal").status == ENFORCED
        assert entry(schema, numbers="draft").status == ENFORCED
        structgen.Grammar.from_json_schema(schema, strict=True, multiple_of="double")  # narrower: no error
    cents = structgen.Grammar.from_json_schema({"type": "number", "multipleOf": 0.01}, multiple_of="double")
    assert [cents.accepts(t) for t in ["0.25", "19.75", "3", "19.99", "0.03"]] == [True, True, True, False, False]
    assert structgen.Grammar.from_json_schema({"type": "number", "multipleOf": 0.01}, multiple_of="decimal").accepts("19.99")
    widened = entry({"type": "number", "multipleOf": 0.7})  # 0.7's double is too far from it: no step known
    assert (widened.status, widened.narrower) == (APPROXIMATED, False)
    with pytest.raises(SchemaError, match="multipleOf cannot be enforced exactly"):
        structgen.Grammar.from_json_schema({"type": "number", "multipleOf": 0.7}, strict=True, multiple_of="double")
    prices = structgen.Grammar.from_json_schema({"type": "number", "multipleOf": 0.01})  # the default: decimals
    assert prices.report.exact and [prices.accepts(t) for t in ["19.99", "0.03", "7", "0.001"]] == [True, True, True, False]
    with pytest.raises(ValueError, match="multiple_of must be one of"):
        Options(multiple_of="float")

"""Number bounds of any size and precision, and ``multipleOf`` (``0.01``, ``4``,
``7``, ``1.5``), enforced by the grammar: what it accepts next to an exact decimal check, and the
regex one bounded number becomes.

Run: .venv/bin/python examples/number_bounds.py
"""

from decimal import Decimal

import structgen
from schema2grammar import multiples, numbers

schema = {
    "type": "object",
    "properties": {
        "price": {"type": "number", "exclusiveMinimum": 0, "maximum": 9999.99, "multipleOf": 0.01},
        "ratio": {"type": "number", "minimum": 0.25, "exclusiveMaximum": 0.75},
        "tiny": {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5e-6},
        "age": {"type": "integer", "minimum": 16, "maximum": 100, "multipleOf": 4},
        "week": {"type": "integer", "multipleOf": 7},
        "dose": {"type": "number", "minimum": 0, "multipleOf": 1.5},
    },
}

# multipleOf on the decimal written (the default, multiple_of="decimal"; "double" keeps only the
# multiples a reader's double holds exactly: 19.99 / 0.01 is 1998.9999999999998 in doubles)
grammar = structgen.Grammar.from_json_schema(schema)
print(grammar.report)


def decimal_check(name: str, text: str) -> bool:
    """The schema's bounds, checked on the decimal the text spells."""
    value = Decimal(text)
    if name == "price":
        return 0 < value <= Decimal("9999.99") and value == value.quantize(Decimal("0.01"))
    if name == "ratio":
        return Decimal("0.25") <= value < Decimal("0.75")
    if name == "age":
        return 16 <= value <= 100 and value % 4 == 0
    if name == "week":
        return value % 7 == 0
    if name == "dose":
        return value >= 0 and value % Decimal("1.5") == 0
    return 0 < value <= Decimal("2.5e-6")


for name, text in [("price", "19.99"), ("price", "19.999"), ("price", "0"), ("price", "10000"), ("price", "1.5e2"),
                   ("ratio", "0.25"), ("ratio", "0.2499"), ("ratio", "0.75"), ("ratio", "7.4e-1"),
                   ("tiny", "1e-07"), ("tiny", "2.5e-06"), ("tiny", "2.6e-06"), ("tiny", "0.0000025"),
                   ("age", "16"), ("age", "18"), ("age", "96"), ("age", "104"),
                   ("week", "-21"), ("week", "22"), ("week", "1.4e+17"), ("week", "7e+16"), ("week", "98765432101"),
                   ("dose", "4.5"), ("dose", "3.0"), ("dose", "2.5"), ("dose", "1.5e+16"), ("dose", "-1.5")]:
    instance = f'{{"{name}": {text}}}'
    print(f"{instance:24} grammar {grammar.accepts(instance)!s:5} decimal check {decimal_check(name, text)}")

print("\nratio's regex:", numbers.number_range((Decimal("0.25"), False), (Decimal("0.75"), True)))
step = multiples.step_of(4)
assert step is not None
print("age's regex:", multiples.multiples((Decimal(16), False), (Decimal(100), False), step, fractions=False))
week = multiples.step_of(7)
assert week is not None
print("week's regex (the engine's divisible_by_7 group around every integer):",
      multiples.divisible(r"-?(?:0|[1-9][0-9]*)", week))

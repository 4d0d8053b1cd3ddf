"""``structgen.shortest``: the shortest text of a grammar, in bytes, exactly."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from structgen import Grammar
from structgen.shortest import shortest_text_bytes


@pytest.mark.parametrize(
    ("lark", "expected"),
    [
        ('start: "abc"', 3),
        ('start: a b+ "x"\na: "hello" | "hi" a\nb: "yy" | "z" b\n%ignore " "', 8),
        ('start: "(" start ")" | "<>"', 2),
        ('start: x | y\nx: "aaaa" x | "b"\ny: "cc"', 1),
        ("start: A B?\nA: /[0-9]{3,5}/\nB: /[a-z]+/", 3),
    ],
)
def test_shortest_of_lark_grammars(lark: str, expected: int) -> None:
    assert shortest_text_bytes(Grammar.from_lark(lark)) == expected


@pytest.mark.parametrize(("pattern", "expected"), [("abc(d|ef)+", 4), ("é{2}", 4), ("[a-z]{7,9}|x{10}", 7)])
def test_shortest_of_regexes_counts_bytes(pattern: str, expected: int) -> None:
    assert shortest_text_bytes(Grammar.from_regex(pattern)) == expected


def test_shortest_of_schemas_is_their_compact_minimum() -> None:
    schema = {"type": "object", "properties": {"ab": {"const": "xyz"}, "n": {"type": "integer"}}, "required": ["ab"]}
    assert shortest_text_bytes(Grammar.from_json_schema(schema)) == len('{"ab":"xyz"}')
    tree = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}, "minItems": 1}},
            "anyOf": [{"type": "boolean"}, {"$ref": "#/$defs/t"}, {"type": "string", "minLength": 9}]}
    assert shortest_text_bytes(Grammar.from_json_schema(tree)) == len("true")


def test_shortest_agrees_with_enumerating_short_texts() -> None:
    """Random small grammars over three letters: the shortest accepted text found by
    trying every text up to length 6 (in order of length) is the computed one. (The
    terminals are not prefixes of one another: where maximal munch lexes a text
    otherwise than the rules join terminals, ``"x" "y"`` read as one ``"xy"``, the
    count is a lower bound, which is what a budget check needs.)"""
    rng = random.Random(7)
    for _ in range(40):
        names = ["start", "a", "b"]
        rules = []
        for name in names:
            options = []
            for _ in range(rng.randint(1, 3)):
                symbols = [rng.choice(['"x"', '"y"', '"zz"', "a", "b"]) for _ in range(rng.randint(1, 3))]
                options.append(" ".join(symbols))
            if name != "start" and rng.random() < 0.5:
                options.append('"y"')
            rules.append(f"{name}: " + " | ".join(options))
        try:
            grammar = Grammar.from_lark("\n".join(rules))
        except Exception:  # noqa: BLE001 (an empty language: nothing to compare)
            continue
        brute = next((n for n in range(7) for text in map("".join, itertools.product("xyz", repeat=n))
                      if grammar.accepts(text)), None)
        if brute is not None:
            assert shortest_text_bytes(grammar) == brute, json.dumps(rules)
        else:
            assert shortest_text_bytes(grammar) > 6, json.dumps(rules)

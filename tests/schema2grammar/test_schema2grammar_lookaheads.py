"""Lookaheads at the start of a pattern anchored by ``^``: a conjunction of
patterns without them (``ecma.conjuncts``), enforced in string terminals, property
names, ``propertyNames`` and ``not``."""

from __future__ import annotations

from typing import Any

import pytest
from schema_checks import agrees

from schema2grammar import APPROXIMATED, ecma, translate

# Ansible's variable names (SchemaStore vars.json): any identifier but a keyword
IDENTIFIER = "^(?!(False|None|True|if|for)$)[a-zA-Z_][\\w]*$"


def test_leading_lookaheads_are_a_conjunction() -> None:
    assert ecma.conjuncts("^(?=.*[0-9])(?!.*\\s)[a-z0-9]{8,}$") == [
        (True, "^(?:[a-z0-9]{8,}$)"), (True, "^(?:.*[0-9])"), (False, "^(?:.*\\s)")]
    assert ecma.conjuncts("^(?!(a|b)$)") == [(True, "^(?:)"), (False, "^(?:(a|b)$)")]
    assert ecma.conjuncts("a(b)") == [(True, "a(b)")]


@pytest.mark.parametrize("pattern", ["a(?=b)", "(?!x)y", "^a(?!b)", "^(?!x)a|b", "^((?!mode).)*$", "^(?=(?!x)a)b",
                                     "^(?=a)*b", "(?<=a)b"])
def test_other_lookarounds_are_unsupported(pattern: str) -> None:
    with pytest.raises(ecma.Unsupported, match="lookaround other than at the start|lookbehind"):
        ecma.conjuncts(pattern)
    entries = translate({"type": "string", "pattern": pattern})[1].entries
    assert [e.status for e in entries if e.keyword == "pattern"] == [APPROXIMATED]


CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("password rules", {"type": "string", "pattern": "^(?=.*[0-9])(?=.*[A-Z])[ -~]{8,}$"},
     ["Passw0rdX", "ABCDEFG1", "a B c D 1"], ["abcdefgh", "A1", "A1bcdefg\u00e9", "Abcdefgh"]),
    ("reserved words", {"type": "string", "pattern": IDENTIFIER}, ["iff", "x1", "_", "Nonex"], ["if", "None", "1a", ""]),
    ("beside lengths", {"type": "string", "pattern": "^(?!org\\.bukkit\\.)([a-z]+\\.)*[A-Za-z]+$", "maxLength": 16},
     ["org.example.Foo", "org.bukkit", "org.bukkitx.A"], ["org.bukkit.Foo", "org.example.Foobar"]),
    ("an empty rest", {"type": "string", "pattern": "^(?!x)"}, ["", "yx", "\u00e9"], ["x", "xy"]),
    ("pattern properties", {"type": "object", "patternProperties": {IDENTIFIER: {"type": "integer"}},
                            "additionalProperties": False},
     [{"a": 1}, {"Truex": 1, "b": 2}, {}], [{"if": 1}, {"True": 2}, {"1a": 3}, {"a": "x"}]),
    ("pattern properties beside others", {"type": "object", "properties": {"for": {"type": "string"}},
                                          "patternProperties": {IDENTIFIER: {"type": "integer"}, "^f": {"minimum": 5}},
                                          "additionalProperties": {"type": "boolean"}},
     [{"for": "x", "fx": 5, "g": 1, "1": True}], [{"fx": 4}, {"None": 1}, {"g": True}, {"for": 1}]),
    ("property names", {"type": "object", "propertyNames": {"pattern": "^(?!x)"}}, [{"a": 1}, {"": 1}], [{"xa": 1}]),
    ("not", {"type": "string", "not": {"pattern": "^(?=a)(?!ab)"}}, ["ab", "b", "abc", ""], ["a", "ac"]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), CASES, ids=[case[0] for case in CASES])
def test_leading_lookaheads_are_enforced(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_python_regex_keeps_every_lookahead() -> None:
    """Values are judged with Python's re (the validator, declared names): it reads
    lookaheads anywhere, as ECMA-262 does."""
    assert ecma.searches("a(?!b)", "ab") is False and ecma.searches("a(?!b)", "abac") is True
    assert ecma.searches(IDENTIFIER, "None") is False and ecma.searches(IDENTIFIER, "Nonex") is True

"""The strings a schema accepts as automata (schema2grammar/string_sets.py): the
verdict on each string and the regex of the whole set agree with jsonschema, on
random schemas over random strings; the reader's limits and errors."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import jsonschema
import pytest

from schema2grammar import SchemaError, automata, ecma, string_sets
from schema2grammar.complement import Draft

DRAFT = Draft(float_integers=True, format_assertion=True, resolve=None)
ALPHABET = "ab1_é😀\"\\\t"  # no newline: Python's $ matches before one, ECMA's does not
PATTERNS = ["^a", "b$", "a", "^[ab]+$", "\\d", "^.{2}$", "é|😀", "^(ab)*$", '"']


def _random_strings_schema(rng: random.Random, depth: int = 0) -> Any:
    """A schema over strings: the keywords that judge them, nested in the
    combinators, with other types' keywords beside (which judge no string)."""
    if depth < 3 and rng.random() < 0.45:
        key = rng.choice(["not", "anyOf", "allOf", "oneOf", "if"])
        if key == "not":
            return {"not": _random_strings_schema(rng, depth + 1)}
        if key == "if":
            return {"if": _random_strings_schema(rng, depth + 1), "then": _random_strings_schema(rng, depth + 1),
                    "else": _random_strings_schema(rng, depth + 1)}
        return {key: [_random_strings_schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    choices: list[Any] = [
        lambda: {"pattern": rng.choice(PATTERNS)},
        lambda: {rng.choice(["minLength", "maxLength"]): rng.randint(0, 3)},
        lambda: {"minLength": 1, "maxLength": 2},
        lambda: {"enum": rng.sample(["", "a", "ab", "é", "b1", 3, None], rng.randint(1, 3))},
        lambda: {"const": rng.choice(["a", "ab", 1])},
        lambda: {"type": rng.choice(["string", "integer", ["string", "null"]])},
        lambda: {"required": ["a"], "minimum": 3},
        lambda: rng.choice([True, False]),
    ]
    return rng.choice(choices)()


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 4)))


def test_random_string_sets_agree_with_jsonschema() -> None:
    """``holds`` is jsonschema's verdict on a string, and ``spelled`` matches
    exactly the ``json.dumps`` spellings of the strings that hold."""
    rng = random.Random(14)
    regexes = 0
    for _ in range(300):
        schema = _random_strings_schema(rng)
        strings = string_sets.of_schema(schema, "", DRAFT)
        validator = jsonschema.Draft202012Validator(schema)
        regex = string_sets.spelled(strings)
        compiled = re.compile(regex) if regex is not None else None
        regexes += compiled is not None
        for _ in range(60):
            text = _random_text(rng)
            valid = validator.is_valid(text)
            assert strings.holds(text) == valid, (schema, text)
            spelled = json.dumps(text, ensure_ascii=False)[1:-1]
            assert (compiled is not None and compiled.fullmatch(spelled) is not None) == valid, (schema, text, regex)
    assert regexes > 150


def test_an_empty_set_has_no_regex() -> None:
    for schema in ({"type": "integer"}, {"not": {"pattern": ""}}, {"enum": [1, 2]}, {"minLength": 3, "maxLength": 2},
                   {"allOf": [{"const": "a"}, {"const": "b"}]}):
        assert string_sets.spelled(string_sets.of_schema(schema, "", DRAFT)) is None, schema


def test_both_and_negate() -> None:
    """The strings of one set less another's (the complement a ``not`` needs)."""
    words = string_sets.of_schema({"pattern": "^[ab]{1,3}$"}, "", DRAFT)
    less = string_sets.both(words, string_sets.negate(string_sets.of_schema({"enum": ["a", "ab"]}, "", DRAFT)))
    regex = re.compile(string_sets.spelled(less) or "")
    found = sorted(t for t in ("", "a", "b", "ab", "ba", "abb", "abab", "c") if regex.fullmatch(t))
    assert found == ["abb", "b", "ba"]


def test_references_and_drafts() -> None:
    """``$ref`` followed (alone before 2019-09), ``if`` from draft 7 on, ``format``
    only where the draft asserts it, dynamic references not read."""
    root = {"$defs": {"short": {"maxLength": 2}}}
    resolve = lambda target: root["$defs"][target.rsplit("/", 1)[1]]  # noqa: E731
    modern = Draft(True, False, resolve)
    older = Draft(True, True, resolve, ref_alone=True, conditional=False)
    beside = {"$ref": "#/$defs/short", "pattern": "^a"}
    assert not string_sets.of_schema(beside, "", modern).holds("b")
    assert string_sets.of_schema(beside, "", older).holds("b") and not string_sets.of_schema(beside, "", older).holds("bbb")
    conditional = {"if": {"const": "a"}, "then": False}
    assert not string_sets.of_schema(conditional, "", modern).holds("a")
    assert string_sets.of_schema(conditional, "", older).holds("a")  # draft 6: an annotation
    assert string_sets.of_schema({"format": "date"}, "", modern).formula == string_sets.TRUE
    for schema in ({"format": "date"}, {"format": "idn-email"}, {"$dynamicRef": "#x"}, {"$ref": "http://example.com/s"}):
        with pytest.raises(ecma.Unsupported):
            string_sets.of_schema(schema, "", older)


def test_reading_limit_ends_a_recursive_reference() -> None:
    root: dict[str, Any] = {"$defs": {"loop": {"not": {"$ref": "#/$defs/loop"}}}}
    draft = Draft(True, True, lambda target: root["$defs"]["loop"])
    with pytest.raises(ecma.Unsupported, match=f"more than {string_sets.MAX_SCHEMAS_READ} schemas"):
        string_sets.of_schema(root["$defs"]["loop"], "", draft)
    nested: Any = {"const": "a"}
    for _ in range(string_sets.MAX_SCHEMAS_READ - 1):
        nested = {"not": nested}
    at_limit = string_sets.of_schema(nested, "", DRAFT)  # 255 negations of a const: 256 schemas
    assert at_limit.holds("b") and not at_limit.holds("a")
    with pytest.raises(ecma.Unsupported):
        string_sets.of_schema({"not": nested}, "", DRAFT)


def test_length_limit_and_malformed_keywords() -> None:
    top = automata.MAX_STATES - 2
    classes = automata.Classes(automata.cut_points([]))
    assert len(string_sets.of_schema({"maxLength": top}, "", DRAFT).automata(classes)[0].next) == automata.MAX_STATES
    with pytest.raises(ecma.Unsupported, match="lengths above"):
        string_sets.of_schema({"maxLength": top + 1}, "", DRAFT).automata(classes)
    for schema, where in (({"minLength": -1}, "#/x/minLength"), ({"pattern": 3}, "#/x/pattern"),
                          ({"anyOf": []}, "#/x/anyOf"), ({"not": 3}, "#/x/not"), ({"type": [5]}, "#/x/type")):
        with pytest.raises(SchemaError, match=f"^{re.escape(where)}"):
            string_sets.of_schema(schema, "#/x", DRAFT)

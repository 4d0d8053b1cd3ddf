"""``not``, ``if``/``then``/``else``, ``contains`` and ``uniqueItems`` (schema2grammar/
applicators.py, complement.py): where the report says exact, the grammar accepts
exactly what jsonschema finds valid (hand-written and random schemas and
instances); every limit, at it and past it; the complement regexes against brute
force over escaped spellings."""

from __future__ import annotations

import json
import random
import re
import sys
from typing import Any

import jsonschema
import pytest
from schema_checks import agrees, draft_grammar

from schema2grammar import APPROXIMATED, ENFORCED, Options, SchemaError, applicators, complement, disjoint, translate
from schema2grammar.applicators import MAX_CONTAINS_STATES
from schema2grammar.translate import MAX_WITNESSES
from schema2grammar.unique_arrays import CHECKED_NOTE
from structgen import Grammar


def _spellings(text: str, rng: random.Random) -> list[str]:
    """``text`` as JSON: both json.dumps spellings, and some with random escapes (but
    ``\\u`` escapes of printable ASCII, which no grammar takes: schema2grammar/spellings.py)."""
    found = [json.dumps(text, ensure_ascii=False), json.dumps(text)]
    for _ in range(3):
        parts = []
        for char in text:
            code = ord(char)
            if rng.random() < 0.3 and code > 0xFFFF:
                high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
                parts.append(f"\\u{high:04x}\\u{low:04X}")
            elif rng.random() < 0.3 and code <= 0xFFFF and not (0x20 <= code <= 0x7E and char not in '"\\'):
                parts.append(f"\\u{code:04X}" if rng.random() < 0.5 else f"\\u{code:04x}")
            elif char == "/" and rng.random() < 0.5:
                parts.append("\\/")
            else:
                parts.append(json.dumps(char, ensure_ascii=False)[1:-1])
        found.append('"' + "".join(parts) + '"')
    return found


@pytest.mark.parametrize("words", [["a", "ab", "", 'q"', "é", "😀", "a\nb", "/", "\\"], ["x"], ["", "\t"], ["ab", "ac", "b"]])
def test_strings_except_refuses_every_spelling_of_the_words(words: list[str]) -> None:
    regex = complement.strings_except(words)
    assert regex is not None
    pattern = re.compile(regex)
    rng = random.Random(len(words))
    alphabet = 'abcq"é😀\n/\\\tx'
    texts = words + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(1500)]
    for text in texts:
        for spelled in _spellings(text, rng):
            assert json.loads(spelled) == text
            assert bool(pattern.fullmatch(spelled)) == (text not in words), (words, spelled)
    for char in "ab/x":  # printable ASCII as a \u escape: refused, excluded word or not
        assert not pattern.fullmatch(f'"\\u{ord(char):04x}"') and not pattern.fullmatch(f'"a\\u{ord(char):04X}"')


def test_strings_except_limit() -> None:
    limit = complement.MAX_EXCLUDED_CHARACTERS
    assert complement.strings_except(["a" * (limit // 2), "b" * (limit - limit // 2)]) is not None
    assert complement.strings_except(["a" * (limit // 2), "b" * (limit - limit // 2 + 1)]) is None
    words = ["a" * 100, "b" * 100, "c" * 100]  # 300 characters: reported, the strings not taken out
    grammar = Grammar.from_json_schema({"type": "string", "not": {"enum": words}})
    assert [e.status for e in grammar.report.entries if e.keyword == "not"] == [APPROXIMATED]
    assert grammar.accepts(json.dumps("a" * 100)) and grammar.accepts('"d"')


def test_non_integers_as_json_dumps_writes_them() -> None:
    pattern = re.compile(complement.NON_INTEGER)
    rng = random.Random(4)
    values = [rng.uniform(-1e6, 1e6) for _ in range(500)] + [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(500)]
    values += [0.5, -0.0, 1.0, 1e-05, 1.5e-07, 123.0, 1e16, 2.5e20, 0.1]
    for value in values:
        assert bool(pattern.fullmatch(json.dumps(value))) == (not value.is_integer()), value
    for spelled in ["1", "-0", "1.0", "1.00", "1e0", "10e-1", "0.1e1", "1E0", "100e-2", "1.0e-0"]:
        assert not pattern.fullmatch(spelled), spelled  # integers in any spelling


NOT_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("type", {"not": {"type": "integer"}}, ["a", 1.5, 1e-05, None, True, [], {}], [1, 0, -7, 1.0, 10**20]),
    ("types", {"not": {"type": ["integer", "boolean"]}}, ["a", 0.5, None], [1, True, False]),
    ("number", {"type": ["number", "string"], "not": {"type": "number"}}, ["x"], [1, 1.5]),
    ("enum strings", {"type": "string", "not": {"enum": ["a", 'q"', "é", ""]}}, ["b", "aa", "q", "e"], ["a", 'q"', "é", ""]),
    ("const anything", {"not": {"const": "a"}}, ["b", 1, None, ["a"], {"a": 1}], ["a"]),
    ("enum scalars", {"not": {"enum": [True, None, 2, "x"]}}, [False, 1, 2.5, 3, "y"], [True, None, 2, 2.0, "x"]),
    ("integers", {"type": "integer", "not": {"enum": [1, 3]}}, [0, 2, 4, -1, 5.0], [1, 3, 1.0]),
    ("bounds", {"type": "number", "not": {"minimum": 0, "exclusiveMaximum": 10}}, [-1, -0.5, 10, 11.5], [0, 5, 9.5]),
    ("integer bounds", {"type": "integer", "not": {"maximum": 3}}, [4, 100], [3, 0, -5]),
    ("lengths", {"type": "string", "minLength": 1, "not": {"maxLength": 2}}, ["abc", "abcd"], ["", "a", "ab"]),
    ("lengths both ways", {"not": {"minLength": 2, "maxLength": 3}}, ["a", "abcd"], ["ab", "abc", 1, None]),
    ("required", {"type": "object", "not": {"required": ["a", "b"]}}, [{}, {"a": 1}, {"b": 1, "c": 2}], [{"a": 1, "b": 2}]),
    ("object", {"not": {"type": "object", "properties": {"foo": {"type": "string"}}}},
     [1, "x", {"foo": 1}, {"foo": None}], [{}, {"foo": "x"}, {"bar": 1}]),
    ("discriminator", {"type": "object", "properties": {"kind": {"type": "string"}},
                       "not": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}},
     [{}, {"kind": "b"}], [{"kind": "a"}]),
    ("forbidden property", {"properties": {"foo": {"not": {}}, "bar": {}}}, [{"bar": 1}, {}], [{"foo": 1}]),
    ("not false", {"not": False}, [1, "x", None, {"a": [1]}], []),
    ("double negation", {"type": ["string", "null"], "not": {"not": {"type": "string"}}}, ["x"], [None]),
    ("double negation of true", {"not": {"not": {}}}, [1, "x", None, [], {}], []),
    ("in allOf", {"allOf": [{"type": "string"}, {"not": {"const": "no"}}]}, ["yes"], ["no", 1]),
    ("booleans", {"type": "boolean", "not": {"const": False}}, [True], [False]),
    ("reference", {"$defs": {"s": {"type": "string"}, "o": {"$ref": "#/$defs/s", "minLength": 2}}, "not": {"$ref": "#/$defs/o"}},
     [1, None, "a"], ["ab"]),
    ("draft 7 reference", {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}},
                           "not": {"$ref": "#/definitions/s", "maxLength": 0}}, [1], ["ab", ""]),
    ("any of", {"not": {"anyOf": [{"enum": ["a", 1]}, {"type": "null"}, {"type": "object", "required": ["a"]},
                                  {"type": "object", "required": ["b"]}]}},
     ["b", 2, True, {}, {"c": 1}], ["a", 1, None, {"a": 1}, {"b": 1}]),
    ("enum beside", {"enum": ["a", "b", 1, {"k": 1}, {"j": 1}], "not": {"anyOf": [{"const": "a"}, {"type": "object", "required": ["k"]}]}},
     ["b", 1, {"j": 1}], ["a", {"k": 1}]),
    ("items", {"not": {"type": "array", "items": {"type": "string"}}}, [[1], ["a", 2], [None, "a"], 5, "x"], [[], ["a"], ["a", "b"]]),
    ("item counts", {"type": "array", "not": {"minItems": 1, "maxItems": 2}}, [[], [1, 2, 3]], [[1], [1, 2]]),
    ("items and counts", {"type": "array", "not": {"maxItems": 1, "items": {"enum": [1, 2]}}},
     [[3], [1, 2], [1, 3, 4]], [[], [1], [2]]),
    ("items beside items", {"type": "array", "items": {"minimum": 0}, "maxItems": 2, "not": {"items": {"maximum": 10}}},
     [[11], [1, 20], [20, 1]], [[], [1], [1, 10], [-1, 20], [11, 12, 13]]),
    ("items beside a tuple", {"type": "array", "prefixItems": [{"type": "string"}], "not": {"items": {"type": "string"}}},
     [["a", 1], ["a", "b", None]], [[], ["a"], ["a", "b"], [1]]),
    ("double negation of part of a kind", {"properties": {"a": {"not": {"not": {"type": "string", "minLength": 2}}}}},
     [{}, {"a": "ab"}], [{"a": "a"}, {"a": 1}]),
    ("not inside a not, over objects", {"not": {"anyOf": [{"not": {"required": ["a"], "properties": {"a": {"type": "string"}}}},
                                                       {"type": "string"}]}},
     [{"a": "x"}, {"a": "x", "b": 1}, 1, None], [{}, {"a": 1}, "x"]),
    ("oneOf beside a negated object", {"oneOf": [{"properties": {"p": {"not": {"required": ["n"], "properties": {"n": {"minLength": 1}}}}}},
                                                 {"required": ["p"]}]},
     [{}, {"p": {"n": "x"}}, {"q": 1}], [{"p": {}}, {"p": {"n": ""}}]),
    ("one of", {"not": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["a"]}]}}, [{}, 1, None], [{"a": 1}, "x"]),
    ("one of tagged variants", {"not": {"oneOf": [
        {"required": ["kind"], "properties": {"kind": {"const": "a"}, "n": {"type": "integer"}}},
        {"required": ["kind", "m"], "properties": {"kind": {"enum": ["b", "c"]}}}]}},
     [{}, {"kind": "d"}, {"kind": "b"}, {"kind": "a", "n": "x"}, {"kind": 1}, 1, "x"],
     [{"kind": "a"}, {"kind": "a", "n": 1}, {"kind": "b", "m": 1}, {"kind": "c", "m": None}]),
    ("a tagged union beside required names", {"type": "object", "not": {"allOf": [{"required": ["name"]}, {"oneOf": [
        {"required": ["type", "size"], "properties": {"type": {"enum": ["file"]}, "size": {"type": "integer"}}},
        {"required": ["type"], "properties": {"type": {"enum": ["link"]}}}]}]}},
     [{}, {"type": "file", "size": 1}, {"type": "file", "name": "a"}, {"type": "dir", "name": "a"},  # (as the branches
      {"type": "file", "size": "x", "name": "a"}, {"name": "a"}],                                 # declare the names)
     [{"type": "file", "size": 1, "name": "a"}, {"type": "link", "name": "a"}, {"type": "link", "size": "x", "name": "a"}]),
    ("booleans, a not inside a not", {"type": "boolean", "not": {"allOf": [{"not": {"const": False}}, {"not": {"not": {}}}]}},
     [False], [True]),
    ("one of overlapping wholly", {"not": {"oneOf": [{"type": "object"}, {"required": ["a"]}]}}, [{"a": 1}], [{}, "x", 1]),
    ("one of twice the same", {"not": {"oneOf": [{"type": "string"}, {"type": "string"}, {"type": "integer"}]}}, ["x", 1.5, None], [1]),
    ("reference in a property", {"$defs": {"s": {"type": "string", "minLength": 1}},
                                 "not": {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/s"}}}},
     [{}, {"a": ""}, {"a": 1}, 1], [{"a": "x"}]),
    ("items refusing a pattern", {"type": "array", "not": {"items": {"not": {"pattern": "a"}}}},
     [[1], ["a"], ["b", "xa"]], [[], ["b"], ["b", "c"]]),
    ("reference in items", {"$defs": {"s": {"type": "string"}}, "type": "array", "not": {"items": {"$ref": "#/$defs/s"}}},
     [[1], ["a", None]], [[], ["a"]]),
    # some property a pattern finds holds a value the pattern's schema refuses
    ("pattern properties", {"type": "object", "not": {"patternProperties": {"^x": {"type": "integer"}}}},
     [{"x": "a"}, {"b": 1, "xy": None}, {"x1": 1, "x2": "2"}], [{}, {"b": "a"}, {"x": 1}, {"x": 1, "xa": 2, "c": "s"}]),
    ("pattern properties, declared names among them", {
        "type": "object", "properties": {"xa": {"type": ["integer", "string"]}, "b": {}},
        "not": {"patternProperties": {"^x": {"type": "integer"}}}},
     [{"xa": "s"}, {"xa": 1, "xb": "s"}, {"b": "x", "xc": None}], [{}, {"xa": 1}, {"b": "s"}, {"xa": 1, "b": 2, "xd": 3}]),
    ("two pattern properties", {"type": "object", "not": {"anyOf": [{"patternProperties": {"a": {"type": "integer"}}},
                                                                    {"patternProperties": {"b": {"type": "string"}}}]}},
     [{"a": "s", "b": 1}, {"ab": None}, {"a": "s", "ab": "t", "b": 2}], [{}, {"a": 1}, {"b": "s", "a": "s"}, {"ab": 1}]),
    ("some property, by its own pattern", {"type": "object", "additionalProperties": {"type": "integer"},
                                           "not": {"patternProperties": {"^k": {"maximum": 5}}}},
     [{"k": 6}, {"a": 1, "kk": 7}], [{}, {"k": 5}, {"k": "x"}, {"a": 9}]),
    ("not of some property", {"type": "object", "not": {"allOf": [{"not": {"patternProperties": {"c": {"pattern": "99"}}}}]}},
     [{}, {"c": "99"}, {"a": 1}, {"c": 5, "ac": "x99"}], [{"c": "9"}, {"ac": "1", "c": "99"}]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), NOT_CASES, ids=[case[0] for case in NOT_CASES])
def test_not_by_complement(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_not_refuses_every_spelling_of_a_listed_string() -> None:
    grammar = Grammar.from_json_schema({"type": "string", "not": {"enum": ["a", "é", "a/b", "😀"]}})
    for spelled in ['"a"', '"\\u0061"', '"\\u00E9"', '"\\u00e9"', '"a\\/b"', '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"']:
        assert not grammar.accepts(spelled), spelled
    for spelled in ['"b"', '"a\\/c"', '"\\ud83d\\ude01"', '"aa"', '""', '"\\u00e8"']:
        assert grammar.accepts(spelled), spelled
    assert not grammar.accepts('"\\u0062"')  # printable ASCII as a \u escape: never (spellings)


def test_nullable_objects_keep_null_apart() -> None:
    agrees({"type": "object", "nullable": True, "not": {"required": ["a"]}}, [{}], [{"a": 1}])
    grammar = Grammar.from_json_schema({"type": "object", "nullable": True, "not": {"required": ["a"]}})
    assert not grammar.accepts("null")  # not {required} accepts null: not refuses it


def test_not_everything_is_a_schema_no_value_satisfies() -> None:
    for schema in ({"not": {}}, {"not": True}, {"type": "string", "not": {"type": "string"}}):
        with pytest.raises(SchemaError, match="not refuses every value"):
            translate(schema)


STRINGS_REFUSED_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("not a pattern", {"type": "string", "not": {"pattern": "^a"}}, ["b", "", "ba"], ["a", "ab"]),
    ("beside a pattern and lengths", {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3, "not": {"pattern": "x"}},
     ["abc", "a"], ["abx", "abcd", "x", "A"]),
    ("every type", {"not": {"type": "string", "pattern": "^a"}}, ["b", 1, None, {"a": 1}], ["a", "ab"]),
    ("a union", {"type": "string", "not": {"anyOf": [{"pattern": "^a"}, {"const": "b"}]}}, ["c", "bb", ""], ["b", "ab"]),
    ("a const beside lengths", {"type": "string", "maxLength": 3, "not": {"const": "a"}}, ["b", "abc"], ["a", "abcd"]),
    ("overlapping oneOf", {"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]},
     ["ax", "xb"], ["ab", "x", 1]),
    ("if a pattern", {"type": "string", "if": {"pattern": "^a"}, "then": {"maxLength": 2}, "else": {"minLength": 3}},
     ["ab", "bbb"], ["abc", "bb"]),
    ("a pattern of a property", {"type": "object", "properties": {"s": {"type": "string", "not": {"pattern": "[0-9]"}}}},
     [{"s": "é"}, {}], [{"s": "a1"}]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), STRINGS_REFUSED_CASES,
                         ids=[case[0] for case in STRINGS_REFUSED_CASES])
def test_strings_a_not_refuses_as_automata(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The strings a negated ``pattern`` (or a union with one) refuses, beside the
    place's own pattern and lengths (``string_sets``)."""
    agrees(schema, valid, invalid)


def test_strings_a_not_refuses_are_spelled_as_json_dumps_spells_them() -> None:
    """Narrower than the other complements: an escape the pattern terminals do not
    take either (``"\\u0062"`` is ``"b"``) is refused."""
    grammar = Grammar.from_json_schema({"type": "string", "not": {"pattern": "^a"}})
    assert grammar.accepts('"b"') and grammar.accepts('"é"') and not grammar.accepts('"\\u0062"')


@pytest.mark.parametrize(("schema", "accepted", "note"), [
    ({"type": "string", "not": {"format": "date"}}, ["2020-01-01", "b"], "format"),
    ({"type": "string", "not": {"format": "idn-email"}}, ["a@b.co", "b"], "format"),  # one the translator does not spell
    ({"type": "number", "not": {"multipleOf": 2}}, [4, 3], "multipleOf"),
    ({"type": "number", "not": {"const": 1.5}}, [1.5, 2], "not an integer"),
    ({"type": "string", "maxLength": 2000, "not": {"const": "a"}}, ["a", "b"], "lengths above"),
    ({"type": "number", "minimum": 0, "not": {"type": "integer"}}, [1, 0.5], "beside"),
    ({"type": "array", "not": {"prefixItems": [{"type": "string"}]}}, [["a"], [1]], "prefixItems"),
    ({"type": "array", "contains": {"minLength": 1}, "not": {"items": {"type": "string"}}}, [["a"], [1]], "items"),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "not": {"items": {"format": "date"}}},
     [["2020-01-01"], ["b"]], "items"),
    ({"not": {"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]}}, [1, {"a": 1}], "oneOf"),
    ({"$defs": {"t": {"type": "object", "properties": {"a": {"$ref": "#/$defs/t"}}}}, "not": {"$ref": "#/$defs/t"}},
     [1, {}], "$ref"),
    ({"$defs": {"t": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/t"}]}}, "not": {"$ref": "#/$defs/t"}}, [1], "recurs"),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "not": {"type": "integer"}}, [1, 1.5], "beside"),
])
def test_not_without_an_exact_complement_is_approximated(schema: dict[str, Any], accepted: list[Any], note: str) -> None:
    """The grammar is wider (those values are not taken out), and the report says why."""
    grammar = Grammar.from_json_schema(schema)
    entries = [e for e in grammar.report.entries if e.keyword == "not"]
    assert [e.status for e in entries] == [APPROXIMATED] and note in entries[0].note, entries
    for instance in accepted:
        assert grammar.accepts(json.dumps(instance))
    with pytest.raises(SchemaError, match="not cannot be enforced exactly"):
        translate(schema, Options(strict=True))


def _reference_chain(length: int) -> dict[str, Any]:
    """``not`` of an object whose property leads through ``length`` references."""
    defs: dict[str, Any] = {f"d{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/d{i + 1}"}}}
                            for i in range(length - 1)}
    defs[f"d{length - 1}"] = {"type": "string"}
    return {"$defs": defs, "not": {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}}}


def test_references_a_complement_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A property's complement reads the references it holds: exact up to
    MAX_REFERENCES_FOLLOWED targets, approximated past it (and where they recur,
    in the test above)."""
    monkeypatch.setattr(complement, "MAX_REFERENCES_FOLLOWED", 3)
    agrees(_reference_chain(3), [1, {"x": 1}, {"x": {"x": {"x": 1}}}], [{}, {"x": {}}, {"x": {"x": {"x": "a"}}}])
    grammar = Grammar.from_json_schema(_reference_chain(4))
    assert [e.status for e in grammar.report.entries if e.keyword == "not"] == [APPROXIMATED]
    assert "more than 3 references" in str(grammar.report)
    assert grammar.accepts('{"x": {"x": {"x": {"x": 1}}}}')  # wider, never narrower


def test_not_other_kinds_are_exact_beside_an_inexact_one() -> None:
    """``not: {format}`` leaves out every non-string (exactly); strings stay wide."""
    grammar = Grammar.from_json_schema({"not": {"format": "date"}})
    assert not any(grammar.accepts(text) for text in ["1", "null", "[]", "{}", "true"])
    assert grammar.accepts('"2020-01-01"') and grammar.accepts('"b"')


def test_number_and_object_complement_limits() -> None:
    """``MAX_EXCLUDED_NUMBERS`` integers left out, ``MAX_OBJECT_BRANCHES`` ways to
    fail a union of object schemas: exact at the limit, reported past it."""
    def status(schema: dict[str, Any]) -> list[str]:
        return [e.status for e in translate(schema)[1].entries if e.keyword == "not"]

    numbers = complement.MAX_EXCLUDED_NUMBERS
    assert status({"type": "integer", "not": {"enum": list(range(0, 2 * numbers, 2))}}) == [ENFORCED]
    assert status({"type": "integer", "not": {"enum": list(range(0, 2 * numbers + 2, 2))}}) == [APPROXIMATED]
    evens = Grammar.from_json_schema({"type": "integer", "not": {"enum": list(range(0, 2 * numbers, 2))}})
    assert evens.accepts("3") and evens.accepts("-1") and not evens.accepts("4") and not evens.accepts("126")
    parts = [{"type": "object", "required": [f"a{i}", f"b{i}"]} for i in range(7)]  # two ways each: 2**6 = 64
    assert 2 ** 6 == complement.MAX_OBJECT_BRANCHES
    assert status({"type": "object", "not": {"anyOf": parts[:6]}}) == [ENFORCED]
    assert status({"type": "object", "not": {"anyOf": parts}}) == [APPROXIMATED]


def test_a_tagged_union_fails_one_way_per_failure() -> None:
    """Seven tagged parts with three names each: 3**7 choices of failures, but an
    object fails a tagged union by lacking the tag, holding another value, or
    failing the one part its value names: 2 + 7 * 2 ways, within the limit."""
    parts = [{"type": "object", "required": ["kind", f"a{i}", f"b{i}"], "properties": {"kind": {"const": f"k{i}"}}}
             for i in range(7)]
    schema = {"type": "object", "not": {"oneOf": parts}}
    assert {e.status for e in translate(schema)[1].entries if e.keyword == "not"} == {ENFORCED}
    agrees(schema, [{}, {"kind": "k7"}, {"kind": "k0", "a0": 1}, {"kind": "k6", "b6": 1}, {"kind": 0, "a0": 1, "b0": 1}],
           [{"kind": "k0", "a0": 1, "b0": 1}, {"kind": "k6", "a6": 1, "b6": 1, "c": 1}])
    untagged = [{"type": "object", "required": [f"a{i}", f"b{i}"]} for i in range(7)]  # the product: 2**7 > 64
    assert [e.status for e in translate({"type": "object", "not": {"anyOf": untagged}})[1].entries
            if e.keyword == "not"] == [APPROXIMATED]


def test_nesting_limit_of_a_negated_schema() -> None:
    draft = complement.Draft(float_integers=True, format_assertion=True)
    schema: Any = {"type": "string"}
    for _ in range(complement.MAX_NESTING):
        schema = {"allOf": [schema]}
    assert complement.satisfying(schema, draft, "")["string"] == complement.ANY
    assert isinstance(complement.satisfying({"allOf": [schema]}, draft, "")["string"], complement.Inexact)


IF_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("by type", {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
     ["ab", 3], ["a", 1.5, None]),
    ("bounds", {"if": {"exclusiveMaximum": 0}, "then": {"minimum": -10}, "else": {"maximum": 5}},
     [-5, 0, 5, "x"], [-11, 6, 100]),
    ("discriminator", {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "x": {}, "y": {}},
                       "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                       "then": {"required": ["x"]}, "else": {"required": ["y"]}},
     [{"kind": "a", "x": 1}, {"kind": "b", "y": 1}, {"y": 1}, {"kind": "a", "x": 1, "y": 2}],
     [{"kind": "a", "y": 1}, {"kind": "b", "x": 1}, {"x": 1}, {}, {"kind": "c", "y": 1}]),
    ("then only", {"if": {"const": "a"}, "then": {"type": "null"}}, ["b", 1], ["a"]),
    ("else only", {"type": "integer", "if": {"minimum": 10}, "else": {"const": 3}}, [10, 3, 11], [4, 9]),
    ("if true", {"if": True, "then": {"const": "then"}, "else": {"const": "else"}}, ["then"], ["else", 1]),
    ("if false", {"if": False, "then": {"const": "then"}, "else": {"const": "else"}}, ["else"], ["then"]),
    ("no then nor else", {"if": {"const": 0}}, [0, 1, "x"], []),
    ("else holds a not", {"type": "object", "properties": {"kind": {}, "x": {}, "y": {}},
                          "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                          "then": {"required": ["x"]}, "else": {"not": {"required": ["y"]}}},
     [{"kind": "a", "x": 1}, {"kind": "b"}, {}, {"x": 1}], [{"kind": "a"}, {"kind": "b", "y": 1}, {"y": 1}]),
    ("else beside enum", {"type": "string", "if": {"const": "a"}, "else": {"enum": ["a", "b"]}}, ["a", "b"], ["c", 1]),
    ("then without if", {"then": {"const": 0}, "else": {"const": 0}}, [1, "x"], []),
    ("parts do not interfere", {"allOf": [{"if": {"type": "string"}}, {"then": {"const": "x"}}, {"else": {"const": 1}}]},
     ["y", 2], []),
    ("nested", {"type": "object", "properties": {"a": {"if": {"type": "string"}, "then": {"enum": ["x"]}}}},
     [{"a": "x"}, {"a": 1}], [{"a": "y"}]),
    ("not both flags (SchemaStore ui5.yaml)", {  # ways to fail four parts, distributed: the impossible ones dropped
        "type": "object", "additionalProperties": False, "required": ["name"],
        "properties": {"name": {"type": "string"}, "optional": {"type": "boolean"}, "development": {"type": "boolean"}},
        "if": {"not": {"anyOf": [{"properties": {"optional": {"enum": [False, None]}}},
                                 {"properties": {"development": {"enum": [False, None]}}},
                                 {"not": {"properties": {"optional": {"type": "boolean"}}}},
                                 {"not": {"properties": {"development": {"type": "boolean"}}}}]}},
        "then": {"additionalProperties": False, "properties": {"name": {"type": "string"}}}},
     [{"name": "a"}, {"name": "a", "optional": True}, {"name": "a", "optional": True, "development": False}],
     [{"name": "a", "optional": True, "development": True}, {"name": "a", "optional": 1}]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), IF_CASES, ids=[case[0] for case in IF_CASES])
def test_if_then_else_by_complement(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_if_without_an_exact_complement_is_approximated() -> None:
    schema = {"if": {"format": "date"}, "then": {"maxLength": 10}, "else": {"minLength": 5}}
    grammar = Grammar.from_json_schema(schema)
    assert {e.keyword for e in grammar.report.with_status(APPROXIMATED)} >= {"if", "then", "else"}
    assert grammar.accepts('"2020-01-01"') and grammar.accepts('"bbbbb"')  # wider: the valid ones pass


def test_listed_values_judged_through_combinators() -> None:
    """Beside ``enum``, a combinator takes one value at a time: a branch that knows is
    enough for ``anyOf`` (3 is an integer; whether it is a multiple of 3 is not read)."""
    agrees({"enum": [3, "x"], "anyOf": [{"type": "integer"}, {"type": "string"}, {"multipleOf": 3}]}, [3, "x"], [4, "y"])
    agrees({"enum": ["a", "b", 1], "if": {"type": "string"}, "then": {"not": {"const": "a"}}, "else": {"minimum": 2}},
           ["b"], ["a", 1])
    agrees({"enum": [[1], [1, 2], ["a"], {"a": [1]}, {"a": 1, "b": "x"}],
            "not": {"anyOf": [{"type": "array", "items": {"type": "integer"}, "maxItems": 1},
                              {"type": "object", "properties": {"a": {"multipleOf": 3}, "b": {"type": "integer"}}}]}},
           [[1, 2], ["a"], {"a": 1, "b": "x"}], [[1], {"a": [1]}])  # 1 and 3: b decides, multipleOf unread
    beside = {"enum": [2.5, 3], "anyOf": [{"type": "string"}, {"multipleOf": 3}]}  # 2.5: no branch knows
    assert [e.status for e in translate(beside)[1].entries if e.keyword == "anyOf"] == [APPROXIMATED]


def test_listed_values_the_kinds_cannot_judge_are_judged_by_a_validator() -> None:
    """Beside ``not``, a listed value whose verdict the kinds cannot give (closed
    objects beside patterns, ``additionalItems``) is judged by jsonschema inside the
    document (references resolve there), where the readings the translator could
    mean agree (judge.py); elsewhere it is kept, reported."""
    agrees({"$defs": {"closed": {"properties": {"foo": {}}, "patternProperties": {"^v": {}}, "additionalProperties": False}},
            "enum": [{"foo": 1}, {"foo": 1, "bar": 2}, {"vx": 3}], "not": {"$ref": "#/$defs/closed"}},
           [{"foo": 1, "bar": 2}], [{"foo": 1}, {"vx": 3}])
    agrees({"$schema": "http://json-schema.org/draft-07/schema#", "enum": [[1, 2], [1, "a"]],
            "not": {"items": [{}], "additionalItems": {"type": "integer"}}}, [[1, "a"]], [[1, 2]])
    # undeclared, items as a list is a tuple in draft 7 and no keyword of 2020-12's: no verdict
    tuple_items = {"enum": [[1, 2], [1, "a"]], "not": {"items": [{}], "additionalItems": {"type": "integer"}}}
    # formats asserted: jsonschema's checkers are not these grammars, so only a verdict without them counts
    email = {"enum": ["x", "a@b.c"], "not": {"patternProperties": {"^a": {}}, "format": "email"}}
    for schema, kept in ((tuple_items, [[1, 2], [1, "a"]]), (email, ["x"])):
        grammar = Grammar.from_json_schema(schema)
        notes = [(e.status, e.note) for e in grammar.report.entries if e.keyword == "not"]
        assert notes == [(APPROXIMATED, "a listed value it cannot judge here is kept")], notes
        assert all(grammar.accepts(json.dumps(value)) for value in kept)
    assert not Grammar.from_json_schema(email).accepts('"a@b.c"')  # valid either way: refused
    odd_draft = {"$schema": ["not", "a", "URI"], "enum": [{"a": 1}, {"a": "x"}],
                 "not": {"additionalProperties": {"type": "integer"}}}  # read as undeclared
    odd = Grammar.from_json_schema(odd_draft)
    assert odd.report.exact and odd.accepts('{"a": "x"}') and not odd.accepts('{"a": 1}')
    bare = {"enum": [{"a": 1.0}, {"a": "x"}], "not": {"additionalProperties": {"type": "integer"}}}
    assert Grammar.from_json_schema(bare, float_integers=False).accepts('{"a": 1.0}')  # 1.0 an integer? not here
    agrees(bare, [{"a": "x"}], [{"a": 1.0}])


def test_several_ifs_in_one_allof_nest_up_to_the_limit() -> None:
    """Each ``if`` after the first goes into both branches of the one before: exact
    up to ``MAX_NESTED_CONDITIONALS``; past it, only the first is kept (reported)."""
    parts = {"allOf": [{"if": {"type": "string"}, "then": {"const": "a"}}, {"if": {"type": "integer"}, "then": {"const": 1}}]}
    agrees(parts, ["a", 1, None, 2.5], ["b", 2])
    kinds = {"type": "object", "properties": {"kind": {}, "x": {}, "y": {}},
             "allOf": [{"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": {"required": ["x"]}},
                       {"if": {"properties": {"kind": {"const": "b"}}, "required": ["kind"]}, "then": {"required": ["y"]},
                        "else": {"not": {"required": ["y"]}}}]}
    agrees(kinds, [{"kind": "a", "x": 1}, {"kind": "b", "y": 1}, {}, {"x": 1}], [{"kind": "a"}, {"kind": "b"}, {"y": 1}])

    def conditionals(count: int) -> dict[str, Any]:
        return {"allOf": [{"if": {"const": i}, "then": {"type": "integer"}, "else": {"not": {"const": -i - 1}}}
                          for i in range(count)]}

    limit = applicators.MAX_NESTED_CONDITIONALS
    agrees(conditionals(limit), [0, 1, -99, "x"], [-1, -limit])
    statuses = [e.status for e in translate(conditionals(limit + 1))[1].entries if e.keyword == "allOf"]
    assert statuses == [APPROXIMATED]


CONTAINS_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("contains", {"contains": {"const": 1}}, [[1], [2, 1.0], "x"], [[], [2, 3]]),
    ("bounds", {"contains": {"minimum": 5}}, [[5], [1, 6], ["x"]], [[1, 2], []]),
    ("min and max", {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
     [[1, 1], [1, 2, 1, 1]], [[1], [1, 1, 1, 1], [2]]),
    ("min 0", {"contains": {"const": 1}, "minContains": 0, "maxContains": 1}, [[], [2], [1, 2]], [[1, 1]]),
    ("items", {"type": "array", "items": {"type": "integer"}, "contains": {"enum": [1, 2]}, "maxItems": 3},
     [[1], [3, 2], [3, 3, 1]], [[3], ["x", 1], [1, 1, 1, 1]]),
    ("prefix", {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False, "contains": {"type": "integer"}},
     [["a", 1]], [["a"], []]),
    ("not in contains", {"contains": {"not": {"type": "null"}}, "maxContains": 1}, [[None, 1], [None, None, "x"]],
     [[1, 2], [None]]),
    ("draft 7", {"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"const": 1}, "maxContains": 0},
     [[1, 1]], [[2]]),
    ("draft 4", {"$schema": "http://json-schema.org/draft-04/schema#", "contains": {"const": 1}}, [[2], []], []),
    ("true", {"contains": True}, [[1]], [[]]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), CONTAINS_CASES, ids=[case[0] for case in CONTAINS_CASES])
def test_contains_counts_matching_items(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_contains_past_its_limits_is_approximated() -> None:
    """(maxItems + 1) * (maxContains + 1) rules: 200 * 10 is at MAX_CONTAINS_STATES."""
    at = {"type": "array", "maxItems": 199, "contains": {"const": 1}, "maxContains": 9}
    assert 200 * 10 == MAX_CONTAINS_STATES and Grammar.from_json_schema(at).report.exact
    past = Grammar.from_json_schema({**at, "maxItems": 200})
    assert {e.keyword for e in past.report.with_status(APPROXIMATED)} == {"contains", "maxContains"}
    assert past.accepts("[2]")  # wider: the count is not kept
    loose = Grammar.from_json_schema({"contains": {"multipleOf": 3}})
    assert [e.status for e in loose.report.entries if e.keyword == "contains"] == [APPROXIMATED]
    with pytest.raises(SchemaError, match="maxContains is below minContains"):
        translate({"type": "array", "contains": {}, "minContains": 2, "maxContains": 1})


UNIQUE_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("enum", {"type": "array", "items": {"enum": ["a", "b", 1, {"k": 1}]}, "uniqueItems": True},
     [[], ["a", "b"], [1, "a", {"k": 1}]], [["a", "a"], [1, 1.0], [{"k": 1}, {"k": 1}]]),
    ("booleans", {"prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "items": False, "uniqueItems": True},
     [[True, False], [False], []], [[True, True], [False, False]]),
    ("draft 7 tuple", {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "boolean"}],
                       "additionalItems": {"type": ["boolean", "null"]}, "uniqueItems": True},
     [[True, None, False]], [[True, True], [None, None]]),
    ("counts", {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "minItems": 2},
     [[1, 2], [3, 2, 1]], [[1], [1, 1]]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), UNIQUE_CASES, ids=[case[0] for case in UNIQUE_CASES])
def test_unique_items_over_listed_values(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_unique_items_limit() -> None:
    limit = complement.MAX_UNIQUE_VALUES
    at = Grammar.from_json_schema({"type": "array", "items": {"enum": list(range(limit))}, "uniqueItems": True})
    assert at.report.exact and at.accepts(json.dumps(list(range(limit)))) and not at.accepts("[0, 1, 0]")
    past_schema = {"type": "array", "items": {"enum": list(range(limit + 1))}, "uniqueItems": True}
    _, report = translate(past_schema)  # the grammar alone: approximated
    assert [e.status for e in report.entries if e.keyword == "uniqueItems"] == [APPROXIMATED]
    past = Grammar.from_json_schema(past_schema)  # with the matcher's check (tests/json_layer/test_unique_items.py)
    assert [(e.status, e.note) for e in past.report.entries if e.keyword == "uniqueItems"] == [(ENFORCED, CHECKED_NOTE)]
    assert past.accepts("[0, 1]") and not past.accepts("[0, 0]")
    assert [e.status for e in Grammar.from_json_schema({"uniqueItems": True}).report.entries
            if e.keyword == "uniqueItems"] == [ENFORCED]
    with pytest.raises(SchemaError, match="no array"):
        translate({"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "minItems": 3})


ONE_OF_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("required names", {"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}},
                        "oneOf": [{"required": ["p"]}, {"required": ["q"]}]},
     [{"p": "a"}, {"q": "b"}], [{"p": "a", "q": "b"}, {}]),
    ("objects sharing a name", {"type": "object", "oneOf": [
        {"type": "object", "required": ["id", "win"], "properties": {"id": {"type": "string"}}},
        {"type": "object", "required": ["id", "lose"], "properties": {"id": {"type": "string"}, "lose": {"type": "object"}}}]},
     [{"id": "g", "win": 1}, {"id": "g", "lose": {}}, {"id": "g", "lose": 2, "win": 1}],  # lose is declared
     [{"id": "g", "win": 1, "lose": {}}, {"id": 1, "lose": {}}, {"id": "g"}]),
    ("three branches", {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"required": ["c"]}]},
     [{"a": 1}, {"c": 1}], [{"a": 1, "b": 1}, {"a": 1, "b": 2, "c": 3}, {}]),
    ("enums", {"oneOf": [{"enum": ["a", "b", 1]}, {"enum": ["b", "c", 1.0]}]}, ["a", "c"], ["b", 1, "d"]),
    ("booleans", {"oneOf": [True, False, {"type": "string"}]}, [1, None, {}], ["a"]),
    ("string lengths", {"oneOf": [{"type": "string", "maxLength": 2}, {"type": "string", "minLength": 2}]},
     ["a", "", "abc"], ["ab", 1]),
    ("own keywords", {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"],
                      "oneOf": [{"required": ["b"]}, {"properties": {"a": {"type": "string"}}}]},
     [{"a": 1, "b": 2}, {"a": "x"}], [{"a": "x", "b": 2}, {"a": 1}, {"b": 2}]),
    # closed objects (no complement here) told apart by names alone (disjoint.py)
    ("tagged variants", {"oneOf": [
        {"properties": {"kind": {"enum": ["card"]}, "code": {"type": "integer"}}, "required": ["kind"], "additionalProperties": False},
        {"properties": {"kind": {"const": "cash"}}, "required": ["kind"], "additionalProperties": False}]},
     [{"kind": "card"}, {"kind": "card", "code": 1}, {"kind": "cash"}],
     [{"kind": "cash", "code": 1}, {"kind": "coin"}, {}, 5, "card", None]),  # every non-object matches both
    ("a name the other closes out", {"type": "object", "oneOf": [
        {"properties": {"start": {"type": "integer"}, "end": {"type": "integer"}}, "required": ["start"], "additionalProperties": False},
        {"properties": {"custom": {"type": "string"}}, "additionalProperties": False}]},
     [{"start": 1}, {"start": 1, "end": 2}, {"custom": "x"}, {}], [{"start": 1, "custom": "x"}, {"end": 2}]),
    ("variants through references", {"$defs": {
        "circle": {"type": "object", "properties": {"shape": {"const": "circle"}, "r": {"type": "number"}},
                   "required": ["shape", "r"], "additionalProperties": False},
        "square": {"allOf": [{"type": "object", "properties": {"shape": {"const": "square"}, "side": {"type": "number"}},
                              "required": ["shape"], "additionalProperties": False}]}},
        "oneOf": [{"$ref": "#/$defs/circle"}, {"$ref": "#/$defs/square"}]},
     [{"shape": "circle", "r": 1}, {"shape": "square"}, {"shape": "square", "side": 2}],
     [{"shape": "circle"}, {"shape": "square", "r": 1}, {"shape": "oval"}]),
    ("a name no pattern admits", {"type": "object", "oneOf": [
        {"properties": {"id": {"type": "integer"}}, "patternProperties": {"^x-": {}}, "required": ["id"],
         "additionalProperties": False},
        {"properties": {"ref": {"type": "string"}}, "patternProperties": {"^x-": {}}, "required": ["ref"],
         "additionalProperties": False}]},
     [{"id": 1}, {"ref": "r"}, {"id": 1, "x-a": 2}], [{"id": 1, "ref": "r"}, {}]),
    ("names propertyNames refuses", {"type": "object", "properties": {"id": {}, "ref": {}}, "oneOf": [
        {"required": ["id"], "propertyNames": {"enum": ["id"]}},
        {"required": ["ref"], "propertyNames": {"enum": ["ref"]}}]},
     [{"id": 1}, {"ref": "r"}], [{"id": 1, "ref": "r"}, {}]),
    ("nested tags", {"type": "object", "properties": {"data": {}}, "oneOf": [
        {"properties": {"data": {"properties": {"t": {"const": 1}}, "required": ["t"], "additionalProperties": False}},
         "required": ["data"]},
        {"properties": {"data": {"properties": {"t": {"const": 2}}, "required": ["t"], "additionalProperties": False}},
         "required": ["data"]}]},
     [{"data": {"t": 1}}, {"data": {"t": 2}}], [{"data": {"t": 3}}, {"data": 5}, {}]),
    ("a name refused by false", {"type": "object", "oneOf": [
        {"properties": {"a": {"type": "string"}, "b": False}, "required": ["a"], "additionalProperties": False},
        {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b"], "additionalProperties": False}]},
     [{"a": "x"}, {"b": 1}, {"a": "x", "b": 1}], [{"a": 1}, {}, {"b": "x"}]),
]


ONE_OF_CASES.append(  # MaskBench Handwritten oneofpr2: a pattern's names, with some of them holding a value
    ("pattern properties, and some property", {"type": "object", "oneOf": [
        {"allOf": [{"patternProperties": {"a": {"$ref": "#/definitions/inside1"}}},
                   {"not": {"patternProperties": {"a": {"not": {"$ref": "#/definitions/inside1"}}}}}]},
        {"allOf": [{"patternProperties": {"b": {"$ref": "#/definitions/inside2"}}},
                   {"not": {"patternProperties": {"b": {"not": {"$ref": "#/definitions/inside1"}}}}}]}],
        "definitions": {
            "inside1": {"type": "object", "not": {"patternProperties": {"c": {"not": {"type": "string", "pattern": "99"}}}}},
            "inside2": {"type": "object", "patternProperties": {"c": {"type": "string", "pattern": "77"}}}}},
     [{"a": {"c": "99"}}, {"b": {"c": "7799"}}, {"ba": {"c": "99"}}, {"a": {"c": "99"}, "x": {}},
      {"b": {"c": "7799"}, "ab": {"c": "99"}}],
     [{"a": {"c": "101"}}, {"a": {"c": 99}}, {"b": {"c": "99"}}, {"ab": {"c": "7799"}}, {},
      {"b": {"c": "7799"}, "ab": {"c": "7799"}}]))


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), ONE_OF_CASES, ids=[case[0] for case in ONE_OF_CASES])
def test_one_of_refuses_values_matching_several_branches(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """Each branch less what the other branches accept, by complement."""
    agrees(schema, valid, invalid)
    assert [e.note for e in Grammar.from_json_schema(schema).report.entries if e.keyword == "oneOf"] == [
        "each branch less what the others accept, by complement"]


def test_one_of_without_an_exact_complement_is_approximated() -> None:
    """Numbers beside number keywords have no exact complement: the branches are
    joined as anyOf (a wider complement could make a branch wider than it is
    alone), a value matching both is not refused, and the report and strict mode
    say so. Branches that every value matches twice accept no value."""
    schema = {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]}
    grammar = Grammar.from_json_schema(schema)
    notes = [(e.status, e.note) for e in grammar.report.entries if e.keyword == "oneOf"]
    assert len(notes) == 1 and notes[0][0] == APPROXIMATED
    assert notes[0][1].startswith("treated as anyOf (the other branches have no exact complement here: numbers")
    assert grammar.accepts("7") and grammar.accepts("1") and grammar.accepts("5.5") and not grammar.accepts("2.5")
    lines = translate(schema)[0].splitlines()  # the terminals the dropped complements made are not written
    rules = [line for line in lines if not re.match(r"T\d+:", line)]
    assert {line.split(":")[0] for line in lines if line not in rules} == set(re.findall(r"\bT\d+\b", "\n".join(rules)))
    with pytest.raises(SchemaError, match=r"^#: oneOf cannot be enforced exactly \(treated as anyOf \(the other"):
        translate(schema, Options(strict=True))
    for twice in ({"oneOf": [{"type": "string"}, {"type": "string"}]}, {"oneOf": [True, True, False]}):
        with pytest.raises(SchemaError, match="no value matches exactly one branch of oneOf"):
            translate(twice)
    single = Grammar.from_json_schema({"oneOf": [{"type": "object", "required": ["a"]}]})
    assert single.report.exact and single.accepts('{"a": 1}') and not single.accepts("{}")


def test_objects_told_apart_need_no_complement(monkeypatch: pytest.MonkeyPatch) -> None:
    """``not`` beside objects that always hold a name the negated schema refuses
    is exact without a complement; overlapping closed objects stay approximated,
    and so does a proof past ``disjoint.MAX_STEPS`` pairs compared."""
    apart = {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "n": {}}, "required": ["kind"],
             "not": {"properties": {"kind": {"const": "c"}, "n": {}}, "additionalProperties": False}}
    agrees(apart, [{"kind": "a"}, {"kind": "b", "n": 1}], [{"n": 1}, {"kind": "c"}])
    overlapping = {"oneOf": [{"type": "object", "properties": {"a": {"enum": ["x", "y"]}}, "required": ["a"],
                              "additionalProperties": False},
                             {"type": "object", "properties": {"a": {"enum": ["y", "z"]}, "b": {}}, "required": ["a"],
                              "additionalProperties": False}]}
    grammar = Grammar.from_json_schema(overlapping)
    assert [e.status for e in grammar.report.entries if e.keyword == "oneOf"] == [APPROXIMATED]
    assert grammar.accepts('{"a": "x"}') and grammar.accepts('{"a": "y"}')  # wider: y matches both
    tagged = ONE_OF_CASES[[case[0] for case in ONE_OF_CASES].index("tagged variants")][1]
    assert Grammar.from_json_schema(tagged).report.exact
    monkeypatch.setattr(disjoint, "MAX_STEPS", 0)
    assert [e.status for e in Grammar.from_json_schema(tagged).report.entries if e.keyword == "oneOf"] == [APPROXIMATED]


def _closed_branch(rng: random.Random) -> dict[str, Any]:
    """An object schema a oneOf branch may be: required names, some declared names
    with listed or typed values (or ``false``, or a closed object with a tag),
    often closed to the others, sometimes with a pattern or ``propertyNames``."""
    declared = [name for name in NAMES if rng.random() < 0.7]
    nested = {"type": "object", "properties": {"kind": _leaf(rng)}, "required": ["kind"], "additionalProperties": False}
    branch: dict[str, Any] = {"properties": {name: rng.choice([_leaf(rng), _leaf(rng), False, nested]) for name in declared}}
    if declared and rng.random() < 0.8:
        branch["required"] = sorted(rng.sample(declared, rng.randint(1, len(declared))), key=NAMES.index)
    if rng.random() < 0.7:
        branch["additionalProperties"] = False
    if rng.random() < 0.2:
        branch["patternProperties"] = {"^a": _leaf(rng)}
    if rng.random() < 0.2:
        branch["propertyNames"] = rng.choice([{"maxLength": 1}, {"pattern": "^k"}, {"enum": ["kind", "b"]}])
    if rng.random() < 0.5:
        branch["type"] = "object"
    return branch


def test_random_closed_object_unions_agree_with_jsonschema() -> None:
    """oneOf and not over closed objects, where names alone may tell the branches
    apart: wherever the report says exact, acceptance is validity; elsewhere the
    grammar is only wider. Through references too."""
    rng = random.Random(18)
    exact = checked = 0
    for _ in range(150):
        branches = [_closed_branch(rng) for _ in range(rng.randint(2, 3))]
        schema: dict[str, Any] = {"properties": {name: {} for name in NAMES}, "$defs": {"first": branches[0]}}
        if rng.random() < 0.5:
            schema["oneOf"] = [{"$ref": "#/$defs/first"}, *branches[1:]]
        else:
            schema.update({"type": "object", "required": branches[1].get("required", []), "not": {"$ref": "#/$defs/first"}})
        instances = [{name: rng.choice(SCALARS) if rng.random() < 0.8 else {"kind": rng.choice(SCALARS)}
                      for name in NAMES if rng.random() < 0.5} if rng.random() < 0.8
                     else _random_instance(rng) for _ in range(40)]
        found = _judged(schema, instances)
        if found is not None:
            exact += found[0]
            checked += found[1]
    assert exact >= 80 and checked >= 3200, (exact, checked)  # 10 and 400 without telling objects apart


def test_one_of_that_recurs_through_its_branches_is_a_cycle_of_rules() -> None:
    """A branch that holds the same oneOf again (SchemaStore pulumi: a config type
    whose ``type`` is a plain type or the config type itself, beside an ``if``)
    is memoized like a reference, not expanded until the depth limit."""
    config = {"type": "object", "required": ["type"],
              "properties": {"type": {"oneOf": [{"$ref": "#/$defs/plain"}, {"$ref": "#/$defs/config"}]}}}
    for extra in ({}, {"if": {"properties": {"type": {"const": "array"}}}, "then": {}}):
        schema = {"$defs": {"plain": {"enum": ["string", "array"]}, "config": {**config, **extra}}, "$ref": "#/$defs/config"}
        grammar = draft_grammar(schema)
        assert grammar.accepts('{"type": {"type": {"type": "array"}}}') and not grammar.accepts('{"type": {}}')
    agrees({"$defs": {"plain": {"enum": ["string", "array"]}, "config": config}, "$ref": "#/$defs/config"},
           [{"type": "string"}, {"type": {"type": "array"}}], [{"type": "other"}, {"type": {"type": 1}}])


# -- random schemas against jsonschema

NAMES = ["kind", "a", "b"]
STRINGS = ["", "a", "b", "ab", "abc", 'q"', "é"]
SCALARS: list[Any] = [None, True, False, 0, 1, 2, -3, 1.5, 0.25, 2.0, *STRINGS]


def _simple(rng: random.Random) -> dict[str, Any]:
    """A schema of one or two keywords that ``complement`` may complement exactly
    (or not: ``pattern``, ``multipleOf``)."""
    choices: list[Any] = [
        lambda: {"type": rng.sample(["string", "integer", "number", "boolean", "null", "object", "array"], rng.randint(1, 3))},
        lambda: {"enum": rng.sample(SCALARS, rng.randint(1, 4))},
        lambda: {"const": rng.choice(SCALARS)},
        lambda: {"required": sorted(rng.sample(NAMES, rng.randint(1, 2)), key=NAMES.index)},  # undeclared: in this order
        lambda: {"properties": {rng.choice(NAMES): _leaf(rng)}},
        lambda: {rng.choice(["minLength", "maxLength"]): rng.randint(0, 3)},
        lambda: {rng.choice(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]): rng.randint(-1, 2)},
        lambda: {"pattern": "^a"},
        lambda: {"multipleOf": 2},
        lambda: {"items": _leaf(rng)},
        lambda: {rng.choice(["minItems", "maxItems"]): rng.randint(0, 2)},
    ]
    schema: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        schema.update(rng.choice(choices)())
    return schema


def _leaf(rng: random.Random) -> dict[str, Any]:
    return rng.choice([{"type": "string"}, {"const": rng.choice(SCALARS)}, {"enum": rng.sample(SCALARS, 2)}, {"minimum": 1}])


def _random_instance(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.2:
        return {name: _random_instance(rng, depth + 1) for name in NAMES if rng.random() < 0.5}
    if depth < 2 and roll < 0.4:
        return [_random_instance(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return rng.choice(SCALARS)


def _random_schema(rng: random.Random) -> dict[str, Any]:
    outer: dict[str, Any] = {"properties": {"kind": {}, "a": {}, "b": {}}}  # the order instances write names in
    if rng.random() < 0.5:
        outer["type"] = rng.sample(["string", "integer", "number", "object", "array", "null"], 2)
    kind = rng.choice(["not", "if", "contains", "unique", "oneOf"])
    if kind == "not":
        outer["not"] = _simple(rng)
    elif kind == "oneOf":
        outer["oneOf"] = [_simple(rng) for _ in range(rng.randint(2, 3))]
    elif kind == "if":
        outer["if"] = _simple(rng)
        for key in ("then", "else"):
            if rng.random() < 0.7:
                outer[key] = _simple(rng)
    elif kind == "contains":
        outer["contains"] = _simple(rng)
        for key in ("minContains", "maxContains", "maxItems"):
            if rng.random() < 0.4:
                outer[key] = rng.randint(0, 3)
        if rng.random() < 0.4:
            outer["items"] = _leaf(rng)
    else:
        outer["uniqueItems"] = True
        outer["items"] = {"enum": rng.sample(SCALARS, rng.randint(1, 9))}
    return outer


def _judged(schema: Any, instances: list[Any]) -> tuple[bool, int] | None:
    """The grammar of ``schema`` (None: no value satisfies it) against jsonschema on
    ``instances``: every valid one accepted, and where the report says exact, only
    those. Whether it is exact, and how many instances it was checked on so."""
    try:
        grammar = draft_grammar(schema)
    except SchemaError:
        return None
    validator = jsonschema.Draft202012Validator(schema)
    checked = 0
    for instance in instances:
        valid = validator.is_valid(instance)
        accepted = grammar.accepts(json.dumps(instance, ensure_ascii=False))
        assert accepted or not valid, (schema, instance)
        if grammar.report.exact:
            assert accepted == valid, (schema, instance)
            checked += 1
    return grammar.report.exact, checked


def test_random_schemas_agree_with_jsonschema() -> None:
    """Wherever the report says exact, acceptance is validity; elsewhere the grammar
    is only wider (every valid instance accepted)."""
    rng = random.Random(2026)
    exact = checked = 0
    for _ in range(250):
        schema = _random_schema(rng)
        found = _judged(schema, [_random_instance(rng) for _ in range(30)])
        if found is not None:
            exact += found[0]
            checked += found[1]
    assert exact >= 120 and checked >= 3000, (exact, checked)


def test_report_lists_each_keyword_once() -> None:
    schema = {"type": "object", "properties": {"kind": {"type": "string"}},
              "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": {"required": ["x"]},
              "else": {"not": {"required": ["y"]}}}
    report = Grammar.from_json_schema(schema).report
    root = [e.keyword for e in report.entries if e.pointer == ""]
    assert len(root) == len(set(root)) and {"if", "then", "else"} <= set(root)
    assert all(e.status == ENFORCED for e in report.entries), str(report)
    beside = {**schema, "not": {"required": ["z"]}}  # two negations, combined: not (A or B)
    agrees(beside, [{"kind": "a", "x": 1}, {"kind": "b"}, {}],
             [{"kind": "b", "y": 1}, {"kind": "a"}, {"kind": "a", "x": 1, "z": 1}, {"z": 1}])


# -- regressions


D6 = "http://json-schema.org/draft-06/schema#"

REGRESSION_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("a $ref used twice with different siblings",
     {"$defs": {"base": {"type": "object", "required": ["id"]}}, "type": "object", "properties": {"id": {}, "kind": {}},
      "not": {"anyOf": [{"$ref": "#/$defs/base", "required": ["kind"]}, {"$ref": "#/$defs/base", "required": ["x"]}]}},
     [{"id": 1}, {"kind": 1}, {}], [{"id": 1, "x": 5}, {"id": 1, "kind": 2}]),
    ("a $ref used twice beside const", {"$defs": {"s": {"type": "string"}},
                                        "not": {"anyOf": [{"$ref": "#/$defs/s", "const": "a"}, {"$ref": "#/$defs/s", "const": "b"}]}},
     ["c", 1, None], ["a", "b"]),
    ("a $ref used twice beside enum", {"$defs": {"s": {"type": "string"}}, "enum": ["a", "b", "c"],
                                       "not": {"anyOf": [{"$ref": "#/$defs/s", "const": "a"}, {"$ref": "#/$defs/s", "const": "b"}]}},
     ["c"], ["a", "b"]),
    ("$ref beside a boolean if", {"$defs": {"s": {"type": "string"}}, "not": {"$ref": "#/$defs/s", "if": True, "then": {"minLength": 2}}},
     [1, None, "a", ""], ["ab", "abc"]),
    ("if before draft 7", {"$schema": D6, "if": {"const": 1}, "then": False}, [1, 2], []),
    ("if inside not before draft 7", {"$schema": D6, "type": ["integer", "string"],
                                      "not": {"type": "string", "if": False, "else": False}}, [1], ["x"]),
    ("if in allOf before draft 7", {"$schema": D6, "allOf": [{"type": "integer"}, {"if": {"const": 1}, "then": False}]}, [1], ["x"]),
    ("a bare if in another allOf part", {"allOf": [{"if": {"const": 1}, "then": {"type": "integer"}}, {"if": {"type": "string"}}]},
     [1, "x", 2], []),
    ("uniqueItems within maxItems", {"prefixItems": [{"type": "boolean"}, {"type": "integer"}], "maxItems": 1, "uniqueItems": True},
     [[True], []], [[True, 1]]),
    ("two nots merged", {"allOf": [{"not": {"const": 1}}, {"not": {"const": 2}}]}, [3, "x"], [1, 2]),
    ("format as an annotation beside a complement", {"$schema": "https://json-schema.org/draft/2020-12/schema",
                                                     "type": "string", "format": "email", "not": {"const": "a"}},
     ["b", "x@y.z"], ["a"]),
    ("maxContains above maxItems", {"type": "array", "maxItems": 10, "contains": {"const": 1}, "maxContains": 1000},
     [[1, 1, 1], [2, 1]], [[2], [1] * 11]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), REGRESSION_CASES, ids=[case[0] for case in REGRESSION_CASES])
def test_review_regressions_agree_with_jsonschema(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


@pytest.mark.parametrize("schema", [
    {"type": "number", "not": {"const": 100000000000000000000}},
    {"not": {"const": 1e16}},
    {"type": "integer", "not": {"enum": [-1, -100000000000000000]}},
])
def test_listed_big_integers_are_approximated_not_narrowing(schema: dict[str, Any]) -> None:
    """json.dumps writes big floats with exponents (2e+20) that an integer range's
    spellings do not cover: reported approximated, and every valid big float passes."""
    grammar = draft_grammar(schema)
    assert [e.status for e in grammar.report.entries if e.keyword == "not"] == [APPROXIMATED]
    validator = jsonschema.Draft202012Validator(schema)
    for value in (2e20, 1e21, -1e300, 2e17, 1.5e16, 3, -7):
        if validator.is_valid(value):
            assert grammar.accepts(json.dumps(value)), value


def test_conditional_keywords_are_annotations_before_draft_7() -> None:
    report = Grammar.from_json_schema({"$schema": D6, "if": {"const": 1}, "then": False, "else": {}}).report
    notes = {e.keyword: (e.status, e.note) for e in report.entries}
    assert all(notes[key] == (ENFORCED, "not a keyword before draft 7: an annotation") for key in ("if", "then", "else"))
    contains = {"$schema": D6, "contains": {"type": "string"}}  # a keyword in draft 6, whatever float_integers says
    grammar = Grammar.from_json_schema(contains, float_integers=False)
    assert grammar.report.exact and grammar.accepts('["a", 2]') and not grammar.accepts("[2]")


def test_bad_schemas_are_schema_errors_naming_the_place() -> None:
    for schema, message in [
        ({"if": {"properties": 5}, "then": {}}, "/if: properties must be an object, not 5"),
        ({"if": 5, "then": {}}, "/if: a schema must be an object or a boolean, not 5"),
        ({"if": {}, "else": [1]}, "/else: a schema must be"),
        ({"not": 5}, "/not: a schema must be"),
        ({"type": "array", "prefixItems": 5}, "#: prefixItems must be a list, not 5"),
        ({"type": "object", "properties": 5}, "#: properties must be an object, not 5"),
        ({"type": "object", "not": {"required": ["a"]}, "required": 5}, "#: required must be a list"),
        ({"type": "array", "contains": {}, "prefixItems": [5]}, "/prefixItems/0: a schema must be"),
        ({"type": "array", "items": {"type": "boolean"}, "uniqueItems": "yes"}, "#: uniqueItems must be a boolean"),
        ({"type": "array", "items": {"type": "boolean"}, "uniqueItems": 0}, "#: uniqueItems must be a boolean"),
        ({"type": "array", "items": {"type": "boolean"}, "uniqueItems": None}, "#: uniqueItems must be a boolean"),
    ]:
        with pytest.raises(SchemaError, match=re.escape(message)):
            translate(schema)
    assert Grammar.from_json_schema({"not": {"minLength": 10**400}}).accepts('"a"')  # a count past float's range


def test_unique_items_honour_nullable() -> None:
    """OpenAPI's nullable adds null to the item's values, as the translator reads it
    elsewhere; jsonschema judges the same schema written with a type list."""
    schema = {"type": "array", "items": {"type": "boolean", "nullable": True}, "uniqueItems": True}
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, grammar.report
    validator = jsonschema.Draft202012Validator({**schema, "items": {"type": ["boolean", "null"]}})
    for instance in ([None], [True, None, False], [None, None], [True, True], [1], []):
        assert grammar.accepts(json.dumps(instance)) == validator.is_valid(instance), instance


def test_report_and_strict_errors_name_the_users_keywords() -> None:
    """contains's own top-level allOf and not stay in the report; strict mode blames
    the keyword the user wrote (if, contains), not the merge built for it; a draft-7
    tuple's items are reported under /items/i."""
    for key, sub in (("allOf", [{"type": "integer"}]), ("not", {"type": "null"})):
        report = Grammar.from_json_schema({"contains": {key: sub}}).report
        assert [(e.pointer, e.status) for e in report.entries if e.keyword == key] == [("/contains", ENFORCED)]
    wrapped = Grammar.from_json_schema({"contains": {"type": "integer"}}).report
    assert {(e.pointer, e.keyword) for e in wrapped.entries} == {("/contains", "type"), ("", "contains")}
    with pytest.raises(SchemaError, match=r"^#: if cannot be enforced exactly"):
        translate({"type": "string", "format": "date", "if": {"const": "a"}, "then": {"maxLength": 3}}, Options(strict=True))
    with pytest.raises(SchemaError, match=r"^#: contains cannot be enforced exactly"):
        translate({"contains": {"not": {"type": "null"}, "multipleOf": 3}}, Options(strict=True))
    tuple_items = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "boolean"}],
                   "additionalItems": {"type": "null"}, "uniqueItems": True}
    pointers = {e.pointer for e in Grammar.from_json_schema(tuple_items).report.entries if e.keyword == "type"}
    assert pointers == {"", "/items/0", "/additionalItems"}


def _discriminated(depth: int) -> dict[str, Any]:
    """An object with an if/then/else on its kind, holding the same shape under c."""
    schema: dict[str, Any] = {
        "type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "x": {}, "y": {}},
        "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": {"required": ["x"]},
        "else": {"required": ["y"]}}
    if depth:
        schema["properties"]["c"] = _discriminated(depth - 1)
    return schema


def test_splits_past_their_rule_budget_are_approximated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each if (and each not of objects) copies the object grammar per branch, so
    nested ones multiply: past MAX_SPLIT_RULES new rules the keyword is left out,
    reported, and the schema still translates."""
    schema = _discriminated(1)

    def exact(limit: int) -> bool:
        monkeypatch.setattr(applicators, "MAX_SPLIT_RULES", limit)
        return translate(schema)[1].exact

    low, high = 1, 2_000
    assert exact(high) and not exact(low)
    while high - low > 1:  # the smallest budget that holds the split
        middle = (low + high) // 2
        low, high = (low, middle) if exact(middle) else (middle, high)
    monkeypatch.setattr(applicators, "MAX_SPLIT_RULES", high)
    agrees(schema, [{"kind": "a", "x": 1}, {"y": 1, "c": {"kind": "a", "x": 2}}], [{"kind": "a"}, {"y": 1, "c": {"kind": "b"}}])
    monkeypatch.setattr(applicators, "MAX_SPLIT_RULES", low)
    past = Grammar.from_json_schema(schema)
    assert any(e.keyword == "if" and "more than" in e.note for e in past.report.with_status(APPROXIMATED))
    assert past.accepts(json.dumps({"kind": "a"}))  # wider: the outer if is left out
    monkeypatch.undo()
    props = {f"p{i}": {"type": "object", "properties": {f"q{j}": {"type": "string"} for j in range(10)}} for i in range(30)}
    parts = [{"required": [f"a{i}", f"b{i}"]} for i in range(6)]
    for big in ({"type": "object", "properties": props, "not": {"anyOf": parts}},
                {"type": "object", "properties": props, "if": {"anyOf": parts[:3]}, "then": {"required": ["p1"]}}):
        assert not translate(big)[1].exact  # approximated, not "more than 20000 places"
    # each conditional is one rule however many branches hold it: nested ones add up, not multiply
    grammar, report = translate(_discriminated(8))
    assert report.exact and len(grammar) < 20_000


@pytest.mark.parametrize(("schema", "message"), [
    ({"not": {"type": 5}}, "/not/type: unknown type 5"),
    ({"not": {"anyOf": []}}, "/not/anyOf: anyOf must be a non-empty list"),
    ({"not": {"anyOf": [5]}}, "/not/anyOf/0: a schema must be"),
    ({"not": {"required": [1]}}, "/not/required: required must be a list of names"),
    ({"not": {"if": True, "then": 5}}, "/not/then: a schema must be"),
    ({"type": "object", "not": {"required": ["a"]}, "properties": {"a/b": 5}}, "/properties/a~1b: a schema must be"),
    ({"type": "array", "contains": {"type": "string"}, "items": 5}, "/items: a schema must be"),
    ({"oneOf": [{"type": "string"}, 5]}, "/oneOf/1: a schema must be"),
])
def test_malformed_schemas_inside_applicators_are_schema_errors(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=re.escape(message)):
        translate(schema)


def test_witnesses_past_their_limit_are_approximated() -> None:
    """Each ``not`` of ``patternProperties`` at one object is a witness, a bit of the
    object's states: past ``MAX_WITNESSES`` they are left out, the grammar wider."""
    def schema(count: int) -> dict[str, Any]:
        return {"type": "object", "allOf": [{"not": {"patternProperties": {f"^{chr(97 + i)}": {"type": "integer"}}}}
                                            for i in range(count)]}

    at = Grammar.from_json_schema(schema(MAX_WITNESSES))
    assert at.report.exact and at.accepts('{"a": "x", "b": "x", "c": "x"}') and not at.accepts('{"a": "x", "b": "x"}')
    past = Grammar.from_json_schema(schema(MAX_WITNESSES + 1))
    assert [e.status for e in past.report.entries if e.keyword == "not"] == [APPROXIMATED]
    assert past.accepts('{"a": "x"}')


def _witness_branch(rng: random.Random) -> dict[str, Any]:
    """An object schema with patterns, sometimes a ``not`` of them, sometimes closed."""
    branch: dict[str, Any] = {"patternProperties": {rng.choice(["^a", "b", "^a.", "c$"]): _leaf(rng)
                                                    for _ in range(rng.randint(1, 2))}}
    if rng.random() < 0.4:
        branch["not"] = {"patternProperties": {rng.choice(["a", "^b"]): _leaf(rng)}}
    if rng.random() < 0.3:
        branch["additionalProperties"] = rng.choice([False, _leaf(rng)])
    if rng.random() < 0.3:
        branch["required"] = [rng.choice(["a", "b", "ab"])]
    return branch


def test_random_pattern_property_complements_agree_with_jsonschema() -> None:
    """not and oneOf over objects with patternProperties (whose complement holds
    some property a pattern finds): wherever the report says exact, acceptance is
    validity; elsewhere the grammar is only wider."""
    rng = random.Random(7)
    names = ["a", "b", "ab", "ba", "c", "ac", "a1"]
    exact = checked = 0
    for _ in range(120):
        schema: dict[str, Any] = {"type": "object", "properties": {name: {} for name in names}}
        if rng.random() < 0.5:
            schema["oneOf"] = [_witness_branch(rng) for _ in range(2)]
        else:
            schema["not"] = _witness_branch(rng)
        instances = [{name: rng.choice(SCALARS) for name in names if rng.random() < 0.4} for _ in range(40)]
        found = _judged(schema, instances)
        if found is not None:
            exact += found[0]
            checked += found[1]
    assert exact >= 50 and checked >= 2000, (exact, checked)  # 0 and 0 with patternProperties inexact


def test_witnesses_past_the_object_state_limit_are_approximated(monkeypatch: pytest.MonkeyPatch) -> None:
    """A witness doubles the states of the members its pattern finds (met or not
    yet): past ``MAX_OBJECT_STATES`` it is left out, reported, the grammar wider."""
    monkeypatch.setattr(sys.modules["schema2grammar.objects"], "MAX_OBJECT_STATES", 40)
    schema = {"type": "object", "properties": {f"q{i}": {} for i in range(30)},
              "not": {"patternProperties": {"^q": {"type": "string"}}}}
    grammar = Grammar.from_json_schema(schema)
    [entry] = [e for e in grammar.report.entries if e.keyword == "not" and e.pointer == ""]
    assert entry.status == APPROXIMATED and "more than 40 grammar rules" in entry.note
    assert grammar.accepts('{"q0": "s"}')
    small = Grammar.from_json_schema({**schema, "properties": {f"q{i}": {} for i in range(5)}})
    assert small.report.exact and small.accepts('{"q0": "s", "q1": 1}') and not small.accepts('{"q0": "s"}')


def test_recursion_through_conditionals_is_a_cycle_of_rules() -> None:
    """Issue 42: a $ref back to the schema from then or else was expanded level by
    level (each level's else less if grew by one more copy of not) until "nests
    more than 100 places deep"; each conditional is now one rule, so recursion
    through it meets itself."""
    tree = {"$defs": {"t": {"if": {"type": "array"}, "then": {"items": {"$ref": "#/$defs/t"}}, "else": {"type": "integer"}}},
            "$ref": "#/$defs/t"}
    agrees(tree, [1, [1, [2, [3]]], []], ["a", [1, "a"], 1.5])
    chain = {"$defs": {"d": {"anyOf": [{"type": "null"}, {
        "if": {"type": "boolean"}, "then": {"type": "array", "items": {"const": "ab"}},
        "else": {"type": "object", "properties": {"n": {"$ref": "#/$defs/d"}}, "required": ["n"], "additionalProperties": False}}]}},
        "$ref": "#/$defs/d"}
    agrees(chain, [None, {"n": None}, {"n": {"n": None}}], [True, ["ab"], {"n": 1}, {}])
    # the issue's schema: else is the schema itself, so only null is ever valid (the
    # least solution; a validator following else recurses without end on the rest)
    looping = {"$defs": {"d0": {"anyOf": [{"type": "null"}, {"if": {"type": "boolean"}, "then": {
        "type": "array", "items": {"const": "ab"}}, "else": {"$ref": "#/$defs/d0"}}]}}, "$ref": "#/$defs/d0"}
    grammar = draft_grammar(looping)
    assert grammar.report.exact and grammar.accepts("null")
    assert not any(grammar.accepts(text) for text in ("true", '["ab"]', "1", '"x"', "{}"))

"""JSON Schema to grammar: the scalar regexes against brute force, every keyword's
grammar against hand-written valid and invalid instances (the valid ones checked
with jsonschema first), the report, strict mode, whitespace, Pydantic models, and
real MaskBench schemas."""

from __future__ import annotations

import datetime
import enum
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any, Literal, Optional

import jsonschema
import pydantic
import pytest
from schema_checks import agrees, draft_grammar

from schema2grammar import APPROXIMATED, ENFORCED, Options, SchemaError, translate
from schema2grammar import ecma, property_names, regexes
from schema2grammar.translate import MAX_DISTRIBUTED
from structgen import Grammar
from structgen.json.string_lengths import StringLengths
from structgen.engine.dfa import build_dfa
from structgen.engine.regex import parse


@pytest.mark.parametrize(("patterns", "declared"), [
    (["^x-"], ["name"]), (["^[a-z]+$"], ["name", "id"]), (["^x-", "[0-9]"], []),
    (["^[a-z_]{1,8}$", "^x-.*$", "a"], ["names", "x-a"]), (["."], ["a"]), (["^$"], []), (["b|^1", "é$"], ["id"]),
])
def test_name_regions_split_names_by_the_patterns_they_match(patterns: list[str], declared: list[str]) -> None:
    """Every name but the declared ones, as json.dumps spells it (either way), is in
    exactly one region: the one of the patterns whose ECMA search finds it."""
    regions = [(r.matched, re.compile(r.regex)) for r in property_names.regions(patterns, declared)]
    searches = [re.compile(ecma.python_regex(p)) for p in patterns]
    rng = random.Random(5)
    names = declared + ["", "x", "x-", "x-a", "ax-", "ab", "é", "x-é", "12", "a1", '"', "\\", "\n", "\x01", "a b"] + [
        "".join(rng.choice('ax-1_é"\\ \nbX\x1f') for _ in range(rng.randint(0, 6))) for _ in range(2000)
    ]
    for name in names:
        expected = [] if name in declared else [tuple(i for i, s in enumerate(searches) if s.search(name))]
        for ascii_only in (False, True):
            spelled = json.dumps(name, ensure_ascii=ascii_only)[1:-1]
            hits = [matched for matched, regex in regions if regex.fullmatch(spelled)]
            assert hits == expected, (patterns, name)


@pytest.mark.parametrize(("low", "high"), [(0, 250), (-37, 12), (15, None), (None, -3), (None, None), (7, 7), (-1000, -999), (99, 101)])
def test_integer_ranges_equal_brute_force(low: int | None, high: int | None) -> None:
    pattern = re.compile(regexes.integer_range(low, high) if (low, high) != (None, None) else regexes.INTEGER)
    for value in range(-1200, 1200):
        inside = (low is None or value >= low) and (high is None or value <= high)
        assert bool(pattern.fullmatch(str(value))) == inside, value
    assert not pattern.fullmatch("007") and not pattern.fullmatch("1.0")


def test_names_other_than_the_declared_ones() -> None:
    words = ["count", "co", "x", "é", "a b", "counter", "cx"]
    pattern = re.compile(regexes.string_except(words) or "")
    rng = random.Random(3)
    candidates = words + ["", "c", "cou", "counts", "xy", "coa", "é!", "a", "a b ", "\n", 'q"', "co\x01", "count\\"] + [
        "".join(rng.choice("coxunteré ab\n\\\x01") for _ in range(rng.randint(0, 8))) for _ in range(3000)
    ]
    for text in candidates:
        for ascii_only in (False, True):
            assert bool(pattern.fullmatch(json.dumps(text, ensure_ascii=ascii_only))) == (text not in words), text
    quoted = re.compile(regexes.string_except(['a"b', "c/", "d\\"]))  # words with escaped spellings
    for spelled in ['"a\\"b"', '"a\\u0022b"', '"c/"', '"c\\/"', '"d\\\\"', '"d\\u005C"']:
        assert not quoted.fullmatch(spelled), spelled
    for spelled in ['"a\\"c"', '"a\\u0022"', '"c//"', '"c\\/\\/"', '"d\\\\\\\\"', '"d\\u00e9"', '"a"']:
        assert quoted.fullmatch(spelled), spelled


def test_declared_names_that_need_an_escape_are_no_extra_names() -> None:
    """Where a declared (or dependency's) name needs an escape, the other names are
    the complement of its every spelling (JSON-Schema-Test-Suite "properties with
    escaped characters"): that name in another spelling is refused, not taken as
    an extra property."""
    names = ["foo\nbar", 'foo"bar', "foo\\bar", "foo\tbar"]
    schema = {"properties": {name: {"type": "number"} for name in names},
              "dependentRequired": {"foo\nbar": ["a\rb"]}}
    agrees(schema, [{}, {"x": "s"}, {"foo\nbar": 1, "a\rb": None}, {names[1]: 2, names[2]: 3, "q": "s"}],
           [{"foo\nbar": "1"}, {'foo"bar': "x"}, {"foo\nbar": 1}, {"foo\\bar": 1, "foo\tbar": "s", "x": 1}])
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts('{"foo\\u000abar": 1, "a\\u000Db": 2}')  # the same names, spelled otherwise
    assert not grammar.accepts('{"foo\\u000Abar": "1", "a\\rb": 2}') and not grammar.accepts('{"foo\\u000abar": 1}')
    assert not grammar.accepts('{"foo\\u0022bar": "s"}') and grammar.accepts('{"foo\\u0022bar": 2}')


def test_string_lengths_count_characters() -> None:
    pattern = re.compile(regexes.string_of_length(2, 3))
    for text, inside in [("ab", True), ("abc", True), ("a", False), ("abcd", False), ("日本", True), ('a"', True), ("\n\n\n", True), ("é", False)]:
        assert bool(pattern.fullmatch(json.dumps(text, ensure_ascii=False))) == inside, text
        assert bool(pattern.fullmatch(json.dumps(text))) == inside, text  # \\u escapes count as one


def test_length_bounds_up_to_the_limit_are_exact_and_past_it_left_to_the_matcher() -> None:
    """At ``MAX_LENGTH_BOUND`` the count still fits the lexer's automaton; past it
    (``maxLength: 4096``, common in MaskBench) a maximum is the matcher's
    (``structgen.json.string_lengths``), a minimum is reported: neither is a compile
    error."""
    limit = regexes.MAX_LENGTH_BOUND
    exact = Grammar.from_json_schema({"type": "string", "maxLength": limit})
    assert exact.report.exact
    assert exact.accepts(json.dumps("é" * limit, ensure_ascii=False)) and not exact.accepts(json.dumps("a" * (limit + 1)))
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": limit + 1},
                                               "b": {"type": "string", "maxLength": 2 * limit},
                                               "c": {"type": "string", "minLength": limit + 1}}}
    past = Grammar.from_json_schema(schema)
    assert past.accepts(json.dumps({"a": "x" * (limit + 1), "b": "y" * (2 * limit)}))
    assert not past.accepts(json.dumps({"a": "x" * (limit + 2)})) and not past.accepts(json.dumps({"b": "y" * (2 * limit + 1)}))
    assert past.accepts(json.dumps({"c": "z" * limit}))  # the minimum counted to the limit only
    assert {(e.pointer, e.keyword, e.status) for e in past.report.entries} >= {
        ("/properties/a", "maxLength", ENFORCED), ("/properties/b", "maxLength", ENFORCED),
        ("/properties/c", "minLength", APPROXIMATED)}
    with pytest.raises(SchemaError, match=r"/properties/c: minLength cannot be enforced exactly"):
        translate(schema, Options(strict=True))


@pytest.mark.parametrize(("pattern", "low", "high"), [
    ("^[a-z0-9-]+$", 3, 6),
    ("[0-9a-f]+", 4, 4),  # a search: the characters around the match count too
    ("^$|^[a-z][a-z0-9]*$", 2, None),
    ("^([\\w/-]|[\\w-][\\w/-]*[\\w-])$", 0, 3),
    ("é|\\\\", 2, 3),  # a backslash, a newline or "é" is one character, escaped or not
])
def test_lengths_beside_a_pattern_are_enforced(pattern: str, low: int, high: int | None) -> None:
    """A string ``pattern`` finds is accepted exactly when it has ``low`` to ``high``
    characters: the terminal's lookahead counts them, an escape as one (a character
    the pattern names is written as ``json.dumps(..., ensure_ascii=False)`` writes it)."""
    schema: dict[str, Any] = {"type": "string", "pattern": pattern, "minLength": low}
    if high is not None:
        schema["maxLength"] = high
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, str(grammar.report)
    search = re.compile(ecma.python_regex(pattern))
    rng = random.Random(pattern)
    texts = ["".join(rng.choice("ab0f-/é\\\n") for _ in range(rng.randint(0, 8))) for _ in range(300)]
    for text in texts + ["abc", "0f0f", "ab1", "é\\"]:
        inside = search.search(text) is not None and low <= len(text) and (high is None or len(text) <= high)
        for spelled in {json.dumps(text, ensure_ascii=False), json.dumps(text, ensure_ascii="é" not in text)}:
            assert grammar.accepts(spelled) == inside, (pattern, spelled)


def test_lengths_beside_a_pattern_past_the_limit_are_approximated() -> None:
    """Counting characters multiplies the pattern's automaton: past
    ``automata.MAX_MEETING_STATES`` states, or past ``regexes.MAX_LENGTH_BOUND``, the lengths
    are reported, and the pattern alone is enforced (the lexer counts where a long
    text may still need more than ``MAX_CLOSING_DISTANCE`` characters: here the
    last word's 20). Lengths no text of the pattern has are no value at all."""
    words = {"type": "string", "pattern": "^(?:\\S+\\s+){0,19}\\S{20}$", "minLength": 1, "maxLength": 200}
    grammar = Grammar.from_json_schema(words)
    approximated = {(e.keyword, e.note) for e in grammar.report.with_status(APPROXIMATED)}
    assert approximated == {(key, "not enforced beside pattern: the pattern counting its characters needs more than "
                                  "5000 automaton states") for key in ("minLength", "maxLength")}
    assert grammar.accepts('"two ' + "w" * 20 + '"') and not grammar.accepts('"two  "')
    huge = Grammar.from_json_schema({"type": "string", "pattern": "^a{3}(?:b{20})*$", "maxLength": 100_000})
    assert [(e.keyword, e.status) for e in huge.report.entries if e.keyword == "maxLength"] == [("maxLength", APPROXIMATED)]
    assert huge.accepts('"aaa"') and not huge.accepts('"aaaa"') and not huge.accepts('"aaab"')
    # where a long text needs a few characters at most to end, the matcher counts it (keeping room for them)
    for pattern in ("^a{3}$", "^a{3}(?:bb)*$", "^(?:\\S+\\s+){0,19}\\S+$"):
        counted = Grammar.from_json_schema({"type": "string", "pattern": pattern, "minLength": 1, "maxLength": 100_000})
        assert counted.report.exact and counted.check(StringLengths) is not None, pattern
    with pytest.raises(SchemaError, match=r"#: no string of the lengths allowed matches the pattern"):
        translate({"type": "string", "pattern": "^[0-9]{9}$", "maxLength": 8})
    with pytest.raises(SchemaError, match=r"#: maxLength 2 is below minLength 3"):
        translate({"type": "string", "pattern": "a", "minLength": 3, "maxLength": 2})


CASES: list[tuple[str, dict[str, Any], list[Any], list[Any]]] = [
    ("types", {"type": ["integer", "null"]}, [1, -20, None], [1.5, "1", True, []]),
    ("enum", {"enum": ["a", 1, None, {"k": [1, 2]}]}, ["a", 1, None, {"k": [1, 2]}], ["b", 2, {"k": [1]}]),
    ("const", {"const": {"a": True}}, [{"a": True}], [{"a": False}, {}]),
    (
        "object",
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"],
         "additionalProperties": False},
        [{"b": "x"}, {"a": 1, "b": "x"}],
        [{"a": 1}, {}, {"b": "x", "c": 1}, {"a": "1", "b": "x"}],
    ),
    (
        "extra_properties",
        {"type": "object", "properties": {"count": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        [{}, {"count": 1}, {"count": 1, "other": "x"}, {"cou": "x", "counts": "y"}],
        [{"count": "ten"}, {"count": 1, "other": 2}],
    ),
    (
        "arrays",
        {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3},
        [[True], [True, False, True]],
        [[], [True] * 4, [1]],
    ),
    (
        "tuple",
        {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        [[], ["a"], ["a", 1]],
        [[1], ["a", 1, 2], ["a", "b"]],
    ),
    (
        "long_arrays",
        {"type": "array", "items": {"type": "null"}, "minItems": 3},
        [[None] * 3, [None] * 40],
        [[None] * 2],
    ),
    (
        "any_of",
        {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 10}]},
        ["ab", 10, 11000],
        ["abc", 9, None],
    ),
    ("one_of_disjoint", {"oneOf": [{"type": "string"}, {"type": "boolean"}]}, ["x", True], [1, None]),
    ("all_of_enums", {"allOf": [{"enum": ["a", "b", 1, True]}, {"enum": ["b", 1.0, "c", 1]}, {"definitions": {"x": {}}}],
                      "definitions": {"y": {}}}, ["b", 1], ["a", "c", True, 2]),
    ("all_of_consts", {"allOf": [{"const": {"k": [1]}}, {"const": {"k": [1.0]}}]}, [{"k": [1]}], [{"k": [2]}, {}]),
    # keywords beside enum judge each listed value; a keyword JSON Schema does not define is an annotation
    ("enum_beside_keywords", {"enum": ["ab", "abc", "b", 7, 12], "pattern": "^a", "minLength": 3, "maximum": 10,
                              "doNotSuggest": True}, ["abc", 7], ["ab", "b", 12]),
    (
        "all_of",
        {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                   {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]},
        [{"a": 1, "b": 2}],
        [{"a": 1}, {"b": 2}],
    ),
    (
        "recursion",
        {"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                           "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                            "required": ["value"], "additionalProperties": False}},
         "$ref": "#/$defs/node"},
        [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}],
        [{"value": 1, "children": [{}]}, {"children": []}],
    ),
    (
        "integer_bounds",
        {"type": "integer", "exclusiveMinimum": -3, "maximum": 120},
        [-2, 0, 120],
        [-3, 121, 1.5],
    ),
    (
        "draft4_exclusive",
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "minimum": 5, "exclusiveMinimum": True},
        [6],
        [5],
    ),
    ("formats", {"type": "string", "format": "date"}, ["2024-02-29", "1999-12-31"], ["2024-13-01", "24-01-01", "x"]),
    ("uuid", {"type": "string", "format": "uuid"}, ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567"]),
    ("boolean_schema", {"type": "object", "properties": {"a": True}}, [{"a": [1, {"b": None}]}], [[]]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), CASES, ids=[case[0] for case in CASES])
def test_keywords_accept_exactly_their_instances(name: str, schema: dict[str, Any], valid: list[Any], invalid: list[Any]) -> None:
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, str(grammar.report)
    validator = jsonschema.validators.validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())
    for instance in valid:
        validator.validate(instance)  # the test data itself is right
        for indent in (None, 2, 4):
            assert grammar.accepts(json.dumps(instance, ensure_ascii=False, indent=indent)), (name, instance, indent)
    for instance in invalid:
        assert not validator.is_valid(instance), instance
        assert not grammar.accepts(json.dumps(instance, ensure_ascii=False)), (name, instance)


def test_openapi_nullable_adds_null() -> None:
    grammar = Grammar.from_json_schema({"type": "string", "nullable": True})
    assert grammar.report.exact
    assert grammar.accepts('"x"') and grammar.accepts("null") and not grammar.accepts("1")


def test_duplicate_declared_name_is_refused() -> None:
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"count": {"type": "integer"}}})
    assert not grammar.accepts('{"count": 1, "count": 2}')
    assert grammar.accepts('{"count": 1, "other": 2}')


def test_whitespace_is_bounded_and_compact_has_none() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}
    flexible = Grammar.from_json_schema(schema, max_whitespace=8)
    assert flexible.accepts('{"a": [1, 2]}') and flexible.accepts('{\n  "a": [\n    1,\n    2\n  ]\n}')
    assert flexible.accepts('{"a":' + " " * 8 + "[1]}") and not flexible.accepts('{"a":' + " " * 9 + "[1]}")
    # every token may follow a gap, the first one too (JSON allows it); nothing trails the value
    assert flexible.accepts(' ' * 8 + '{"a": [1]}') and not flexible.accepts(' ' * 9 + '{"a": [1]}')
    assert not flexible.accepts('{"a": [1]} ')
    compact = Grammar.from_json_schema(schema, whitespace="compact")
    assert compact.accepts('{"a":[1,2]}') and not compact.accepts('{"a": [1,2]}')


def test_report_lists_every_keyword_with_its_pointer() -> None:
    schema = {
        "title": "T",
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "a(?=b)"},  # a lookahead not at the start
            "n": {"type": "number", "multipleOf": 1009},  # a factor prime to ten past multiples.MAX_DIVISOR
            "s": {"not": {"format": "date"}},
        },
        "x-custom": 1,
        "not": {"type": "null"},
    }
    report = translate(schema)[1]
    by_key = {(e.pointer, e.keyword): e.status for e in report.entries}
    assert by_key[("", "title")] == ENFORCED and by_key[("", "properties")] == ENFORCED
    assert by_key[("/properties/name", "pattern")] == APPROXIMATED
    assert by_key[("/properties/n", "multipleOf")] == APPROXIMATED
    assert by_key[("", "x-custom")] == ENFORCED  # not a JSON Schema keyword: an annotation
    assert by_key[("", "not")] == ENFORCED  # the complement of a type
    assert by_key[("/properties/s", "not")] == APPROXIMATED  # no complement of a format
    assert not report.exact
    assert "approximated" in str(report) and "/properties/name pattern" in str(report)
    assert report.as_dicts()[0].keys() == {"pointer", "keyword", "status", "note", "narrower"}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string", "pattern": "(a)\\1"}, r"/properties/s: pattern cannot be enforced exactly"),
        ({"type": "number", "multipleOf": 1009}, r"/properties/s: multipleOf cannot be enforced exactly"),
    ],
)
def test_strict_mode_names_the_keyword_and_place(schema: dict[str, Any], message: str) -> None:
    wrapped = {"type": "object", "properties": {"s": schema}}
    with pytest.raises(SchemaError, match=message):
        translate(wrapped, Options(strict=True))
    assert not translate(wrapped)[1].exact  # lenient: approximated, and said so


def test_enum_beside_a_keyword_it_cannot_judge_keeps_every_value() -> None:
    """A pattern no automaton expresses judges no listed value: all are kept, and the
    report says so (the grammar is wider, never narrower)."""
    grammar = Grammar.from_json_schema({"enum": ["a1", "b"], "pattern": "(a)\\1"})
    assert [e.status for e in grammar.report.entries if e.keyword == "pattern"] == [APPROXIMATED]
    assert grammar.accepts('"a1"') and grammar.accepts('"b"') and not grammar.accepts('"c"')


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"type": "strnig"}, "unknown type 'strnig'"),
        ({"$ref": "#/$defs/missing"}, "points to nothing"),
        ({"type": "array", "minItems": 3, "maxItems": 2}, "maxItems 2 is below minItems 3"),
        (False, "accepts no value"),
        ({"type": "integer", "minimum": 5, "maximum": 4}, "no integer lies within the bounds"),
        ({"allOf": [{"enum": ["a", 1]}, {"enum": ["b", True]}]}, "#: allOf's parts list no enum value in common"),
        ({"allOf": [{"const": 1}, {"const": True}]}, "#: allOf's parts have different const values"),
        ({"allOf": [{"enum": 1}, {"enum": [1]}]}, "#: enum must be a list"),
    ],
)
def test_bad_schemas_are_clear_errors(schema: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=re.escape(message)):
        translate(schema)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="whitespace must be"):
        Options(whitespace="pretty")
    with pytest.raises(ValueError, match="max_whitespace"):
        Options(max_whitespace=-1)
    with pytest.raises(ValueError, match="property_order must be 'declared' or 'any'"):
        Options(property_order="sorted")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


class Shape(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=20)
    kind: Literal["circle", "square"]
    color: Color
    center: Point
    corners: list[Point] = []
    label: Optional[str] = None
    size: int = pydantic.Field(ge=1, le=100)
    children: list["Shape"] = []


def test_pydantic_models_round_trip() -> None:
    grammar = Grammar.from_pydantic(Shape)
    assert grammar.report.exact, str(grammar.report)
    shapes = [
        Shape(name="a", kind="circle", color=Color.RED, center=Point(x=1), size=5),
        Shape(name="b" * 20, kind="square", color=Color.BLUE, center=Point(x=-1, y=2), corners=[Point(x=0)], label="L",
              size=100, children=[Shape(name="c", kind="circle", color=Color.RED, center=Point(x=0), size=1)]),
    ]
    for shape in shapes:
        text = shape.model_dump_json()
        assert grammar.accepts(text), text
        assert Shape.model_validate_json(text) == shape
    bad = json.loads(shapes[0].model_dump_json())
    for key, value in [("size", 0), ("size", 101), ("kind", "oval"), ("name", "n" * 21), ("color", "green")]:
        assert not grammar.accepts(json.dumps({**bad, key: value})), key


def test_real_function_schemas_translate_or_fail_clearly() -> None:
    """BFCL's function-calling schemas (the bfcl-eval package): each translates to a
    grammar that compiles, or fails with a SchemaError naming what is wrong (BFCL
    writes "dict" and "float" for "object" and "number")."""
    import importlib.util

    spec = importlib.util.find_spec("bfcl_eval")
    assert spec is not None and spec.submodule_search_locations
    data = Path(list(spec.submodule_search_locations)[0]) / "data" / "BFCL_v4_simple_python.json"
    translated = refused = 0
    for line in data.read_text().splitlines()[:60]:
        for function in json.loads(line)["function"]:
            try:
                grammar = Grammar.from_json_schema(function["parameters"])
            except SchemaError as exc:
                assert "unknown type" in str(exc) or "$ref" in str(exc), exc
                refused += 1
                continue
            assert grammar.table.state_count > 1
            translated += 1
    assert refused >= 1  # "dict" is not a JSON Schema type
    standard = json.loads(json.dumps(function["parameters"]).replace('"dict"', '"object"').replace('"float"', '"number"'))
    assert Grammar.from_json_schema(standard).accepts("{}") == (not standard.get("required"))


# -- regressions found by `make conformance` (MaskBench and the JSON-Schema-Test-Suite)


def _accepts(schema: Any, instance: Any) -> bool:
    """Whether the grammar takes ``instance``, under the draft's own semantics."""
    return draft_grammar(schema).accepts(json.dumps(instance, ensure_ascii=False))


def test_keywords_without_type_constrain_their_own_type_only() -> None:
    schema = {"maxLength": 2, "minimum": 3, "properties": {"a": {"type": "integer"}}, "items": {"type": "null"}}
    for instance in ["ab", 12, 4.5, True, None, [None], {"a": 1}, {"b": "x"}]:
        assert _accepts(schema, instance), instance
    for instance in ["abc", [1], {"a": "x"}, 1.5, 2]:
        assert not _accepts(schema, instance), instance


def test_ref_siblings_are_ignored_up_to_draft_7_and_merged_after() -> None:
    defs = {"n": {"type": "integer"}}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs,
              "properties": {"a": {"$ref": "#/definitions/n", "maximum": 5}}}
    assert _accepts(draft7, {"a": 9})
    modern = {"$defs": defs, "properties": {"a": {"$ref": "#/$defs/n", "maximum": 5}}}
    assert _accepts(modern, {"a": 5}) and not _accepts(modern, {"a": 9})


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"])
def test_oneof_branch_that_is_a_ref_is_still_less_the_other_branches(draft: str) -> None:
    """fuzz case schema-unsound-7-117: each oneOf branch is built with ``not`` the
    others beside it; beside a ``$ref``, drafts 3-7 ignore that ``not``, so the
    branch accepted what the others accept too."""
    defs = {"h": {"type": "string"}}
    schema = {"$schema": draft, "definitions": defs, "$defs": defs,
              "oneOf": [{"type": "number"}, {"$ref": "#/definitions/h"}, {"not": {"type": "number"}}]}
    assert _accepts(schema, 1) and _accepts(schema, None)
    assert not _accepts(schema, "a")  # the $ref branch and the not branch both
    with pytest.raises(SchemaError, match="no value matches exactly one branch"):
        translate({"$schema": draft, "definitions": {"h": {}}, "oneOf": [{}, {"$ref": "#/definitions/h"}]})


def test_recursive_ref_with_siblings_is_a_cycle_not_a_stack_overflow() -> None:
    """Github_hard---o61026: a recursive $ref beside other keywords recursed forever."""
    schema = {"definitions": {"params": {"type": "array", "items": {"type": "object", "properties": {
        "callback_params": {"$ref": "#/definitions/params", "type": "array", "minItems": 0}}}}},
        "$ref": "#/definitions/params"}
    assert _accepts(schema, [{"callback_params": [{"callback_params": []}]}])
    assert not _accepts(schema, [{"callback_params": {}}])


def test_oneof_branch_ref_beside_a_description_is_followed() -> None:
    """Github_easy---o25419: the root's definitions made each branch an allOf with
    them, and the branch's $ref (beside a description) was then taken for an unknown
    keyword: the branch accepted any value."""
    schema = {"$schema": "http://json-schema.org/draft-04/schema#",
              "oneOf": [{"description": "one", "$ref": "#/definitions/request"},
                        {"type": "array", "items": {"$ref": "#/definitions/request"}, "minItems": 1}],
              "definitions": {"request": {"type": "object", "required": ["method"], "additionalProperties": False,
                                          "properties": {"method": {"type": "string"},
                                                         "params": {"type": ["array", "object"]}}}}}
    assert _accepts(schema, {"method": "m", "params": [1]}) and _accepts(schema, [{"method": "m"}])
    assert not _accepts(schema, {"method": "m", "params": True})
    assert not _accepts(schema, {"method": "m", "extra": 1})
    assert not _accepts(schema, 3)
    _, report = translate(schema)
    assert not [e for e in report.entries if e.keyword == "$ref" and e.status != ENFORCED]


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"])
def test_allof_part_refs_are_followed_with_their_siblings_as_the_draft_says(draft: str) -> None:
    schema = {"$schema": draft, "$defs": {"n": {"type": "integer"}}, "definitions": {"n": {"type": "integer"}},
              "allOf": [{"minimum": 0}, {"$ref": "#/definitions/n", "maximum": 5, "title": "t"}]}
    assert _accepts(schema, 3) and not _accepts(schema, 1.5) and not _accepts(schema, -1)
    assert _accepts(schema, 9) == draft.endswith("draft-07/schema#")  # maximum is ignored beside $ref up to draft 7


def test_allof_reference_cycle_is_a_clear_error() -> None:
    schema = {"definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}},
              "allOf": [{"$ref": "#/definitions/a"}]}
    with pytest.raises(SchemaError, match="more than 1000 references"):
        translate(schema)


LANGUAGE_TAG = (  # Github_trivial---o88608: a BCP 47 tag, past the name automata's limits
    "^(([a-zA-Z]{2,8}(-[a-zA-Z]{3}(-[a-zA-Z]{3}){0,2})?(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|[0-9]{3}))?(-[a-zA-Z0-9]{4,8})*"
    "(-([0-9]|[a-w]|[y-z]|[A-W]|[Y-Z])-[0-9a-zA-Z]{2,8})*(-x(-[a-zA-Z0-9]{1,8})+)?)|x(-[a-zA-Z0-9]{1,8})+|en-GB-oed)$"
)


def test_name_regions_past_state_elimination_are_lookaheads() -> None:
    """Where no regex of bounded size comes out of a region's automaton (BCP 47
    language tags left out of the other names; 250 characters counted), the region
    is written as lookaheads the engine intersects and subtracts: the names are
    still exact."""
    for patterns, declared in (([LANGUAGE_TAG], ["fr"]), (["^[a-z0-9_-]{0,250}$", "^x"], ["id"])):
        found = property_names.regions(patterns, declared)
        assert any("(?!" in region.regex for region in found)
        searches = [re.compile(ecma.python_regex(p)) for p in patterns]
        rng = random.Random(7)
        names = declared + ["", "en-US", "x", "xy", "a" * 250, "a" * 251, "x" * 251, "é", "A", "en-us-"] + [
            "".join(rng.choice("enUS-x_1aé ") for _ in range(rng.randint(0, 12))) for _ in range(500)]
        automata = [(r.matched, build_dfa([parse(f'"{r.regex}"')])) for r in found]
        for name in names:
            spelled = json.dumps(name, ensure_ascii=False).encode()
            hits = [matched for matched, dfa in automata if dfa.matches(spelled)]
            expected = [] if name in declared else [tuple(i for i, s in enumerate(searches) if s.search(name))]
            assert hits == expected, (patterns, name)
    schema = {"additionalProperties": False, "properties": {"fr": {"type": "string"}},
              "patternProperties": {LANGUAGE_TAG: {"type": "string", "minLength": 1}}}
    assert translate(schema)[1].exact
    assert _accepts(schema, {"fr": "Bonjour", "en-US": "Hello"})
    for instance in [{"en-US": ""}, {"en-US": 1}, {"fr": ""}, {"fr": "Bonjour", "es-ES": ""}, {"en_US": "x"}]:
        assert not _accepts(schema, instance), instance


def test_pattern_properties_past_the_limits_still_bound_the_values() -> None:
    """A pattern no automaton reads (a lookbehind): names are not checked then
    (reported), but every extra value must satisfy some pattern's schema or
    additionalProperties, and a declared name still takes the schemas of the
    patterns it matches."""
    schema = {"additionalProperties": False, "properties": {"fr": {"type": "string"}},
              "patternProperties": {"(?<=e)n": {"type": "string", "minLength": 1}}}
    _, report = translate(schema)
    assert {e.keyword for e in report.with_status(APPROXIMATED)} == {"patternProperties", "additionalProperties"}
    assert _accepts(schema, {"fr": "Bonjour", "en": "Hello"})
    for instance in [{"en": ""}, {"en": 1}, {"fr": "Bonjour", "es": ""}]:
        assert not _accepts(schema, instance), instance
    widened = {**schema, "additionalProperties": {"type": "integer"}}
    assert _accepts(widened, {"en": "Hello", "other": 3}) and not _accepts(widened, {"other": None})


def test_keywords_json_schema_does_not_define_are_annotations() -> None:
    _, report = translate({"type": "string", "x-taplo": {"hidden": True}, "note": "n", "$recursiveRef": "#"})
    statuses = {entry.keyword: entry.status for entry in report.entries}
    assert statuses["x-taplo"] == ENFORCED and statuses["note"] == ENFORCED
    assert statuses["$recursiveRef"] == APPROXIMATED


def test_places_no_value_satisfies_drop_out() -> None:
    """An optional property, an anyOf branch or a list type that nothing satisfies is
    left out (Github_easy---o20478: an enum of strings under type array)."""
    schema = {"type": "object", "properties": {"scope": {"type": "array", "enum": ["openid"]}, "f": False,
                                               "n": {"anyOf": [False, {"type": "null"}]}}}
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts("{}") and grammar.accepts('{"n": null}')
    assert not grammar.accepts('{"scope": ["openid"]}') and not grammar.accepts('{"f": 1}')
    assert _accepts({"type": ["integer", "string"], "minimum": 5, "maximum": 4}, "x")
    assert _accepts({"type": "array", "prefixItems": [{"type": "null"}, False]}, [None])
    assert not _accepts({"type": "array", "prefixItems": [{"type": "null"}, False]}, [None, 1])
    with pytest.raises(SchemaError, match="false accepts no value"):
        translate({"type": "object", "properties": {"f": False}, "required": ["f"]})


def test_integers_and_numbers_equal_to_them_in_every_json_dumps_spelling() -> None:
    assert _accepts({"type": "integer", "minimum": 1}, 1.0) and _accepts({"type": "integer"}, -0.0)
    assert not _accepts({"type": "integer"}, 1.5)
    assert not _accepts({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}, 1.0)
    assert _accepts({"enum": [1, "a"]}, 1.0) and _accepts({"const": -2.0}, -2) and _accepts({"const": 0}, -0.0)
    assert _accepts({"const": 1e20}, 1e20) and _accepts({"const": 1e20}, 10**20)
    assert not _accepts({"enum": [1]}, True) and not _accepts({"const": 0}, False)


def test_item_counts_up_to_the_chain_limit() -> None:
    """Item counts are a chain of rules up to ``MAX_ITEMS_CHAIN`` (1,024: MaskBench's
    ``maxItems: 1000`` fits); above it they are reported approximated, the array
    then as long as it likes (``minItems`` counted up to the limit)."""
    from schema2grammar.shared import MAX_ITEMS_CHAIN

    assert MAX_ITEMS_CHAIN == 1024
    counted = Grammar.from_json_schema({"type": "array", "items": {"type": "integer"}, "maxItems": MAX_ITEMS_CHAIN})
    assert counted.report.exact
    assert counted.accepts(json.dumps([1] * MAX_ITEMS_CHAIN)) and not counted.accepts(json.dumps([1] * (MAX_ITEMS_CHAIN + 1)))
    for key in ("maxItems", "minItems"):
        past = Grammar.from_json_schema({"type": "array", "items": {"type": "integer"}, key: MAX_ITEMS_CHAIN + 1})
        notes = [(e.keyword, e.status, e.note) for e in past.report.entries if e.status != ENFORCED]
        assert notes == [(key, APPROXIMATED, "item counts above 1024 are not enforced")], notes
        assert past.accepts(json.dumps([1] * (MAX_ITEMS_CHAIN + 2))) and past.accepts(json.dumps([1] * MAX_ITEMS_CHAIN))
    assert not past.accepts(json.dumps([1] * (MAX_ITEMS_CHAIN - 1)))  # minItems counted up to the limit


def test_counts_written_as_floats() -> None:
    assert _accepts({"type": "array", "maxItems": 2.0}, [1, 2]) and not _accepts({"maxItems": 2.0}, [1, 2, 3])
    with pytest.raises(SchemaError, match="maxLength must be a non-negative integer"):
        translate({"type": "string", "maxLength": 1.5})


def test_pattern_properties_are_enforced_exactly() -> None:
    """A name matching a pattern takes its schema (all of them when several match,
    a declared name's own too); a name matching none takes additionalProperties."""
    schema = {"properties": {"name": {"type": "string"}, "x-id": {"minimum": 0}},
              "patternProperties": {"^x-": {"type": "integer"}, "[0-9]$": {"type": "integer", "maximum": 5}},
              "additionalProperties": {"type": "boolean"}, "required": ["name"]}
    grammar = Grammar.from_json_schema(schema)
    valid = [{"name": "a"}, {"name": "a", "x-b": 7}, {"name": "a", "y": True}, {"name": "a", "y1": 4},
             {"name": "a", "x-1": 3}, {"name": "a", "x-id": 2}, {"name": "a", "é9": 0, "ü": False},
             {"name": "a", 'q"1': 2, "a\\b": True, "x-\n": 1, "\x01": False, "/": True}]
    invalid = [{"name": "a", "x-b": "s"}, {"name": "a", "y": 1}, {"name": "a", "y1": 6}, {"name": "a", "x-1": 9},
               {"name": "a", "x-id": "s"}, {"name": "a", "x-id": -1}, {"name": "a", "é9": True},
               {"name": "a", 'q"1': True}, {"name": "a", "a\\b": 1}, {"name": "a", "x-\n": True}, {"name": "a", "\x01": 1}]
    for instance in valid:
        assert grammar.accepts(json.dumps(instance, ensure_ascii=False)), instance
    for instance in invalid:
        assert not grammar.accepts(json.dumps(instance, ensure_ascii=False)), instance
    statuses = {(e.keyword, e.status) for e in grammar.report.entries if e.pointer == ""}
    assert ("patternProperties", ENFORCED) in statuses and ("additionalProperties", ENFORCED) in statuses


def test_one_pattern_alone_takes_its_names_as_a_string_pattern_would() -> None:
    """One pattern, no declared name, no other names allowed: the names are the
    pattern's strings, with no automaton (a 255-character count made the automaton's
    regex pass its limit: Github o6201)."""
    schema = {"type": "object", "patternProperties": {"^[0-9a-z_-]{1,255}$": {"type": "integer"}},
              "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, str(grammar.report)
    assert grammar.accepts('{"a_1": 1, "' + "b" * 255 + '": 2}') and grammar.accepts("{}")
    for refused in ('{"A": 1}', '{"a": "x"}', '{"' + "b" * 256 + '": 2}', '{"": 1}'):
        assert not grammar.accepts(refused), refused


def test_pattern_properties_with_additional_properties_false() -> None:
    schema = {"properties": {"a": {}}, "patternProperties": {"^v": {"type": "integer"}}, "additionalProperties": False}
    assert _accepts(schema, {"a": 1, "vroom": 2, "v": 3})
    assert not _accepts(schema, {"a": 1, "wroom": 2}) and not _accepts(schema, {"vroom": "2"})


PROPERTY_NAMES_CASES: list[tuple[str, dict[str, Any], list[Any], list[Any]]] = [
    ("not const", {"type": "object", "propertyNames": {"not": {"const": "0"}}},  # SchemaStore's most common form
     [{}, {"a": 1}, {"00": 2, "": 3}], [{"0": 1}, {"a": 1, "0": 2}]),
    ("pattern and length beside declared names",
     {"properties": {"abcd": {}, "ab": {"type": "integer"}}, "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}},
     [{"ab": 1, "x": 2}, {"ab": 1}, {"xyz": None}], [{"abcd": 1}, {"ab": "s"}, {"X": 1}, {"ab": 1, "wxyz": 1}, {"": 1}]),
    ("false", {"type": "object", "propertyNames": False}, [{}], [{"a": 1}, {"": 1}]),
    ("enum beside additionalProperties", {"propertyNames": {"enum": ["a", "b", 3]}, "additionalProperties": {"type": "integer"}},
     [{"a": 1, "b": 2}, {}], [{"c": 1}, {"a": "x"}, {"3": 1}]),
    ("beside patternProperties", {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False,
                                  "propertyNames": {"maxLength": 3}},
     [{"x-a": 1}, {}], [{"x-ab": 1}, {"y": 1}, {"x-a": "s"}]),
    ("through $ref", {"$defs": {"lower": {"type": "string", "pattern": "^[a-z]*$"}}, "propertyNames": {"$ref": "#/$defs/lower"}},
     [{"abc": [1]}, {"": 0}], [{"aB": 1}]),
    ("anyOf and oneOf", {"propertyNames": {"oneOf": [{"pattern": "^a"}, {"pattern": "b$"}], "anyOf": [{"minLength": 2}]}},
     [{"ax": 1, "xb": 2}], [{"ab": 1}, {"a": 1}, {"xx": 1}]),
    ("a dependency on a refused name", {"properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["zz"]},
                                        "propertyNames": {"maxLength": 1}},
     [{"b": 1}, {}], [{"a": 1}, {"a": 1, "zz": 2}]),
    ("allOf merges them", {"allOf": [{"propertyNames": {"maxLength": 2}}, {"propertyNames": {"pattern": "^a"}}]},
     [{"ab": 1}, {"a": 2}], [{"abc": 1}, {"b": 1}]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), PROPERTY_NAMES_CASES,
                         ids=[case[0] for case in PROPERTY_NAMES_CASES])
def test_property_names_are_enforced_exactly(name: str, schema: dict[str, Any], valid: list[Any],
                                             invalid: list[Any]) -> None:
    agrees(schema, valid, invalid)


def test_property_names_that_refuse_a_required_name() -> None:
    with pytest.raises(SchemaError, match="required property 'long' is a name propertyNames refuses"):
        translate({"type": "object", "required": ["long"], "propertyNames": {"maxLength": 2}})
    with pytest.raises(SchemaError, match=r"required property 'a' needs a property whose name propertyNames refuses \(dependentRequired\)"):
        translate({"type": "object", "required": ["a"], "dependentRequired": {"a": ["long"]}, "propertyNames": {"maxLength": 2}})
    # an object is one type of several: the others stay
    assert _accepts({"type": ["object", "null"], "required": ["long"], "propertyNames": {"maxLength": 2}}, None)


def test_property_names_not_read_are_reported() -> None:
    """A format the draft asserts, or a pattern no automaton spells: the names are
    free (reported); declared names are still judged where the set can be read."""
    for names, note in (({"format": "email"}, "format 'email'"), ({"pattern": "y(?!x)"}, "not enforced")):
        schema = {"type": "object", "propertyNames": names}
        entries = [e for e in translate(schema)[1].entries if e.keyword == "propertyNames"]
        assert [e.status for e in entries] == [APPROXIMATED] and note in entries[0].note, entries
        assert _accepts(schema, {"a@b.co": 1}) and _accepts(schema, {"x": 1})
    modern = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "propertyNames": {"format": "email"}}  # an annotation in 2020-12: every name
    assert translate(modern)[1].exact and _accepts(modern, {"x": 1})
    wide = {"type": "object", "properties": {"LONG": {}}, "propertyNames": {"pattern": "^[a-z]{1,2500}$"}}  # 2,500 states
    entries = [e for e in translate(wide)[1].entries if e.keyword == "propertyNames"]
    assert [e.status for e in entries] == [APPROXIMATED] and "extra names not" in entries[0].note, entries
    assert not _accepts(wide, {"LONG": 1}) and _accepts(wide, {"long": 1}) and _accepts(wide, {"X": 1})


NAME_SCHEMAS: list[Any] = [{"pattern": "^a"}, {"maxLength": 1}, {"not": {"const": "b"}}, {"enum": ["a", "b1", "é"]},
                           {"not": {"pattern": "1"}}, {"anyOf": [{"const": "b"}, {"minLength": 2}]}, False, True]
NAMES = ["a", "b", "b1", "ab", "é", ""]


def test_random_property_names_agree_with_jsonschema() -> None:
    """Random names schemas beside declared names, patterns and additionalProperties:
    the grammar is exact, and accepts what jsonschema finds valid (instances with
    the declared names first, in their order)."""
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        declared = rng.sample(NAMES, rng.randint(0, 2))
        schema: dict[str, Any] = {"type": "object", "properties": {name: {"type": "integer"} for name in declared},
                                  "propertyNames": rng.choice(NAME_SCHEMAS)}
        if rng.random() < 0.4:
            schema["patternProperties"] = {"^b": {"type": "integer", "minimum": 1}}
        if rng.random() < 0.5:
            schema["additionalProperties"] = rng.choice([False, {"type": "integer"}])
        try:
            grammar = Grammar.from_json_schema(schema)
        except SchemaError:
            continue
        assert grammar.report.exact, (schema, str(grammar.report))
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(40):
            names = [n for n in declared if rng.random() < 0.5] + rng.sample([n for n in NAMES if n not in declared], 2)
            instance = {name: rng.choice([0, 2, "s"]) for name in names if rng.random() < 0.6}
            accepted = grammar.accepts(json.dumps(instance, ensure_ascii=False))
            assert accepted == validator.is_valid(instance), (schema, instance)
            checked += 1
    assert checked > 1500


def test_required_names_take_the_schemas_of_the_patterns_they_match() -> None:
    schema = {"required": ["x-a", "b"], "patternProperties": {"^x-": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    assert _accepts(schema, {"x-a": 1, "b": "s"})
    assert not _accepts(schema, {"x-a": "1", "b": "s"}) and not _accepts(schema, {"x-a": 1, "b": 2})
    closed = {"type": "object", "required": ["b"], "patternProperties": {"^x-": {}}, "additionalProperties": False}
    with pytest.raises(SchemaError, match="required property 'b' is not allowed"):
        Grammar.from_json_schema(closed)


def test_pattern_properties_beyond_an_automaton_are_approximated() -> None:
    """A lookahead other than at the start has no automaton: the names are not told
    apart, and the report says so; the values still satisfy some pattern's schema."""
    schema = {"patternProperties": {"y?(?!x)": {"type": "integer"}}, "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts('{"y": 1}') and not grammar.accepts('{"y": "anything"}')
    assert grammar.accepts('{"x": 1}')  # the approximation: "x" matches no pattern
    statuses = {(e.keyword, e.status) for e in grammar.report.entries}
    assert ("additionalProperties", APPROXIMATED) in statuses and ("patternProperties", APPROXIMATED) in statuses
    with pytest.raises(SchemaError, match="patternProperties"):
        Grammar.from_json_schema(schema, strict=True)


def test_required_undeclared_names_in_the_order_required_lists_them() -> None:
    assert _accepts({"required": ["foo", "bar"]}, {"foo": 1, "bar": 2})
    assert _accepts({"required": ["foo\nbar", 'q"uote']}, {"foo\nbar": 1, 'q"uote': 2})


def test_declared_order_follows_the_schema_text_through_combinators() -> None:
    """The declared order is the order the schema is written in: a combinator
    written before ``properties`` declares its branches' new properties first
    (Github o89710: ``allOf: [{oneOf: [...]}, {properties}]``; o67449: an ``allOf``
    nested in an ``allOf``); written after, the schema's own come first."""
    branches = [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {}}, "required": ["b"]}]
    branch_first = {"allOf": [{"oneOf": branches}, {"properties": {"c": {}}, "required": ["c"]}]}
    assert _accepts(branch_first, {"a": 1, "c": 2}) and _accepts(branch_first, {"b": 1, "c": 2})
    assert not _accepts(branch_first, {"c": 2, "a": 1})
    own_first = {"properties": {"c": {}}, "required": ["c"], "anyOf": branches}
    assert _accepts(own_first, {"c": 2, "a": 1}) and not _accepts(own_first, {"a": 1, "c": 2})
    nested = {"allOf": [{"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}, {"properties": {"c": {}}}]}
    assert _accepts(nested, {"a": 1, "b": 2, "c": 3}) and not _accepts(nested, {"c": 3, "a": 1})
    with_own = {"allOf": [{"oneOf": [{"properties": {"a": {}}, "required": ["a"]}]}, {"properties": {"c": {}}}],
                "properties": {"d": {}}}
    assert _accepts(with_own, {"a": 1, "c": 2, "d": 3}) and not _accepts(with_own, {"c": 2, "d": 3, "a": 1})
    merged_after = {"properties": {"c": {}}, "allOf": [{"properties": {"a": {}}}]}
    assert _accepts(merged_after, {"c": 1, "a": 2}) and not _accepts(merged_after, {"a": 2, "c": 1})
    # o10011: a oneOf written first that only narrows declared properties keeps their order
    narrowing = {"oneOf": [{"properties": {"b": {"enum": [1]}}}, {"properties": {"b": {"enum": [2]}}}],
                 "properties": {"a": {}, "b": {}}}
    assert _accepts(narrowing, {"a": 0, "b": 1}) and not _accepts(narrowing, {"b": 1, "a": 0})
    assert not _accepts(narrowing, {"a": 0, "b": 3})


def test_a_combinator_between_parts_declares_its_names_in_its_place() -> None:
    """The merge keeps an ``anyOf``/``oneOf`` aside while its branches are built,
    yet the text's order puts their names where the combinator is written: before
    the names of later parts (``LATER``), within a part's nested ``allOf``
    (Github o90832: ``allOf: [$ref, $ref to allOf [.., oneOf], {value}]``), and after
    the names written before it in its own part, ahead of the schema's own written
    after the ``allOf`` (SchemaStore testenvironments: ``type``, ``dockerImage``, ``name``)."""
    between = {"allOf": [{"properties": {"a": {}}}, {"oneOf": [{"properties": {"u": {}}, "required": ["u"]},
                                                               {"properties": {"w": {}}, "required": ["w"]}]},
                         {"properties": {"v": {}}}]}
    assert _accepts(between, {"a": 1, "u": 2, "v": 3}) and _accepts(between, {"a": 1, "w": 2, "v": 3})
    assert not _accepts(between, {"a": 1, "v": 3, "u": 2})
    described = {"allOf": [{"properties": {"typeId": {}, "class": {}}},
                           {"oneOf": [{"properties": {"typeId": {"enum": ["i32"]}}, "required": ["typeId"]},
                                      {"properties": {"typeId": {"enum": ["map"]}, "keyTypeId": {}},
                                       "required": ["typeId", "keyTypeId"]}]}]}
    constant = {"$defs": {"doc": {"properties": {"name": {}, "doc": {}}}, "type": described},
                "allOf": [{"$ref": "#/$defs/doc"}, {"$ref": "#/$defs/type"}, {"properties": {"value": {}}, "required": ["value"]}]}
    assert _accepts(constant, {"name": "PI", "typeId": "i32", "value": 3})
    assert _accepts(constant, {"name": "m", "typeId": "map", "keyTypeId": "i32", "value": {}})
    assert not _accepts(constant, {"name": "PI", "value": 3, "typeId": "i32"})
    docker = {"properties": {"type": {"enum": ["docker"]}},
              "oneOf": [{"required": ["image"], "properties": {"image": {"type": "string"}}},
                        {"required": ["file"], "properties": {"file": {"type": "string"}}}]}
    config = {"required": ["name", "type"], "oneOf": [docker, {"properties": {"type": {"enum": ["wsl"]}}}],
              "properties": {"name": {"type": "string"}}}
    assert _accepts(config, {"type": "docker", "image": "u", "name": "d"})
    assert not _accepts(config, {"image": "u", "type": "docker", "name": "d"})
    assert not _accepts(config, {"type": "docker", "image": "u", "file": "f", "name": "d"})  # still exactly one


def test_references_by_escaped_pointer_and_by_anchor() -> None:
    schema = {"$defs": {"a%b": {"type": "integer"}, 'q"t': {"type": "null"}, "x": {"$anchor": "thing", "type": "string"}},
              "properties": {"p": {"$ref": "#/$defs/a%25b"}, "q": {"$ref": "#/$defs/q%22t"}, "s": {"$ref": "#thing"}}}
    assert _accepts(schema, {"p": 1, "q": None, "s": "x"}) and not _accepts(schema, {"p": "1"})
    draft7 = {"definitions": {"x": {"$id": "#foo", "type": "integer"}}, "$ref": "#foo"}
    assert _accepts(draft7, 3) and not _accepts(draft7, "3")
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#",  # Github o35905: draft 4 spells it "id"
              "definitions": {"p": {"id": "#priority", "type": "integer", "minimum": 0}},
              "properties": {"p": {"$ref": "#priority"}, "id": {"type": "string"}}}
    assert _accepts(draft4, {"p": 0, "id": "x"}) and not _accepts(draft4, {"p": -1})


def test_quotes_in_literals_survive_lark() -> None:
    """Lark reads a regex's ``\\\\"`` as ``\\"``: enum strings and keys with quotes
    and backslashes must still be spelled as json.dumps spells them."""
    schema = {"type": "object", "properties": {'k"\\': {"enum": ['a"b', "c\\"]}}, "additionalProperties": False}
    assert _accepts(schema, {'k"\\': 'a"b'}) and _accepts(schema, {'k"\\': "c\\"})
    assert not _accepts(schema, {'k"\\': "ab"})


@pytest.mark.parametrize(
    ("pattern", "matching", "other"),
    [
        ("^[a-z]+$", ["abc"], ["", "aBc", "ab1"]),
        ("a+", ["xax", "a"], ["b", ""]),
        (r"^\d{3}-\d{4}$", ["123-4567"], ["12-4567", "\u0661\u0662\u0663-4567"]),  # ECMA's \d is ASCII
        ('^"\\\\', ['"\\x'], ["x"]),
        ("^.$", ["é", "x"], ["\n", "ab"]),
        ("^[^a]*$", ["bcd", '"\n'], ["bad"]),
        (r"^v\d+(\.\d+){0,2}$", ["v1.2.3"], ["v1.2.3.4"]),
        ("^[\\]\\-]$", ["]", "-"], ["x"]),
        ("x{2}y{", ["xxy{"], ["xy{"]),
    ],
)
def test_patterns_are_ecma_searches_over_the_decoded_string(pattern: str, matching: list[str], other: list[str]) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "pattern": pattern})
    assert grammar.report.exact, str(grammar.report)
    for text in matching:
        assert grammar.accepts(json.dumps(text, ensure_ascii=False)), text
    for text in other:
        assert not grammar.accepts(json.dumps(text, ensure_ascii=False)), text


@pytest.mark.parametrize("pattern", [
    "^$|(^(?:\\S+\\s+){0,3}\\S+$)", "(^[0-9]+\\.[0-9]+$)", "(^gs://(.+))|(^http://(.+))", "(^a|b)c", "(a$|b)c",
    "x(^|y)z", "(a|^)(b|$)", "^(a$)", "(?:^ab)|cd$", "a$|^b",
])
def test_anchors_anywhere_in_a_pattern_as_python_reads_them(pattern: str) -> None:
    """``^`` holds where nothing was matched before it, ``$`` where nothing follows:
    the grammar agrees with ``re.search`` (``ecma.python_regex``: \\A and \\Z) on
    every string of up to four characters over a small alphabet, and on a few more."""
    grammar = Grammar.from_json_schema({"type": "string", "pattern": pattern})
    assert grammar.report.exact, str(grammar.report)
    regex = re.compile(ecma.python_regex(pattern))
    texts = ["".join(letters) for n in range(5) for letters in itertools.product("abcxyz.1 ", repeat=min(n, 2))]
    texts += ["gs://b/f", "http://e.com", "ftp://x", "1.0", "1.0.0", "a b c d", "a b c d e", "xz", "xyz", "ab", "cd", "abc"]
    for text in texts:
        assert grammar.accepts(json.dumps(text)) == (regex.search(text) is not None), (pattern, text)


def test_anchors_combine_within_a_limit() -> None:
    """Alternatives without anchors are one way however many; anchored ones are a
    way each, up to ``ecma.MAX_ANCHORED``."""
    many = "|".join(f"k{i}" for i in range(200))
    assert Grammar.from_json_schema({"type": "string", "pattern": f"^({many})$"}).report.exact
    within = "|".join(f"^k{i}" for i in range(ecma.MAX_ANCHORED))
    assert Grammar.from_json_schema({"type": "string", "pattern": within}).report.exact
    past = "|".join(f"^k{i}" for i in range(ecma.MAX_ANCHORED + 1))
    report = Grammar.from_json_schema({"type": "string", "pattern": past}).report
    assert [(e.keyword, e.status) for e in report.entries if e.keyword == "pattern"] == [("pattern", APPROXIMATED)]


@pytest.mark.parametrize("pattern", ["(?=a)", "\\bword", "(a)\\1", "\\p{L}", "a^b", "(^a)+"])
def test_patterns_no_automaton_expresses_are_approximated(pattern: str) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "pattern": pattern})
    assert [e.keyword for e in grammar.report.with_status(APPROXIMATED)] == ["pattern"]
    assert grammar.accepts('"anything"')


def test_values_nested_past_pythons_stack_are_schema_errors() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    for schema, message in ((json.dumps({"const": 1}).replace("1", "[" * 5000 + "]" * 5000), "JSON nests values"),
                            ({"const": deep}, "nests values too deeply"), ({"enum": [1, deep]}, "nests values too deeply")):
        with pytest.raises(SchemaError, match=message):
            translate(schema)


def test_group_nesting_limit_of_a_pattern() -> None:
    """``ecma.MAX_GROUP_DEPTH`` groups nested: read; one more (or thousands, which
    overflowed Python's stack): approximated, wherever the pattern is."""
    at_limit = "(?:" * ecma.MAX_GROUP_DEPTH + "a" + ")" * ecma.MAX_GROUP_DEPTH
    deeper = "(?:" * 5000 + "a" + ")" * 5000
    for pattern, exact in ((at_limit, True), ("(" + at_limit + ")", False), (deeper, False)):
        for schema in ({"type": "string", "pattern": pattern}, {"type": "object", "propertyNames": {"pattern": pattern}},
                       {"type": "string", "not": {"pattern": pattern}},
                       {"type": "object", "patternProperties": {pattern: {}}, "additionalProperties": False}):
            report = translate(schema)[1]
            assert report.exact == exact, (schema, str(report))
            assert exact or any(f"nested more than {ecma.MAX_GROUP_DEPTH} deep" in e.note for e in report.entries)


ALL_OF_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("annotations disagree", {"allOf": [{"type": "string", "help": "a", "x-a": 1}, {"help": "b", "maxLength": 3}]},
     ["abc"], ["abcd", 1]),
    ("numbers' bounds", {"allOf": [{"type": "integer", "minimum": 1, "maximum": 10}, {"minimum": 3, "maximum": 20}]},
     [3, 10], [2, 11]),
    ("exclusive bounds", {"allOf": [{"type": "number", "exclusiveMinimum": 1}, {"exclusiveMinimum": 2.5}]}, [2.6], [2.5, 2]),
    ("lengths and counts", {"allOf": [{"type": ["string", "array"], "minLength": 1, "maxLength": 5, "maxItems": 1},
                                      {"minLength": 2, "maxLength": 3, "maxItems": 2}]},
     ["ab", "abc", [1], []], ["a", "abcd", [1, 2]]),
    ("multipleOf", {"allOf": [{"type": "integer", "multipleOf": 2}, {"multipleOf": 5}]}, [0, 10, -20], [2, 5, 4]),
    ("decimal multipleOf", {"type": "number", "allOf": [{"multipleOf": 0.5}, {"multipleOf": 0.2}]}, [1, 2, 3.0], [0.5, 0.2, 1.5]),
    ("anyOf and anyOf", {"allOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]},
                                   {"anyOf": [{"type": "string", "minLength": 2}, {"type": "integer", "minimum": 5}]}]},
     ["ab", 7], ["a", 3, None]),
    ("two patterns", {"allOf": [{"type": "string", "pattern": "^a|c"}, {"pattern": "b$"}]},
     ["ab", "axb", "xcb", "acb"], ["a", "b", "ba", "bc", 5]),
    ("oneOf and oneOf", {"allOf": [{"oneOf": [{"type": "integer"}, {"type": "string"}]},
                                   {"oneOf": [{"const": 1}, {"const": "x"}, {"type": "boolean"}]}]},
     [1, "x"], [2, "y", True]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), ALL_OF_CASES, ids=[case[0] for case in ALL_OF_CASES])
def test_all_of_parts_that_disagree_merge_exactly(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """Annotations, tighter bounds, common multiples, and two combinators' pairs."""
    agrees(schema, valid, invalid)


def test_all_of_merges_that_stay_approximated() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#",
              "allOf": [{"type": "number", "minimum": 1, "exclusiveMinimum": True}, {"minimum": 2}]}
    many = {"allOf": [{"anyOf": [{"const": i} for i in range(9)]}, {"anyOf": [{"const": i} for i in range(8)]}]}
    assert 9 * 8 > MAX_DISTRIBUTED
    looking = {"allOf": [{"type": "string", "pattern": "^(?!ab)a"}, {"pattern": "b$"}]}  # a lookahead: not merged
    for schema in (draft4, many, looking):
        statuses = [e.status for e in translate(schema)[1].entries if e.keyword == "allOf"]
        assert statuses == [APPROXIMATED], (schema, statuses)


def test_all_of_additional_properties_judges_other_parts_names() -> None:
    """In the part with additionalProperties, a name another part declares is an
    extra one: the merge gives it that schema too (or the schemas of that part's
    patterns that find it). Other parts' patterns are left to them (approximated)."""
    schema = {"allOf": [{"properties": {"a": {}, "c": {}}}, {"properties": {"b": {}}, "additionalProperties": False,
                                                             "patternProperties": {"^c": {"type": "integer"}}}]}
    _agrees(schema, [{}, {"b": 1}, {"a": 1}, {"c": 1}, {"c": "s"}, {"a": 1, "b": 2}, {"b": 1, "x": 2}])
    required = {"required": ["a"], "allOf": [{"properties": {"a": {}}}, {"additionalProperties": {"type": "string"}}]}
    _agrees(required, [{"a": "s"}, {"a": 1}, {}, {"a": "s", "x": "t"}, {"a": "s", "x": 1}])
    both = {"allOf": [{"properties": {"a": {"type": "integer"}}, "additionalProperties": {"minimum": 0}},
                      {"properties": {"b": {}}, "additionalProperties": {"maximum": 5}}]}
    _agrees(both, [{"a": -1}, {"a": 9}, {"a": 3, "b": -1}, {"a": 3, "b": 9}, {"x": 3}, {"x": -1}, {"x": 6}])
    patterned = {"allOf": [{"patternProperties": {"^a": {}}}, {"properties": {"b": {}}, "additionalProperties": False}]}
    grammar = Grammar.from_json_schema(patterned)
    assert ("allOf", APPROXIMATED) in {(e.keyword, e.status) for e in grammar.report.entries}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#",
              "allOf": [{"items": [{"type": "integer"}]}], "additionalItems": {"type": "boolean"}}
    assert _accepts(draft7, [1, None])  # additionalItems beside no tuple of its own does nothing


def test_deep_nesting_is_a_clear_error() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(300):
        schema = {"type": "array", "items": schema}
    with pytest.raises(SchemaError, match="nests more than"):
        translate(schema)


# -- review of the conformance commit: each a reproducer of a bug


def _approximated(schema: Any) -> set[str]:
    return {e.keyword for e in Grammar.from_json_schema(schema).report.with_status(APPROXIMATED)}


def test_all_of_parts_declaring_one_property_keep_both_schemas() -> None:
    schema = {"allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"a": {"maxLength": 2}}}]}
    assert _accepts(schema, {"a": "xy"})
    assert not _accepts(schema, {"a": 5}) and not _accepts(schema, {"a": "xyz"})


@pytest.mark.parametrize(("schema", "valid", "invalid"), [
    ({"enum": ["a", "bbbb"], "maxLength": 2}, "a", "bbbb"),
    ({"enum": [1, "a"], "anyOf": [{"type": "string"}]}, "a", 1),
])
def test_keywords_beside_enum_or_const_judge_the_listed_values(schema: dict[str, Any], valid: Any, invalid: Any) -> None:
    """The grammar lists the constants that the keywords beside them accept; a const
    they refuse leaves no value."""
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(valid) and not validator.is_valid(invalid)
    assert _accepts(schema, valid) and not _accepts(schema, invalid) and not _approximated(schema)
    with pytest.raises(SchemaError, match="#: no value of const satisfies the schema"):
        translate({"const": "abc", "pattern": "^x"})


@pytest.mark.parametrize("schema", [
    {"type": "string", "maxLength": 10**400}, {"type": "array", "minItems": 10**400},
    json.loads('{"type": "integer", "minimum": -1e400}'), json.loads('{"type": "integer", "maximum": NaN}'),
    {"type": "integer", "minimum": 10**400},
])
def test_huge_or_non_finite_numbers_in_a_schema_are_clear(schema: dict[str, Any]) -> None:
    try:
        Grammar.from_json_schema(schema)
    except SchemaError as exc:
        assert "#" in str(exc)


def test_unbounded_integer_minimum_from_minus_infinity() -> None:
    assert _accepts(json.loads('{"type": "integer", "minimum": -1e400}'), -5)


def test_required_name_a_pattern_property_allows_is_satisfiable() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False, "required": ["xa"]}
    assert _accepts(schema, {"xa": 1})


def test_date_time_needs_t_between_date_and_time() -> None:
    schema = {"type": "string", "format": "date-time"}
    assert _accepts(schema, "2020-01-01T10:00:00Z") and _accepts(schema, "2020-01-01t10:00:00z")
    assert not _accepts(schema, "2020-01-01 10:00:00Z")


def test_integers_as_json_dumps_writes_large_floats() -> None:
    """json.dumps(1e16) is ``1e+16``: an integer (draft 6 on) that a schema allowing it must accept."""
    for schema, instance in [({"type": "integer"}, 1e16), ({"type": "integer"}, -1.2345e30),
                             ({"type": "integer", "minimum": 0}, 1e20), ({"const": 10**20}, 1e20)]:
        assert _accepts(schema, instance), (schema, instance)
    for schema, instance in [({"type": "integer", "maximum": 10}, 1e20), ({"type": "integer", "minimum": 0}, -1e20)]:
        assert not _accepts(schema, instance), (schema, instance)
    assert not _accepts({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}, 1e16)


def test_code_point_escapes_in_patterns_mean_the_code_point() -> None:
    """With the ``u`` flag JSON Schema asks for, ``\\u{1F600}`` is one character, not ``u`` repeated."""
    schema = {"type": "string", "pattern": "^\\u{1F600}\\u{41}$"}
    assert _accepts(schema, "\U0001f600A") and not _accepts(schema, "u" * 41)


def test_date_format_knows_month_lengths_and_leap_years() -> None:
    """The grammar's `date` is RFC 3339's full-date, years 0001-9999: compared with
    the calendar on every month/day of leap and common years; year 0000 refused."""
    import calendar

    grammar = Grammar.from_json_schema({"type": "string", "format": "date"})
    for year in (0, 1, 400, 1900, 2000, 2023, 2024, 2100, 9996):
        for month in range(0, 14):
            for day in range(0, 33):
                real = year > 0 and 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]
                text = json.dumps(f"{year:04d}-{month:02d}-{day:02d}")
                assert grammar.accepts(text) == real, text


LAYOUT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "inner": {"type": "object", "properties": {"x": {"type": "integer"}, "empty": {"type": "object"}}},
    },
}
LAYOUT_VALUE = {"name": "a b", "tags": ["x", "y"], "inner": {"x": 1, "empty": {}}}


@pytest.mark.parametrize("indent", [0, 2, 4])
def test_indent_accepts_json_dumps_with_that_indent(indent: int) -> None:
    grammar = Grammar.from_json_schema(LAYOUT_SCHEMA, indent=indent)
    assert grammar.accepts(json.dumps(LAYOUT_VALUE, indent=indent))
    assert grammar.accepts(json.dumps({"tags": [], "inner": {}}, indent=indent))
    other = 3 if indent != 3 else 2
    assert not grammar.accepts(json.dumps(LAYOUT_VALUE, indent=other)) or indent == 0
    assert not grammar.accepts(json.dumps(LAYOUT_VALUE))  # ", " on one line is not this layout


@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":"), (" , ", " :\n")])
def test_separators_are_exact(separators: tuple[str, str]) -> None:
    grammar = Grammar.from_json_schema(LAYOUT_SCHEMA, separators=separators)
    assert grammar.accepts(json.dumps(LAYOUT_VALUE, separators=separators))
    for others in [(", ", ": "), (",", ":"), (" , ", " :\n")]:
        if others != separators:
            assert not grammar.accepts(json.dumps(LAYOUT_VALUE, separators=others))
    assert not grammar.accepts(json.dumps(LAYOUT_VALUE, indent=2, separators=separators))


def test_indent_with_separators_and_bad_layouts() -> None:
    grammar = Grammar.from_json_schema(LAYOUT_SCHEMA, indent=2, separators=(",", ":"))
    assert grammar.accepts(json.dumps(LAYOUT_VALUE, indent=2, separators=(",", ":")))
    assert not grammar.accepts(json.dumps(LAYOUT_VALUE, indent=2))  # ": " is not ":"
    for bad in ({"separators": (";", ":")}, {"separators": (",",)}, {"indent": -1}, {"indent": 17}):
        with pytest.raises(ValueError, match="separators|indent"):
            Grammar.from_json_schema(LAYOUT_SCHEMA, **bad)


def test_unicode_escapes_are_whole_characters() -> None:
    """A surrogate escape only as a high-low pair (one character for maxLength); a
    lone one is not text, and Pydantic refuses it."""
    grammar = Grammar.from_json_schema({"type": "string", "maxLength": 1})
    assert grammar.accepts('"\\ud83d\\ude00"')  # 😀 as a pair: one character
    assert grammar.accepts('"\\u00e9"')
    for lone in ('"\\ud83d"', '"\\ude00"', '"\\ude00\\ud83d"', '"\\ud83dx"'):
        assert not grammar.accepts(lone), lone
    assert Grammar.from_json_schema({"type": "string", "pattern": "a"}).accepts('"\\ud83d\\ude00a"')
    assert not Grammar.from_json_schema({"type": "string", "pattern": "a"}).accepts('"\\ud83da"')


def test_pydantic_grammars_leave_out_what_pydantic_cannot_read() -> None:
    """from_pydantic: integers as digits, no leap second; the draft's semantics keep both."""

    class Stamp(pydantic.BaseModel):
        n: int
        at: datetime.datetime

    leap = '{"n": 1, "at": "1998-12-31T23:59:60Z"}'
    big = '{"n": 1e+20, "at": "1998-12-31T23:59:59Z"}'
    grammar = Grammar.from_pydantic(Stamp)
    assert grammar.accepts('{"n": 1, "at": "1998-12-31T23:59:59Z"}')
    assert not grammar.accepts(leap) and not grammar.accepts(big)
    plain = draft_grammar(Stamp.model_json_schema())
    assert plain.accepts(leap) and plain.accepts(big)
    assert not Grammar.from_json_schema(Stamp.model_json_schema()).accepts(big)  # readable numbers by default


def test_format_is_an_annotation_where_the_draft_says_so() -> None:
    """Drafts 2019-09 and 2020-12 only annotate with ``format``; earlier drafts, and
    schemas that name no draft, check it; ``format_assertion`` decides either way.
    Generating, the annotation is asserted too (``format_annotations``), and the
    report says so: a generated date is a date whatever the draft."""
    date = {"type": "string", "format": "date"}
    new = {"$schema": "https://json-schema.org/draft/2020-12/schema", **date}
    old = {"$schema": "http://json-schema.org/draft-07/schema#", **date}
    assert Grammar.from_json_schema(new, format_annotations="ignored").accepts('"not a date"')
    asserted = Grammar.from_json_schema(new)
    assert not asserted.accepts('"not a date"') and asserted.accepts('"2024-02-29"')
    [note] = [e.note for e in asserted.report.entries if e.keyword == "format"]
    assert note.endswith("asserted: an annotation in this draft (format_annotations='ignored' leaves it unchecked)")
    assert not Grammar.from_json_schema(new, format_assertion=True).accepts('"not a date"')
    assert Grammar.from_json_schema(new, format_assertion=False).accepts('"not a date"')
    assert not Grammar.from_json_schema(old).accepts('"not a date"') and not _accepts(date, "not a date")
    assert Grammar.from_json_schema(old, format_assertion=False).accepts('"not a date"')
    assert all(_accepts(s, "2024-02-29") for s in (date, new, old))


def test_items_beside_a_tuple_from_another_allof_part() -> None:
    """``items`` applies after its own schema's ``prefixItems`` only (here, to every
    item): merged with another part's tuple, the tuple's positions take it too (and
    two minimums, the larger)."""
    schema = {"allOf": [{"prefixItems": [{"minimum": 3}]}], "items": {"minimum": 5}}
    agrees(schema, [[5, 5], [], [7]], [[3, 5], [5, 4], [4]])


def test_an_anchor_belongs_to_its_own_resource() -> None:
    """``#bigint`` names the anchor of the root resource, not the one inside a
    subschema with an ``$id`` of its own."""
    schema = {"$id": "https://example.com/base.json", "$ref": "#bigint", "$defs": {
        "bigint": {"$anchor": "bigint", "maximum": 10},
        "smallint": {"$id": "https://example.com/other/", "$anchor": "bigint", "maximum": 2}}}
    assert _accepts(schema, 5) and not _accepts(schema, 50)


# -- whole-object keywords: property counts and dependencies


def _agrees(schema: dict[str, Any], instances: list[Any]) -> None:
    """The grammar accepts exactly the instances jsonschema finds valid (each
    written with its keys in the order given), and says it is exact."""
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, str(grammar.report)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for instance in instances:
        assert grammar.accepts(json.dumps(instance)) == validator.is_valid(instance), instance


def _statuses(schema: Any, keyword: str) -> list[str]:
    return [e.status for e in Grammar.from_json_schema(schema).report.entries if e.keyword == keyword]


def test_property_counts_count_declared_and_extra_properties() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {"type": "integer"}, "c": {}},
              "additionalProperties": {"type": "string"}, "minProperties": 2, "maxProperties": 3}
    _agrees(schema, [{}, {"a": 1}, {"x": "s"}, {"a": 1, "b": 2}, {"c": 1, "x": "s"}, {"x": "s", "y": "t"},
                     {"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 3, "x": "s"}, {"a": 1, "x": "s", "y": "t", "z": "u"}])
    assert _statuses(schema, "minProperties") == [ENFORCED] and _statuses(schema, "maxProperties") == [ENFORCED]
    required = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["b"], "maxProperties": 1}
    _agrees(required, [{"b": 1}, {"a": 1, "b": 1}, {"b": 1, "x": 1}, {}])


def test_property_counts_with_pattern_properties_and_undeclared_required_names() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False,
              "required": ["xa"], "minProperties": 2, "maxProperties": 2}
    _agrees(schema, [{"xa": 1}, {"xa": 1, "xb": 2}, {"xa": 1, "xb": 2, "xc": 3}, {"xa": 1, "y": 2}])


def test_property_counts_no_object_meets_are_clear() -> None:
    closed = {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False, "minProperties": 3}
    with pytest.raises(SchemaError, match=r"no object satisfies minProperties with the properties allowed"):
        translate(closed)
    with pytest.raises(SchemaError, match="no object satisfies required, maxProperties"):
        translate({"type": "object", "required": ["a", "b"], "maxProperties": 1})
    either = {"anyOf": [closed, {"type": "integer"}]}  # the object branch drops out
    assert _accepts(either, 3) and not _accepts(either, {"a": 1, "b": 2})
    assert _accepts({"type": ["object", "null"], "minProperties": 1, "maxProperties": 0}, None)


def test_property_counts_past_the_state_limit_are_approximated() -> None:
    """An upper count beyond what MAX_OBJECT_STATES rules can count goes first; the
    lower one is still enforced."""
    schema = {"type": "object", "minProperties": 2, "maxProperties": 5000}
    assert _statuses(schema, "maxProperties") == [APPROXIMATED] and _statuses(schema, "minProperties") == [ENFORCED]
    assert _accepts(schema, {"a": 1, "b": 2}) and not _accepts(schema, {"a": 1})
    with pytest.raises(SchemaError, match="maxProperties cannot be enforced exactly"):
        translate(schema, Options(strict=True))


def test_dependent_required_forward_backward_and_in_chains() -> None:
    """A name may need one declared after it (owed until then) or before it (which
    must have been written); needs chain (a needs b, b needs c)."""
    properties = {"a": {}, "b": {}, "c": {}}
    objects = [{}, {"a": 1}, {"b": 1}, {"c": 1}, {"a": 1, "b": 1}, {"a": 1, "c": 1}, {"b": 1, "c": 1}, {"a": 1, "b": 1, "c": 1}]
    for needs in ({"a": ["c"]}, {"c": ["a"]}, {"a": ["c"], "c": ["a"]}, {"a": ["b"], "b": ["c"]}, {"c": ["a", "b"]}, {"b": []}):
        schema = {"type": "object", "properties": properties, "dependentRequired": needs}
        _agrees(schema, objects + [{"a": 1, "x": 2}, {"c": 1, "x": 2}])
        assert _statuses(schema, "dependentRequired") == [ENFORCED]


def test_dependent_required_with_counts_and_required_names() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["c"],
              "dependentRequired": {"c": ["b"], "a": ["b"]}, "maxProperties": 2}
    _agrees(schema, [{"c": 1}, {"b": 1, "c": 1}, {"a": 1, "b": 1, "c": 1}, {"b": 1, "c": 1, "x": 1}])
    with pytest.raises(SchemaError, match="no object satisfies"):
        translate({**schema, "maxProperties": 1})


def test_dependent_required_on_names_only_extra_properties_hold() -> None:
    """An undeclared name gets a terminal of its own among the extra properties, in
    whichever region of patternProperties it falls; one no extra property may
    have keeps the names that need it out."""
    open_ = {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"},
             "dependentRequired": {"a": ["x"], "y": ["a"], "z": ["x"]}}
    _agrees(open_, [{}, {"a": 1}, {"a": 1, "x": 2}, {"a": 1, "w": 2, "x": 2}, {"y": 1}, {"a": 1, "y": 1, "x": 1},
                    {"z": 1}, {"x": 1, "z": 1}, {"z": 1, "x": 1}, {"a": 1, "x": "s"}])
    patterned = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False,
                 "dependentRequired": {"xa": ["xb"]}}
    _agrees(patterned, [{"xa": 1}, {"xa": 1, "xb": 2}, {"xc": 1, "xb": 2, "xa": 3}, {"xb": 1}, {"xa": 1, "xb": "s"}])
    closed = {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False,
              "dependentRequired": {"a": ["x"]}}
    _agrees(closed, [{"a": 1}, {"b": 1}, {}])
    with pytest.raises(SchemaError, match="no object satisfies required, dependentRequired"):
        translate({**closed, "required": ["a"]})


def test_dependent_required_names_not_told_apart_are_approximated() -> None:
    """(A name that needs an escape is told apart:
    ``test_declared_names_that_need_an_escape_are_no_extra_names``.)"""
    escaped = {"type": "object", "dependentRequired": {"a": ['q"uote']}}
    assert _statuses(escaped, "dependentRequired") == [ENFORCED]
    assert _accepts(escaped, {"a": 1, 'q"uote': 2}) and not _accepts(escaped, {"a": 1})
    unrun = {"type": "object", "patternProperties": {"^\\p{L}": {}}, "dependentRequired": {"a": ["b"]}}
    assert _statuses(unrun, "dependentRequired") == [APPROXIMATED]  # no Python regex tells which schema "b" takes
    assert _accepts(unrun, {"a": 1, "b": 2}) and _accepts(unrun, {"b": 1})


def test_dependencies_per_draft() -> None:
    """The array form of draft 4-7 ``dependencies`` is dependentRequired (enforced in
    every draft); ``dependentRequired`` is no keyword before 2019-09."""
    draft7 = "http://json-schema.org/draft-07/schema#"
    schema = {"$schema": draft7, "type": "object", "properties": {"a": {}, "b": {}}, "dependencies": {"b": ["a"]}}
    _agrees(schema, [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 1}])
    old = {"$schema": draft7, "type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"b": ["a"]}}
    assert _accepts(old, {"b": 1}) and _statuses(old, "dependentRequired") == [ENFORCED]
    newer = {**old, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    assert not _accepts(newer, {"b": 1})
    with pytest.raises(SchemaError, match=r"dependentRequired: 'b' must list property names"):
        translate({"dependentRequired": {"b": "a"}})


def test_dependent_schemas_apply_to_objects_holding_the_name() -> None:
    schema = {"type": "object", "properties": {"kind": {"type": "string"}, "format": {"type": "string"}},
              "dependentSchemas": {"format": {"properties": {"kind": {"enum": ["string"]}}, "required": ["kind"]}}}
    _agrees(schema, [{}, {"kind": "integer"}, {"format": "date"}, {"kind": "string", "format": "date"},
                     {"kind": "integer", "format": "date"}, {"kind": "string", "format": 1}])
    assert _statuses(schema, "dependentSchemas") == [ENFORCED]
    closing = {"properties": {"a": {}, "b": {}}, "dependentSchemas": {"b": {"properties": {"b": {}}, "additionalProperties": False}}}
    _agrees(closing, [{"a": 1}, {"b": 1}, {"a": 1, "b": 1}, {"b": 1, "x": 1}, {"x": 1}])  # beside b, a is extra there
    booleans = {"dependentSchemas": {"a": True, "b": False}, "properties": {"b": {}}}
    _agrees(booleans, [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 1}, 3, "b"])


def test_dependencies_schema_form_and_both_forms_together() -> None:
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"a": {}, "b": {"type": "integer"}, "c": {}},
              "dependencies": {"a": ["c"], "b": {"maxProperties": 2}, "c": {"properties": {"b": {"minimum": 5}}}}}
    _agrees(schema, [{}, {"a": 1}, {"a": 1, "c": 1}, {"b": 1}, {"b": 1, "c": 1}, {"b": 7, "c": 1},
                     {"a": 1, "b": 7, "c": 1}, {"b": 7, "c": 1, "x": 1}])
    assert _statuses(schema, "dependencies") == [ENFORCED]


def test_all_of_of_recursive_references_is_a_cycle_of_rules() -> None:
    """Each part's additionalProperties judges the name the other declares, through
    references that recur: every list of merged references is built once (the
    chain of "a" must be of even length)."""
    schema = {"allOf": [{"$ref": "#/$defs/word"}, {"$ref": "#/$defs/even"}], "$defs": {
        "word": {"type": "object", "properties": {"a": {"$ref": "#/$defs/word"}}, "additionalProperties": False},
        "even": {"additionalProperties": {"$ref": "#/$defs/odd"}},
        "odd": {"additionalProperties": {"$ref": "#/$defs/even"}, "minProperties": 1}}}
    chains = [{}, {"a": {}}, {"a": {"a": {}}}, {"a": {"a": {"a": {}}}}, {"a": {"a": {"a": {"a": {}}}}}, {"b": {}}]
    _agrees(schema, chains)


def test_dependent_schemas_past_the_limits_are_approximated() -> None:
    many = {"type": "object", "dependentSchemas": {name: {"required": ["z"]} for name in "abcde"}}
    assert _statuses(many, "dependentSchemas") == [APPROXIMATED]
    disagreeing = {"type": "object", "format": "x", "dependentSchemas": {"a": {"format": "y"}}}
    assert _statuses(disagreeing, "dependentSchemas") == [APPROXIMATED]  # merged as allOf merges: the first value
    tighter = {"type": "object", "maxProperties": 3, "dependentSchemas": {"a": {"maxProperties": 1}}}
    agrees(tighter, [{"a": 1}, {"b": 1, "c": 2}], [{"a": 1, "b": 2}])  # two counts: the tighter
    # a dependent schema holding its own schema again, inline (an ajv meta-schema does): no end to the copies
    recursive = {"type": "object", "properties": {"p": {"$ref": "#"}},
                 "dependentSchemas": {"d": {"properties": {"p": {"required": ["q"]}}}}}
    grammar = Grammar.from_json_schema(recursive)
    assert APPROXIMATED in [e.status for e in grammar.report.entries if e.keyword == "dependentSchemas"]
    assert grammar.accepts('{"p": {"q": 1}, "d": 1}') and not grammar.accepts('{"p": {}, "d": 1}')


OBJECT_NAMES = ["a", "b", "c", "x", "y"]
"""Property names of the random object schemas: the first three may be declared."""


def _random_object_schema(rng: random.Random, dependent_schemas: bool) -> dict[str, Any]:
    """An object schema mixing declared properties, extra properties, dependencies
    and property counts, each drawn from ``rng``."""
    names = OBJECT_NAMES
    properties = {name: rng.choice([{}, {"type": "integer"}]) for name in rng.sample(names[:3], rng.randint(0, 3))}
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "additionalProperties": rng.choice([True, False, {"type": "integer"}]),
                              "dependentRequired": {n: rng.sample(names, rng.randint(0, 2)) for n in rng.sample(names, 2)}}
    if dependent_schemas:
        schema["dependentSchemas"] = {rng.choice(names): rng.choice([{"required": ["y"]}, {"maxProperties": 2}])}
    if properties and rng.random() < 0.5:
        schema["required"] = rng.sample(list(properties), 1)
    for key in ("minProperties", "maxProperties"):
        if rng.random() < 0.5:
            schema[key] = rng.randint(0, 3)
    return schema


def test_whole_object_keywords_agree_with_jsonschema_on_random_schemas() -> None:
    """Random schemas mixing counts, dependencies and extra properties, random
    objects written declared names first: acceptance is validity wherever the
    report says exact (and a valid object is refused only for its key order)."""
    rng = random.Random(11)
    names = OBJECT_NAMES
    for _ in range(60):
        schema = _random_object_schema(rng, dependent_schemas=True)
        properties = schema["properties"]
        try:
            grammar = Grammar.from_json_schema(schema)
        except SchemaError:
            continue
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(25):
            keys = [n for n in properties if rng.random() < 0.5] + [n for n in names if n not in properties and rng.random() < 0.4]
            instance = {key: rng.choice([1, "s"]) for key in keys}
            accepted, valid = grammar.accepts(json.dumps(instance)), validator.is_valid(instance)
            if valid and not accepted:  # only the order of the undeclared names may be at fault
                declared = [k for k in instance if k in properties]
                orders = itertools.permutations([k for k in instance if k not in properties])
                assert any(grammar.accepts(json.dumps({k: instance[k] for k in declared + list(order)})) for order in orders)
            elif grammar.report.exact:
                assert accepted == valid, (schema, instance)


def test_dependent_schemas_of_not_or_if_alone_are_split_on() -> None:
    """A dependent schema holding only ``not`` or ``if``/``then`` is merged into its
    branch like any other (they are enforced), exactly, as jsonschema judges."""
    for dependent in ({"not": {"required": ["b"]}}, {"if": {"required": ["b"]}, "then": {"required": ["c"]}}):
        schema = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "dependentSchemas": {"a": dependent}}
        grammar = Grammar.from_json_schema(schema)
        assert grammar.report.exact, grammar.report
        for instance in ({"a": 1}, {"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, {"b": 2}, {"b": 2, "c": 3}, {}):
            valid = jsonschema.Draft202012Validator(schema).is_valid(instance)
            assert grammar.accepts(json.dumps(instance)) == valid, (dependent, instance)


# -- property_order="any"


def test_any_order_accepts_every_order_once_each() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
              "required": ["a", "b"], "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema, property_order="any")
    instance = {"a": 1, "b": "x", "c": True}
    for order in itertools.permutations(instance):
        assert grammar.accepts(json.dumps({key: instance[key] for key in order})), order
    assert grammar.accepts('{"b": "x", "a": 1}')
    assert not grammar.accepts('{"c": true, "a": 1}')  # "b" is required
    assert not grammar.accepts('{"b": "x", "a": 1, "a": 2}')  # each name once
    assert not grammar.accepts('{"b": "x", "d": 1, "a": 1}')
    assert not Grammar.from_json_schema(schema).accepts('{"b": "x", "a": 1}')  # the default: declared order
    extras = Grammar.from_json_schema({**schema, "additionalProperties": {"type": "integer"}}, property_order="any")
    assert extras.accepts('{"d": 1, "b": "x", "e": 2, "a": 1}') and not extras.accepts('{"d": "s", "b": "x", "a": 1}')
    assert grammar.report.exact


def test_any_order_keeps_the_declared_order_past_its_limit() -> None:
    """Which members were written is part of the state: 2**12 states for twelve
    optional properties is past ``MAX_UNORDERED_STATES``, so the object keeps the
    declared order and the report says so."""
    names = [f"p{i}" for i in range(12)]
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in names}}
    grammar = Grammar.from_json_schema(schema, property_order="any")
    notes = [e.note for e in grammar.report.entries if e.keyword == "properties" and e.status == APPROXIMATED]
    assert notes and "declared order is kept" in notes[0]
    assert grammar.accepts('{"p0": 1, "p5": 2}') and not grammar.accepts('{"p5": 2, "p0": 1}')
    small = Grammar.from_json_schema({**schema, "properties": {name: {} for name in names[:8]}}, property_order="any")
    assert small.accepts('{"p5": 2, "p0": 1}') and small.report.exact


def test_any_order_agrees_with_jsonschema_on_random_schemas() -> None:
    """Counts, dependencies and extra properties with the keys in random order:
    acceptance is validity wherever the report says exact."""
    rng = random.Random(12)
    names = OBJECT_NAMES
    checked = 0
    for _ in range(40):
        schema = _random_object_schema(rng, dependent_schemas=False)
        try:
            grammar = Grammar.from_json_schema(schema, property_order="any")
        except SchemaError:
            continue
        if not grammar.report.exact:
            continue
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(25):
            keys = [n for n in names if rng.random() < 0.5]
            rng.shuffle(keys)
            instance = {key: rng.choice([1, "s"]) for key in keys}
            assert grammar.accepts(json.dumps(instance)) == validator.is_valid(instance), (schema, instance)
            checked += 1
    assert checked >= 500


def test_listed_objects_take_their_members_in_any_order() -> None:
    """JSON Schema compares objects as sets of members: the suite's "same object
    with different property order is valid" (drafts 7 and 2020-12), nested too;
    each member once. Past ``MAX_UNORDERED_MEMBERS`` the listed order stays,
    reported approximated (narrower)."""
    from schema2grammar.translate import MAX_UNORDERED_MEMBERS

    const = {"const": {"foo": "bar", "baz": "bax"}}
    agrees(const, [{"foo": "bar", "baz": "bax"}, {"baz": "bax", "foo": "bar"}], [{"foo": "bar"}, {"baz": "bax", "foo": "x"}])
    nested = {"enum": [{"a": {"x": 1, "y": [1, {"p": None, "q": True}]}, "b": 2}, 3]}
    agrees(nested, [{"b": 2, "a": {"y": [1, {"q": True, "p": None}], "x": 1}}, 3], [{"b": 2, "a": {"x": 1}}, {"b": 2}])
    grammar = Grammar.from_json_schema(const)
    assert not grammar.accepts('{"foo": "bar", "foo": "bar", "baz": "bax"}') and not grammar.accepts('{"foo": "bar",}')
    wide = {f"k{i}": i for i in range(MAX_UNORDERED_MEMBERS + 1)}
    report = Grammar.from_json_schema({"const": wide}).report
    assert [(e.keyword, e.status) for e in report.entries] == [("const", APPROXIMATED)]
    assert Grammar.from_json_schema({"const": wide}).accepts(json.dumps(wide))
    assert not Grammar.from_json_schema({"const": wide}).accepts(json.dumps(dict(reversed(wide.items()))))
    with pytest.raises(SchemaError, match="const cannot be enforced exactly"):
        translate({"const": wide}, Options(strict=True))


def test_the_report_tells_narrowing_from_widening() -> None:
    """``Report.sound``: every value the grammar takes is an instance. Closing an
    object or keeping a listed object's order narrows (sound); a pattern no automaton
    holds widens (``widened`` names it). Several branches of one place keep the worse."""
    closed = Grammar.from_json_schema({"type": "object", "properties": {"a": {}}}, closed_objects=True).report
    assert not closed.exact and closed.sound and not closed.widened()
    wide = {f"k{i}": i for i in range(12)}
    assert Grammar.from_json_schema({"const": wide}).report.sound
    behind = Grammar.from_json_schema({"type": "object", "properties": {"a": {"pattern": "(?<=a)b"}}}, closed_objects=True).report
    assert not behind.sound and [(e.pointer, e.keyword) for e in behind.widened()] == [("/properties/a", "pattern")]


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"])
def test_prefix_items_before_2020_12_is_no_keyword(draft: str) -> None:
    """fuzz cases schema-unsound-0-783 and 0-955: ``prefixItems`` came with 2020-12;
    under an older declared draft it is an unknown keyword, so ``items: false``
    leaves only the empty array (a property of that name is still a property)."""
    schema = {"$schema": draft, "type": "array", "prefixItems": [{"type": "string"}], "items": False}
    agrees(schema, [[]], [["a"], [1]])
    named = {"$schema": draft, "type": "object", "properties": {"prefixItems": {"type": "integer"}}}
    agrees(named, [{"prefixItems": 1}], [{"prefixItems": "x"}])
    newer = {**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    agrees(newer, [[], ["a"]], [[1], ["a", "b"]])


@pytest.mark.parametrize("schema, where", [
    ({"type": "object", "structgen:someProperty": [["^a", {"type": "integer"}]]}, "/structgen:someProperty"),
    ({"allOf": [{"structgen:declaredLater": ["x"]}]}, "/allOf/0/structgen:declaredLater"),
    ({"properties": {"structgen:declaredLater": {}}}, "/properties/structgen:declaredLater"),
])
def test_the_names_the_translator_reserves_are_refused_in_a_schema(schema: Any, where: str) -> None:
    """The translator marks the schemas it derives with two keys of its own; one in a
    user's schema would change its meaning (``{}`` refused where JSON Schema ignores
    an unknown keyword), so it is an error naming the place."""
    with pytest.raises(SchemaError, match=f"^{re.escape(where)}: .* reserves"):
        translate(schema)
    assert translate({"type": "object", "x-structgen": 1})[0]  # other unknown keys stay ignored
    assert translate({"const": {"structgen:declaredLater": 1}})[0]  # inside a value: data, not a keyword

"""``unevaluatedProperties`` and ``unevaluatedItems`` (schema2grammar/unevaluated.py):
where the report says exact, the grammar accepts exactly what jsonschema finds valid
(hand-written and random schemas and instances); where what is evaluated is not
known before the instance, the keyword is reported approximated and the grammar is
only wider; drafts, malformed values, strict mode and the limit."""

from __future__ import annotations

import json
import random
from typing import Any, Callable

import jsonschema
import pytest
from schema_checks import agrees

from schema2grammar import APPROXIMATED, ENFORCED, SchemaError
from schema2grammar.unevaluated import MAX_UNEVALUATED_ALTERNATIVES
from structgen import Grammar

D2020 = "https://json-schema.org/draft/2020-12/schema"
D2019 = "https://json-schema.org/draft/2019-09/schema"


def _status(grammar: Grammar, keyword: str, pointer: str = "") -> list[str]:
    return [e.status for e in grammar.report.entries if e.keyword == keyword and e.pointer == pointer]


PROPERTY_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("alone", {"unevaluatedProperties": False}, [{}, 1, "x", [1]], [{"a": 1}]),
    ("as a schema", {"unevaluatedProperties": {"type": "integer"}}, [{"a": 1, "b": 2}, {}], [{"a": "x"}]),
    ("beside properties", {"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False},
     [{}, {"a": 1}], [{"b": 1}, {"a": 1, "b": 2}, {"a": "x"}]),
    ("beside patternProperties", {"patternProperties": {"^x": {"type": "integer"}}, "unevaluatedProperties": {"type": "string"}},
     [{"x1": 1, "y": "s"}, {}], [{"x1": "s"}, {"y": 1}]),
    ("beside additionalProperties", {"additionalProperties": {"type": "integer"}, "unevaluatedProperties": False},
     [{"a": 1}], [{"a": "x"}]),
    ("through allOf", {"properties": {"a": {}}, "allOf": [{"properties": {"b": {"type": "integer"}}}],
                       "unevaluatedProperties": False}, [{"a": 1, "b": 2}, {"b": 3}], [{"a": 1, "c": 2}, {"b": "x"}]),
    ("cousins do not see each other", {"allOf": [{"properties": {"a": True}}, {"unevaluatedProperties": False}]},
     [{}], [{"a": 1}]),
    ("nested true evaluates all", {"allOf": [{"unevaluatedProperties": True}], "unevaluatedProperties": False},
     [{"a": 1}], []),
    ("inner false, outer true", {"properties": {"a": {}}, "allOf": [{"unevaluatedProperties": False}],
                                 "unevaluatedProperties": True}, [{}], [{"a": 1}]),
    ("anyOf: each subset of passing branches", {
        "properties": {"a": {}}, "unevaluatedProperties": False,
        "anyOf": [{"properties": {"b": {"const": 1}}, "required": ["b"]}, {"properties": {"c": {"const": 2}}, "required": ["c"]}]},
     [{"a": 1, "b": 1}, {"c": 2}, {"a": 0, "b": 1, "c": 2}], [{"b": 1, "c": 3}, {"b": 1, "d": 0}, {"a": 1}]),
    ("oneOf of disjoint types", {
        "oneOf": [{"type": "object", "properties": {"b": {}}}, {"type": "array"}], "unevaluatedProperties": False},
     [{"b": 1}, {}, [1]], [{"c": 1}]),
    ("if/then/else", {
        "if": {"properties": {"k": {"const": "t"}}, "required": ["k"]}, "then": {"properties": {"t": {}}},
        "else": {"properties": {"e": {}}}, "unevaluatedProperties": False},
     [{"k": "t", "t": 1}, {"e": 1}, {}], [{"k": "t", "e": 1}, {"k": "other", "e": 1}, {"t": 1}]),
    ("if alone evaluates where it passes", {"if": {"patternProperties": {"^f": {"type": "string"}}},
                                            "unevaluatedProperties": False}, [{"foo": "a"}], [{"bar": "a"}, {"foo": 1}]),
    ("not evaluates nothing", {"properties": {"a": {}}, "not": {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                               "unevaluatedProperties": False}, [{"a": 1}, {}], [{"a": 1, "b": 1}, {"b": "s"}]),
    ("dependentSchemas", {"properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}},
                          "unevaluatedProperties": False}, [{"a": 1, "b": 2}, {"a": 1}, {}], [{"b": 1}, {"a": 1, "b": "x"}]),
    ("$ref beside it", {"$defs": {"d": {"properties": {"b": {}}}}, "$ref": "#/$defs/d", "properties": {"a": {}},
                        "unevaluatedProperties": False}, [{"b": 1, "a": 2}], [{"c": 1}]),
    ("recursion through properties", {"properties": {"x": {"$ref": "#"}}, "unevaluatedProperties": False},
     [{"x": {"x": {}}}], [{"y": 1}, {"x": {"y": 1}}, {"x": {"x": {"y": 1}}}]),
    ("recursion through a $ref beside it", {
        "$defs": {"b": {"properties": {"v": {"type": "integer"}}},
                  "n": {"$ref": "#/$defs/b", "properties": {"x": {"$ref": "#/$defs/n", "unevaluatedProperties": False}}}},
        "properties": {"x": {"$ref": "#/$defs/n", "unevaluatedProperties": False}}, "unevaluatedProperties": False},
     [{"x": {"v": 1, "x": {"v": 2}}}, {}], [{"x": {"v": 1, "x": {"w": 2}}}, {"x": {"w": 1}}, {"y": 1}]),
    ("uncle schema", {"properties": {"f": {"properties": {"b": {}}, "unevaluatedProperties": False}},
                      "anyOf": [{"properties": {"f": {"properties": {"z": {}}}}}]},
     [{"f": {"b": 1}}], [{"f": {"b": 1, "z": 2}}]),
    ("required names it judges", {"required": ["r"], "unevaluatedProperties": {"type": "integer"}},
     [{"r": 1}], [{"r": "x"}, {}]),
]


@pytest.mark.parametrize("case", PROPERTY_CASES, ids=[case[0] for case in PROPERTY_CASES])
def test_unevaluated_properties(case: tuple[str, Any, list[Any], list[Any]]) -> None:
    _, schema, valid, invalid = case
    agrees({"$schema": D2020, **schema}, valid, invalid)


ITEM_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("alone", {"unevaluatedItems": False}, [[], {"a": 1}], [[1]]),
    ("as a schema", {"unevaluatedItems": {"type": "string"}}, [["a", "b"]], [["a", 1]]),
    ("after prefixItems", {"prefixItems": [{"type": "integer"}], "unevaluatedItems": False}, [[1], []], [[1, 2]]),
    ("items evaluate all", {"items": {"type": "integer"}, "unevaluatedItems": False}, [[1, 2, 3]], [["x"]]),
    ("through allOf", {"prefixItems": [{"type": "string"}], "allOf": [{"prefixItems": [True, {"type": "integer"}]}],
                       "unevaluatedItems": False}, [["a", 1], ["a"]], [["a", 1, 2], ["a", "b"]]),
    ("cousins", {"allOf": [{"prefixItems": [True]}, {"unevaluatedItems": False}]}, [[]], [[1]]),
    ("anyOf", {"prefixItems": [{"const": "f"}], "unevaluatedItems": False, "anyOf": [
        {"prefixItems": [True, {"const": "b"}]}, {"prefixItems": [True, True, {"const": "z"}]}]},
     [["f", "b"], ["f", "b", "z"]], [["f", "b", 1], ["f", "x", "z", 1]]),
    ("$ref", {"$defs": {"d": {"prefixItems": [True, {"type": "string"}]}}, "$ref": "#/$defs/d",
              "prefixItems": [{"type": "string"}], "unevaluatedItems": False}, [["a", "b"]], [["a", "b", "c"]]),
    ("if without then or else", {"if": {"prefixItems": [{"const": "a"}]}, "unevaluatedItems": False}, [["a"], []], [["b"]]),
    ("dependentSchemas hold for objects only", {"dependentSchemas": {"a": {"items": True}}, "unevaluatedItems": False},
     [[], {"a": 1}], [[1]]),
    ("nested in properties", {"properties": {"p": {"prefixItems": [True], "unevaluatedItems": {"type": "null"}}}},
     [{"p": [1, None]}], [{"p": [1, 2]}]),
]


@pytest.mark.parametrize("case", ITEM_CASES, ids=[case[0] for case in ITEM_CASES])
def test_unevaluated_items(case: tuple[str, Any, list[Any], list[Any]]) -> None:
    _, schema, valid, invalid = case
    agrees({"$schema": D2020, **schema}, valid, invalid)


def test_draft_2019_09_tuples_and_contains() -> None:
    """2019-09: items as a list and additionalItems evaluate; additionalItems without
    a list is ignored."""
    agrees({"$schema": D2019, "items": [{"type": "string"}], "unevaluatedItems": False}, [["a"]], [["a", "b"]])
    agrees({"$schema": D2019, "items": [True], "additionalItems": {"type": "integer"}, "unevaluatedItems": False},
            [["a", 1, 2]], [["a", "b"]])
    agrees({"$schema": D2019, "additionalItems": {"type": "number"}, "unevaluatedItems": {"type": "string"}},
            [["a", "b"]], [["a", 1]])
    agrees({"$schema": D2019, "items": [True], "allOf": [{"items": [True, {"type": "integer"}]}], "unevaluatedItems": False},
            [[1, 2]], [[1, 2, 3], [1, "x"]])
    agrees({"$schema": D2019, "properties": {"a": {}}, "unevaluatedProperties": False}, [{"a": 1}], [{"b": 1}])


def test_report_says_what_is_enforced() -> None:
    schema = {"$schema": D2020, "properties": {"a": {}}, "unevaluatedProperties": False,
              "anyOf": [{"properties": {"b": {}}}, {"properties": {"c": {}}}]}
    grammar = Grammar.from_json_schema(schema)
    assert _status(grammar, "unevaluatedProperties") == [ENFORCED]
    assert _status(grammar, "anyOf") == [ENFORCED]
    root = [e.keyword for e in grammar.report.entries if e.pointer == ""]
    assert len(root) == len(set(root)) and "additionalProperties" not in root, str(grammar.report)
    same = Grammar.from_json_schema({"$schema": D2020, "additionalProperties": True, "unevaluatedProperties": False})
    assert [e.note for e in same.report.entries if e.keyword == "unevaluatedProperties"] == [
        "adjacent keywords evaluate every property or item it would judge"]


@pytest.mark.parametrize("schema, keyword, note", [
    ({"$defs": {"d": {"$dynamicAnchor": "d"}}, "$dynamicRef": "#d", "unevaluatedProperties": False},
     "unevaluatedProperties", "$dynamicRef"),
    ({"$recursiveRef": "#", "unevaluatedItems": False}, "unevaluatedItems", "$recursiveRef"),
    ({"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}, {"properties": {"a": {}}}]}}, "$ref": "#/$defs/d",
      "unevaluatedProperties": False}, "unevaluatedProperties", "recurs in place"),
    ({"$ref": "https://example.com/other", "unevaluatedProperties": False}, "unevaluatedProperties", "leaves the document"),
    ({"dependencies": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": False}, "unevaluatedProperties",
     "dependencies"),
])
def test_approximated_where_not_static(schema: dict[str, Any], keyword: str, note: str) -> None:
    """What the keyword would judge is known only at run time: reported with the
    reason, and the grammar is only wider (the keyword constrains nothing)."""
    grammar = Grammar.from_json_schema({"$schema": D2020, **schema})
    entries = [e for e in grammar.report.entries if e.keyword == keyword and e.pointer == ""]
    assert [e.status for e in entries] == [APPROXIMATED] and note in entries[0].note, str(grammar.report)
    with pytest.raises(SchemaError, match=keyword):
        Grammar.from_json_schema({"$schema": D2020, **schema}, strict=True)


def test_references_followed_where_the_keyword_judges_nothing() -> None:
    """Everything evaluated, or the keyword approximated: the $ref beside it still holds."""
    defs = {"d": {"properties": {"a": {"type": "integer"}}}}
    whole = {"$schema": D2020, "$defs": defs, "$ref": "#/$defs/d", "additionalProperties": True, "unevaluatedProperties": False}
    agrees(whole, [{"a": 1, "b": 2}], [{"a": "x"}])
    loose = Grammar.from_json_schema({"$schema": D2020, "$defs": {**defs, "e": {"$dynamicAnchor": "e"}}, "$ref": "#/$defs/d",
                                      "$dynamicRef": "#e", "unevaluatedProperties": False})
    assert _status(loose, "unevaluatedProperties") == [APPROXIMATED]
    assert loose.accepts('{"a": 1, "b": 2}') and not loose.accepts('{"a": "x"}')
    part = Grammar.from_json_schema({"$schema": D2020, "$defs": {**defs, "e": {"$dynamicAnchor": "e"}},
                                     "allOf": [{"$ref": "#/$defs/d", "$dynamicRef": "#e", "unevaluatedProperties": False}]})
    assert part.accepts('{"a": 1, "b": 2}') and not part.accepts('{"a": "x"}')


def test_contains_evaluates_what_it_matches() -> None:
    """2020-12: an item after the evaluated prefix matches a contains that passed, or
    satisfies unevaluatedItems. 2019-09 does not say so (jsonschema counts the
    matches): approximated there, and one keyword dropped leaves the other enforced."""
    agrees({"$schema": D2020, "prefixItems": [True], "contains": {"type": "string"}, "unevaluatedItems": False},
            [[1, "a", "b"], [1, "a"], {"x": 1}], [[1, "a", 2], [1, 2]])
    agrees({"$schema": D2020, "contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
            [["a", 1, "b"]], [["a", None], [1]])
    grammar = Grammar.from_json_schema({"$schema": D2019, "contains": {"type": "string"}, "unevaluatedItems": False,
                                        "properties": {"a": {}}, "unevaluatedProperties": False})
    entries = [e for e in grammar.report.entries if e.keyword == "unevaluatedItems"]
    assert [e.status for e in entries] == [APPROXIMATED] and "2019-09" in entries[0].note
    assert _status(grammar, "unevaluatedProperties") == [ENFORCED]
    assert grammar.accepts('{"a": 1}') and not grammar.accepts('{"b": 1}') and grammar.accepts('["x", 1]')


def test_earlier_drafts_read_them_as_annotations() -> None:
    for draft in ("http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#"):
        grammar = Grammar.from_json_schema({"$schema": draft, "properties": {"a": {}}, "unevaluatedProperties": False,
                                            "type": ["object", "array"], "unevaluatedItems": False})
        assert grammar.report.exact, str(grammar.report)
        assert grammar.accepts('{"b": 1}') and grammar.accepts("[1]")
        assert all("annotation" in e.note for e in grammar.report.entries if e.keyword.startswith("unevaluated"))


@pytest.mark.parametrize("schema, pointer", [
    ({"unevaluatedProperties": 5}, "^/unevaluatedProperties"),
    ({"unevaluatedItems": [False]}, "^/unevaluatedItems"),
    ({"properties": {"a": {"unevaluatedItems": "no"}}}, "^/properties/a/unevaluatedItems"),
    ({"allOf": [{"unevaluatedProperties": 1}]}, "unevaluatedProperties"),
    ({"anyOf": [{"type": "string"}, {"unevaluatedItems": {"type": 5}}]}, "unevaluatedItems"),
])
def test_malformed_values_name_their_pointer(schema: dict[str, Any], pointer: str) -> None:
    with pytest.raises(SchemaError, match=pointer):
        Grammar.from_json_schema({"$schema": D2020, **schema})


def _branches(count: int) -> dict[str, Any]:
    return {"$schema": D2020, "unevaluatedProperties": False,
            "oneOf": [{"properties": {f"p{i}": {"const": i}}, "required": [f"p{i}"]} for i in range(count)]}


def test_alternatives_limit() -> None:
    """MAX_UNEVALUATED_ALTERNATIVES: a oneOf of that many branches (one alternative
    each) is split; one more is reported approximated. anyOf takes every non-empty
    subset: 2**6 - 1 fit, 2**7 - 1 do not."""
    limit = MAX_UNEVALUATED_ALTERNATIVES
    at = Grammar.from_json_schema(_branches(limit))
    assert _status(at, "unevaluatedProperties") == [ENFORCED], str(at.report)
    assert at.accepts('{"p3": 3}') and not at.accepts('{"p3": 3, "q": 1}')
    past = Grammar.from_json_schema(_branches(limit + 1))
    entries = [e for e in past.report.entries if e.keyword == "unevaluatedProperties"]
    assert [e.status for e in entries] == [APPROXIMATED] and str(limit) in entries[0].note
    assert past.accepts('{"p3": 3, "q": 1}')
    for count, status in ((6, ENFORCED), (7, APPROXIMATED)):
        schema = {"$schema": D2020, "unevaluatedProperties": False,
                  "anyOf": [{"properties": {f"p{i}": {}}} for i in range(count)]}
        assert _status(Grammar.from_json_schema(schema), "unevaluatedProperties") == [status], count


# -- random schemas against jsonschema

NAMES = ["a", "b", "xc"]
VALUES: list[Any] = [1, "s", None]


def _value_schema(rng: random.Random) -> Any:
    return rng.choice([{}, {"type": "integer"}, {"const": 1}, {"type": "string"}])


APPLICATORS = ["allOf", "anyOf", "oneOf", "if", "dependentSchemas", "$ref", "not"]


def _add_applicator(
    schema: dict[str, Any], rng: random.Random, depth: int, make: Callable[[random.Random, int], Any], kinds: list[str]
) -> None:
    """One of the in-place applicators ``kinds`` added to ``schema``, its subschemas
    made by ``make`` one level deeper (``$ref``: to ``#/$defs/d``)."""
    kind = rng.choice(kinds)
    if kind in ("allOf", "anyOf", "oneOf"):
        schema[kind] = [make(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    elif kind == "if":
        schema["if"] = make(rng, depth + 1)
        for key in ("then", "else"):
            if rng.random() < 0.7:
                schema[key] = make(rng, depth + 1)
    elif kind == "dependentSchemas":
        schema[kind] = {rng.choice(NAMES): make(rng, depth + 1)}
    elif kind == "$ref":
        schema["$ref"] = "#/$defs/d"
    else:
        schema["not"] = make(rng, depth + 1)


def _object(rng: random.Random, depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    declared = [name for name in NAMES if rng.random() < 0.4]
    if declared:
        schema["properties"] = {name: _value_schema(rng) for name in declared}
        if rng.random() < 0.4:
            schema["required"] = [rng.choice(declared)]
    if rng.random() < 0.15:
        schema["patternProperties"] = {"^x": _value_schema(rng)}
    if rng.random() < 0.08:
        schema["additionalProperties"] = _value_schema(rng)
    if rng.random() < 0.12:
        schema["unevaluatedProperties"] = rng.choice([False, True, {"type": "integer"}])
    if depth < 2 and rng.random() < 0.6:
        _add_applicator(schema, rng, depth, _object, APPLICATORS)
    return schema


def _object_instance(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return rng.choice(VALUES)
    return {name: rng.choice(VALUES) for name in rng.sample(NAMES + ["z"], rng.randint(0, 4))}


def _array(rng: random.Random, depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if rng.random() < 0.7:
        schema["prefixItems"] = [_value_schema(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.15:
        schema["items"] = _value_schema(rng)
    if rng.random() < 0.12:
        schema["contains"] = _value_schema(rng)
    if rng.random() < 0.12:
        schema["unevaluatedItems"] = rng.choice([False, True, {"type": "integer"}])
    if depth < 2 and rng.random() < 0.6:
        _add_applicator(schema, rng, depth, _array, ["allOf", "anyOf", "oneOf", "if", "$ref"])
    return schema


def _array_instance(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return rng.choice([*VALUES, {}])
    return [rng.choice(VALUES) for _ in range(rng.randint(0, 4))]


def _checked_against(grammar: Grammar, validator: Any, schema: Any, instances: list[Any]) -> int:
    """Checks ``instances``: every valid one accepted, and where the report says
    exact, acceptance is validity (how many were checked so)."""
    checked = 0
    for instance in instances:
        valid = validator.is_valid(instance)
        accepted = grammar.accepts(json.dumps(instance))
        assert accepted or not valid, (schema, instance)
        if grammar.report.exact:
            assert accepted == valid, (schema, instance, str(grammar.report))
            checked += 1
    return checked


@pytest.mark.parametrize("kind", ["properties", "items"])
def test_random_schemas_agree_with_jsonschema(kind: str) -> None:
    """Wherever the report says exact, acceptance is validity; elsewhere the grammar
    is only wider (every valid instance accepted). Properties in any order
    (``property_order="any"``): what is evaluated does not depend on it."""
    rng = random.Random(2027 if kind == "properties" else 2028)
    build, instance_of = (_object, _object_instance) if kind == "properties" else (_array, _array_instance)
    keyword = "unevaluatedProperties" if kind == "properties" else "unevaluatedItems"
    exact = checked = 0
    for _ in range(250):
        schema = {"$schema": D2020, "$defs": {"d": build(rng, 2)}, **build(rng, 0),
                  keyword: rng.choice([False, {"type": "integer"}])}
        try:
            grammar = Grammar.from_json_schema(schema, property_order="any")
        except SchemaError:
            continue
        validator = jsonschema.Draft202012Validator(schema)
        exact += grammar.report.exact
        checked += _checked_against(grammar, validator, schema, [instance_of(rng) for _ in range(25)])
    assert exact >= 110 and checked >= 2500, (exact, checked)


def _as_2019(schema: Any) -> Any:
    """A random 2020-12 schema spelled as 2019-09 spells it (tuples as ``items``
    lists, then ``additionalItems``). jsonschema's 2019-09 reads a schema-valued
    ``additionalProperties``/``unevaluatedProperties`` as a list of names when it
    collects evaluated names: those become true, where it follows the draft."""
    if isinstance(schema, list):
        return [_as_2019(sub) for sub in schema]
    if not isinstance(schema, dict):
        return schema
    spelled: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "prefixItems":
            spelled["items"] = _as_2019(value)
        elif key == "items" and "prefixItems" in schema:
            spelled["additionalItems"] = _as_2019(value)
        elif key == "$defs":
            spelled[key] = {name: _as_2019(sub) for name, sub in value.items()}
        elif key in ("additionalProperties", "unevaluatedProperties") and isinstance(value, dict):
            spelled[key] = True
        else:
            spelled[key] = _as_2019(value)
    return spelled


def _mixed(rng: random.Random, depth: int) -> dict[str, Any]:
    """Object and array keywords at every level, either kind's unevaluated* among them."""
    schema = {**_object(rng, 3), **_array(rng, 3)}
    if depth < 2 and rng.random() < 0.7:
        _add_applicator(schema, rng, depth, _mixed, APPLICATORS)
    return schema


@pytest.mark.parametrize("draft", [D2019, D2020])
def test_random_schemas_with_both_keywords_agree_with_jsonschema(draft: str) -> None:
    """Objects and arrays under one schema holding both keywords, per draft, and
    subschemas holding either (one kind's keyword beside the other kind's split)."""
    rng = random.Random(7 if draft == D2019 else 8)
    exact = checked = 0
    for _ in range(200):
        schema: dict[str, Any] = {**_mixed(rng, 0), "$defs": {"d": _mixed(rng, 2)}}
        for key in ("unevaluatedProperties", "unevaluatedItems"):
            if rng.random() < 0.7:
                schema[key] = rng.choice([False, {"type": "integer"}])
        schema = {**(_as_2019(schema) if draft == D2019 else schema), "$schema": draft}
        try:
            grammar = Grammar.from_json_schema(schema, property_order="any")
        except SchemaError:
            continue
        validator = jsonschema.validators.validator_for(schema)(schema)
        exact += grammar.report.exact
        instances = [_object_instance(rng) if rng.random() < 0.5 else _array_instance(rng) for _ in range(25)]
        checked += _checked_against(grammar, validator, schema, instances)
    assert exact >= 60 and checked >= 1400, (exact, checked)

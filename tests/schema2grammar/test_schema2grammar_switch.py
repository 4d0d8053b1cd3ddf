"""An allOf of conditionals that test one property against constants: one branch
per case (schema2grammar/switch.py), exact past the nesting limit."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from schema_checks import agrees

from schema2grammar import Options, SchemaError, applicators, switch, translate
from schema2grammar.report import APPROXIMATED, ENFORCED
from structgen import Grammar


def kinds(count: int, **if_keywords: Any) -> dict[str, Any]:
    """``count`` conditionals on ``kind``: k<i> caps n at i; every other one forbids m == i."""
    return {"allOf": [{"if": {"properties": {"kind": {"const": f"k{i}"}}, **if_keywords},
                       "then": {"properties": {"n": {"maximum": i}}},
                       "else": {"properties": {"m": {"not": {"const": i}}}}} for i in range(count)]}


def test_a_switch_past_the_nesting_limit_is_exact() -> None:
    count = applicators.MAX_NESTED_CONDITIONALS + 4
    schema = kinds(count)
    agrees(schema,
           [{"kind": "k3", "n": 3}, {"kind": "k3", "m": 3}, {"kind": "zz", "m": count}, {}, {"n": 0}, "text", 7,
            {"kind": 5, "m": count}],
           [{"kind": "k3", "n": 4}, {"kind": "k3", "m": 5}, {"kind": "zz", "m": 4}, {"n": 1}, {"kind": 5, "m": 0}])
    entries = translate(schema)[1].entries
    notes = {e.keyword: (e.status, e.note) for e in entries if e.keyword in ("allOf", "if", "then", "else")}
    assert notes["if"] == (ENFORCED, "one branch per value of 'kind', the property the ifs test"), notes
    assert notes["allOf"][0] == ENFORCED and set(notes) == {"allOf", "if", "then", "else"}


def test_required_and_object_type_in_the_ifs_decide_the_other_cases() -> None:
    """An ``if`` requiring the property fails where it is absent; one saying type
    object fails on any other value: their ``else`` applies there."""
    required = kinds(3, required=["kind"])
    agrees(required, [{"m": 3}, {"kind": "k1", "n": 1}], [{"m": 0}, {"m": 2}, {"kind": "k1", "n": 2}])
    typed = kinds(3, type="object")
    agrees(typed, [{"n": 0}, "x", {"kind": "k2", "n": 2}], [{"n": 1}, {"kind": "k2", "m": 0}])
    both = {"allOf": [{"if": {"properties": {"kind": {"const": 0}}, "required": ["kind"], "type": "object"},
                       "then": {"properties": {"n": {"type": "string"}}}, "else": {"type": "object"}},
                      {"if": {"properties": {"kind": {"const": 1}}}, "then": {"properties": {"n": {"type": "integer"}}}}]}
    agrees(both, [{"kind": 0, "n": "a"}, {"kind": 1, "n": 2}, {"n": 3}, {"kind": 2, "n": None}],
           ["x", 3, {"kind": 0, "n": 1}, {"kind": 1, "n": "a"}, {"n": "a"}])


def test_cases_the_schema_rules_out_are_not_built() -> None:
    """A discriminator the schema requires, typed object, listing the tested values:
    only the listed values' cases are left."""
    base = {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": ["a", "b"]}, "x": {}}}
    on = switch.split([base, *[{"if": {"properties": {"kind": {"const": v}}}, "then": {"required": ["x"]}}
                               for v in ("a", "b", "c")]], True)
    assert on is not None
    assert [case for case, _, _ in on[1].cases(base)] == ["'kind' is \"a\"", "'kind' is \"b\""]
    open_kind = {"properties": {"kind": {}}}
    assert [case for case, _, _ in on[1].cases(open_kind)] == [
        "'kind' is \"a\"", "'kind' is \"b\"", "'kind' is \"c\"", "'kind' holds another value",
        "'kind' is absent or the value is not an object"]


@pytest.mark.parametrize("ifs", [
    [{"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"const": "b"}}, "minProperties": 2}],
    [{"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"const": "b", "type": "integer"}}}],
    [{"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"const": "b"}, "other": {"const": 1}}}],
    [{"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"minimum": 1}}}],
    [{"properties": {"kind": {"const": "a"}}}, {"required": ["kind", "other"]}],
    [{"properties": {"kind": {"const": "a"}}}, {"not": {"not": {"properties": {"kind": {"const": "b"}}}}}],
    [{"properties": {"kind": {"const": "a"}}}],  # one
])
def test_other_conditionals_are_no_switch(ifs: list[Any]) -> None:
    assert switch.split([{}, *[{"if": test, "then": {}} for test in ifs]], True) is None


def test_past_the_value_limit_the_conditionals_nest_as_before() -> None:
    at = translate(kinds(switch.MAX_SWITCH_VALUES))[1].entries
    assert [e.status for e in at if e.keyword == "allOf" and e.pointer == ""] == [ENFORCED]
    past = translate(kinds(switch.MAX_SWITCH_VALUES + 1))[1].entries
    assert [e.status for e in past if e.keyword == "allOf" and e.pointer == ""] == [APPROXIMATED]
    assert not any("one branch per value" in e.note for e in past)


def test_past_the_rule_budget_the_conditionals_nest_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three conditionals nest exactly (below ``MAX_NESTED_CONDITIONALS``): the same
    values, without the switch's cases."""
    monkeypatch.setattr(switch, "MAX_SWITCH_RULES", 3)
    schema = kinds(3)
    entries = translate(schema)[1].entries
    assert not any("one branch per value" in e.note for e in entries)
    agrees(schema, [{"kind": "k1", "n": 1}, {"n": 0}], [{"kind": "k1", "n": 2}, {"kind": "zz", "m": 1}])


def test_a_case_whose_merge_is_not_exact_is_named() -> None:
    """Where the value is not an object every then applies; two patterns with lookaheads do not merge."""
    schema = {"allOf": [{"if": {"properties": {"kind": {"const": v}}}, "then": {"pattern": f"^(?!x){v}"}} for v in ("a", "b")]}
    entries = translate(schema)[1].entries
    [verdict] = [e for e in entries if e.keyword == "allOf" and e.pointer == ""]
    assert verdict.status == APPROXIMATED
    assert verdict.note.startswith("merged not exactly where 'kind' is absent or the value is not an object:"), verdict.note
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts('"ab"') and grammar.accepts('{"kind": "a"}')
    with pytest.raises(SchemaError, match="cannot be enforced exactly"):
        translate(schema, Options(strict=True))


def test_a_case_past_a_translation_limit_drops_only_its_branches() -> None:
    """A then that merges a definition into itself (allOf holding its own $ref) goes
    past the limit on references one merge follows: that case is built without its then and else, named in
    the report, and the other cases keep theirs."""
    schema = {"$defs": {"loop": {"allOf": [{"$ref": "#/$defs/loop"}, {"minimum": 1}]}},
              "type": "object", "required": ["kind"], "properties": {"kind": {"enum": ["a", "b"]}, "n": {}},
              "allOf": [{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"properties": {"n": {"$ref": "#/$defs/loop"}}}},
                        {"if": {"properties": {"kind": {"const": "b"}}}, "then": {"properties": {"n": {"type": "string"}}}}]}
    entries = translate(schema)[1].entries
    [verdict] = [e for e in entries if e.keyword == "allOf" and e.pointer == ""]
    assert verdict.status == APPROXIMATED and "where 'kind' is \"a\" (its then and else left out:" in verdict.note
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts('{"kind": "a", "n": 0}')  # wider there
    assert grammar.accepts('{"kind": "b", "n": "x"}') and not grammar.accepts('{"kind": "b", "n": 0}')
    with pytest.raises(SchemaError, match="allOf follows more than"):
        translate(schema, Options(strict=True))


EXCLUSIVE = ["basic", "token", "oauth"]


def exclusive(names: list[str]) -> dict[str, Any]:
    """At most one of ``names`` holds a value other than null, as SchemaStore's
    prometheus writes it: one conditional per name, on the others."""
    return {"type": "object", "properties": {name: {"type": ["integer", "null"]} for name in names},
            "allOf": [{"if": {"not": {"properties": {name: {"const": None}}}},
                       "then": {"properties": {other: {"const": None} for other in names if other != name}}}
                      for name in names]}


def objects(names: list[str], values: list[Any]) -> list[dict[str, Any]]:
    """Every object whose properties are some of ``names`` (in that order), each
    holding one of ``values``."""
    found: list[dict[str, Any]] = [{}]
    for name in names:
        found = [instance | ({} if value is _ABSENT else {name: value}) for instance in found
                 for value in [_ABSENT, *values]]
    return found


_ABSENT = object()


def test_mutually_exclusive_properties_are_exact_with_a_case_each() -> None:
    """Six conditionals on three names: of the 2^3 combinations of "null or absent"
    and "another value", the three with two names set are ruled out by the thens
    and not built; the none-set case takes the values that are no object too."""
    schema = exclusive(EXCLUSIVE)
    instances = [*objects(EXCLUSIVE, [None, 1]), "x", 3, None, [1]]
    validator = jsonschema.Draft202012Validator(schema)
    valid = [i for i in instances if validator.is_valid(i)]
    agrees(schema, valid, [i for i in instances if not validator.is_valid(i)])
    assert {"basic": 1, "token": None} in valid and {"basic": 1, "oauth": 1} not in valid
    parts = [{"properties": schema["properties"]}, *schema["allOf"]]
    kept, on = switch.split(parts, True) or pytest.fail("no switch")
    assert [case for case, _, _ in on.cases({"properties": schema["properties"]})] == [
        "('basic' is null or 'basic' is absent) and ('token' is null or 'token' is absent) and "
        "('oauth' is null or 'oauth' is absent) or the value is not an object",
        "('basic' is null or 'basic' is absent) and ('token' is null or 'token' is absent) and "
        "'oauth' holds another value",
        "('basic' is null or 'basic' is absent) and 'token' holds another value and "
        "('oauth' is null or 'oauth' is absent)",
        "'basic' holds another value and ('token' is null or 'token' is absent) and "
        "('oauth' is null or 'oauth' is absent)"]
    [note] = {e.note for e in translate(schema)[1].entries if e.keyword == "if"}
    assert note == "one branch per case of 'basic', 'token', 'oauth', the properties the ifs test"


def test_presence_enum_and_negated_tests_on_several_properties() -> None:
    """``required`` alone tests presence, an ``enum`` several constants, ``not`` the
    opposite; each combination of what the properties hold is checked against
    jsonschema."""
    schema = {"properties": {"a": {}, "b": {}, "c": {}},
              "allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}},
                        {"if": {"properties": {"b": {"enum": [1, 2]}}, "required": ["b"]},
                         "then": {"properties": {"c": {"const": 1}}}, "else": {"properties": {"c": {"const": 2}}}},
                        {"if": {"not": {"properties": {"c": {"const": 1}}}}, "then": {"not": {"required": ["a"]}}},
                        {"if": {"properties": {"a": {"const": 3}}, "type": "object"}, "else": {"maxProperties": 2}}]}
    instances = [*objects(["a", "b", "c"], [1, 2, 3]), "x", 0]
    validator = jsonschema.Draft202012Validator(schema)
    valid = [i for i in instances if validator.is_valid(i)]
    assert 0 < len(valid) < len(instances)
    agrees(schema, valid, [i for i in instances if not validator.is_valid(i)])
    assert switch.split([{}, *schema["allOf"]], True) is not None


def test_past_the_case_limit_the_conditionals_nest_as_before() -> None:
    """One constant per property is three kinds each: six properties are 729
    combinations, seven 2,187 (past ``MAX_SWITCH_CASES``)."""
    def tests(count: int) -> list[Any]:
        return [{}, *[{"if": {"properties": {f"p{i}": {"const": i}}}, "then": {"required": ["x"]}} for i in range(count)]]

    assert 3 ** 6 <= switch.MAX_SWITCH_CASES < 3 ** 7
    assert switch.split(tests(6), True) is not None
    assert switch.split(tests(7), True) is None

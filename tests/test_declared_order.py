"""The conformance harness's rewrite of an instance in declared property order
(benchmarks/declared_order.py): the same JSON value, keys as the schema declares."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType

import pytest

from structgen import Grammar


@pytest.fixture(scope="module")
def declared_order(benchmark_module: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_module("declared_order")


SCHEMA = {
    "$defs": {"point": {"properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
    "properties": {
        "id": {"type": "integer"},
        "where": {"$ref": "#/$defs/point"},
        "tags": {"items": {"anyOf": [{"properties": {"k": {}, "v": {}}}, {"type": "string"}]}},
    },
    "anyOf": [{"properties": {"extra": {"type": "boolean"}}}],
}


def test_keys_follow_the_declared_order_through_references_and_branches(declared_order: ModuleType) -> None:
    data = {"extra": True, "tags": [{"v": 1, "k": 2}, "a"], "note": 0, "where": {"y": 1, "x": 2}, "id": 7}
    ordered = declared_order.rewritten(SCHEMA, data)
    assert ordered == data  # the same JSON value
    assert json.dumps(ordered) == ('{"id": 7, "where": {"x": 2, "y": 1}, "tags": [{"k": 2, "v": 1}, "a"], '
                                   '"extra": true, "note": 0}')
    grammar = Grammar.from_json_schema(SCHEMA)
    assert grammar.accepts(json.dumps(ordered)) and not grammar.accepts(json.dumps(data))


def test_a_recursive_schema_ends(declared_order: ModuleType) -> None:
    schema = {"$ref": "#", "properties": {"b": {"$ref": "#"}, "a": {}}}
    nested: dict[str, object] = {"a": 1}
    for _ in range(100):
        nested = {"a": 1, "b": nested}
    assert declared_order.rewritten(schema, nested) == nested


def test_values_under_pattern_properties_are_rewritten_too(declared_order: ModuleType) -> None:
    """Docker Compose schemas (Github o6084): services under ``patternProperties``."""
    schema = {"properties": {"services": {"patternProperties": {"^[a-z]+$": {"$ref": "#/$defs/service"}},
                                          "additionalProperties": False}, "version": {"type": "string"}},
              "$defs": {"service": {"properties": {"image": {"type": "string"}, "ports": {"type": "array"}}}}}
    data = {"version": "3", "services": {"web": {"ports": [], "image": "nginx"}}}
    ordered = declared_order.rewritten(schema, data)
    assert ordered == data
    assert json.dumps(ordered) == '{"services": {"web": {"image": "nginx", "ports": []}}, "version": "3"}'
    assert Grammar.from_json_schema(schema).accepts(json.dumps(ordered))


def test_an_object_follows_the_branch_that_declares_its_keys(declared_order: ModuleType) -> None:
    """SchemaStore codux: a oneOf of a script (``command`` first) and a batch (``run``
    first); a batch's keys follow the batch's order, not the first branch's."""
    schema = {"additionalProperties": {"oneOf": [
        {"properties": {"command": {}, "title": {}}, "required": ["command"]},
        {"properties": {"run": {}, "title": {}}, "required": ["run"]}]}}
    data = {"s1": {"title": "a", "command": "x"}, "s2": {"title": "b", "run": ["x"]}}
    ordered = declared_order.rewritten(schema, data)
    assert json.dumps(ordered) == '{"s1": {"command": "x", "title": "a"}, "s2": {"run": ["x"], "title": "b"}}'
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts(json.dumps(ordered)) and not grammar.accepts(json.dumps(data))


def test_a_combinator_written_first_declares_its_new_names_first(declared_order: ModuleType) -> None:
    """As the grammar reads it (schema2grammar: declared order through combinators)."""
    schema = {"allOf": [{"oneOf": [{"properties": {"from": {}}}]}, {"properties": {"subject": {}}}],
              "properties": {"id": {}}}
    data = {"id": 1, "subject": "s", "from": "f"}
    ordered = declared_order.rewritten(schema, data)
    assert list(ordered) == ["from", "subject", "id"]
    assert Grammar.from_json_schema(schema).accepts(json.dumps(ordered))


def test_conditionals_declare_their_names_after_the_others(declared_order: ModuleType) -> None:
    """SchemaStore minecraft-predicate: an allOf of if/then parts, one per value of
    ``conditions``; the names of the then the if picks follow the schema's own, and
    the values under them follow that then's schemas."""
    schema = {"allOf": [{"if": {"properties": {"conditions": {"const": c}}},
                         "then": {"properties": {"entity": {}, "predicate": {"properties": {"flags": {}, "type": {}}}}}
                         if c == "entity" else {"properties": {"chance": {}}}} for c in ("chance", "entity")],
              "properties": {"conditions": {"enum": ["chance", "entity"]}}}
    data = {"predicate": {"type": "player", "flags": {}}, "conditions": "entity", "entity": "this"}
    ordered = declared_order.rewritten(schema, data)
    assert json.dumps(ordered) == ('{"conditions": "entity", "entity": "this", '
                                   '"predicate": {"flags": {}, "type": "player"}}')
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts(json.dumps(ordered)) and not grammar.accepts(json.dumps(data))


def test_an_object_follows_the_branch_it_is_valid_against(declared_order: ModuleType) -> None:
    """MCP ServerRequest, jsend o71265, sourcemap-v3: branches declaring the same keys
    tie on their count; the one the object is valid against (its references read in
    the whole schema: ``#`` is the root, not the branch) orders the values below."""
    schema = {"$defs": {"ping": {"properties": {"method": {"const": "ping"}, "params": {"properties": {"meta": {}}}}},
                        "sample": {"properties": {"method": {"const": "sample"},
                                                  "params": {"properties": {"max": {}, "messages": {}}}}}},
              "anyOf": [{"$ref": "#/$defs/ping"}, {"$ref": "#/$defs/sample"}]}
    data = {"method": "sample", "params": {"messages": [], "max": 1}}
    ordered = declared_order.rewritten(schema, data)
    assert json.dumps(ordered) == '{"method": "sample", "params": {"max": 1, "messages": []}}'
    grammar = Grammar.from_json_schema(schema)
    assert grammar.accepts(json.dumps(ordered)) and not grammar.accepts(json.dumps(data))
    recursive = {"properties": {"n": {"type": "integer", "minimum": 1}, "sections": {"items": {"anyOf": [
        {"properties": {"url": {}, "at": {}}}, {"properties": {"map": {"$ref": "#"}, "at": {}}}]}}}}
    section = {"map": {"n": 0}, "at": 1}  # the map is no valid root: the first branch holds, map undeclared there
    assert list(declared_order.rewritten(recursive, {"sections": [section]})["sections"][0]) == ["at", "map"]

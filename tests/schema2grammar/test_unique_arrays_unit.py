"""``schema2grammar.unique_arrays``: the formulas the matcher follows to check ``uniqueItems``.

Built through the public entry (``schema2grammar.translate_checked``, as
``structgen.Grammar.from_json_schema`` builds them), and checked against:

- the schema itself: ``child``/``item`` lead to the node of the subschema that
  ``properties``, ``patternProperties``, ``additionalProperties``, ``prefixItems``,
  ``items`` (and draft 2019's ``items`` tuple / ``additionalItems``) name;
- ``jsonschema`` as the oracle of validity: in every instance it accepts, every
  array at a node the formulas call unique (or checked) holds no item twice (JSON
  equality: ``1 == 1.0``, ``true != 1``), which is what makes the matcher's refusals
  safe; and hand-read answers on which arrays are checked;
- the limits: past ``MAX_EXPLORED`` or ``MAX_PATTERN_SUBSETS`` or ``MAX_OPEN_DEPTH``
  the answer is "not exact" / "not checked" (never a stronger claim), and a tiny
  ``MAX_MEMO`` changes no answer.
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction
from typing import Any

import jsonschema
import pytest

from schema2grammar import ENFORCED, translate_checked, unique_arrays
from schema2grammar.unique_arrays import FALSE, TRUE, UNKNOWN, Formulas

STRINGS = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}


def formulas_of(schema: Any) -> tuple[Formulas, int]:
    translation = translate_checked(schema)
    report, arrays = translation.report, translation.unique_arrays
    assert arrays is not None, [(e.keyword, e.status) for e in report.entries]
    return arrays.formulas, arrays.root


def test_children_and_items_are_the_nodes_of_the_subschemas_the_schema_names() -> None:
    a, b, c = {"type": "string", "title": "A"}, {"type": "integer", "title": "B"}, {"type": "boolean", "title": "C"}
    extra = {"type": "number", "title": "extra"}
    tagged = {"type": "string", "title": "x-tagged"}
    schema = {
        "type": "object",
        "properties": {"tags": STRINGS, "pair": {"type": "array", "prefixItems": [a, b], "items": c}},
        "patternProperties": {"^x-": tagged},
        "additionalProperties": extra,
    }
    f, root = formulas_of(schema)
    assert f.child(root, "tags") == f.of(STRINGS)
    assert f.item(f.child(root, "tags"), 0) == f.item(f.child(root, "tags"), 7) == f.of(STRINGS["items"])
    pair = f.child(root, "pair")
    assert pair == f.of(schema["properties"]["pair"])
    assert [f.item(pair, i) for i in range(5)] == [f.of(a), f.of(b), f.of(c), f.of(c), f.of(c)]
    assert f.prefix_length(pair) == 2
    assert f.child(root, "x-1") == f.of(tagged)  # a pattern's name: not additionalProperties
    assert f.child(root, "other") == f.of(extra)
    assert f.names(root) == ["pair", "tags"] and f.patterns(root) == ["^x-"]
    assert f.unique(f.child(root, "tags")) and f.checked(f.child(root, "tags"))
    assert not f.unique(root) and not f.unique(pair)


def test_closed_objects_and_draft_2019_tuples() -> None:
    first, rest = {"type": "string", "title": "first"}, {"type": "integer", "title": "rest"}
    schema = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "type": "object", "additionalProperties": False,
        "properties": {"t": {"type": "array", "items": [first], "additionalItems": rest}, "u": STRINGS},
    }
    f, root = formulas_of(schema)
    assert f.child(root, "nope") == FALSE
    t = f.child(root, "t")
    assert [f.item(t, i) for i in range(3)] == [f.of(first), f.of(rest), f.of(rest)]
    assert f.of({}) == f.of(True) == TRUE and f.of(False) == FALSE


def test_ref_all_of_and_any_of_combine_as_the_schema_says() -> None:
    schema = {
        "$defs": {"tags": STRINGS},
        "type": "object",
        "properties": {
            "ref": {"$ref": "#/$defs/tags"},
            "all": {"allOf": [{"type": "array", "items": {"type": "string"}}, {"uniqueItems": True}]},
            "optional": {"anyOf": [STRINGS, {"type": "null"}]},  # the null branch holds no array
            "either": {"anyOf": [STRINGS, {"type": "array", "items": {"type": "integer"}}]},
        },
    }
    f = Formulas(schema, _draft(schema))  # "either" leaves the report approximated: built directly
    root = f.of(schema)
    verdicts = {name: (f.unique(f.child(root, name)), f.checked(f.child(root, name))) for name in schema["properties"]}
    assert verdicts == {"ref": (True, True), "all": (True, True), "optional": (True, True), "either": (False, False)}


@pytest.mark.parametrize("schema, checked", [
    (STRINGS, True),
    ({"type": "array", "items": {"type": "string", "pattern": "^[ab]$"}, "uniqueItems": True}, True),  # two values
    ({"type": "array", "items": {"type": "string", "pattern": "^[ab]$"}, "minItems": 3, "uniqueItems": True}, False),
    ({"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 3, "uniqueItems": True}, True),
    ({"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 4, "uniqueItems": True}, False),
    ({"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}, "uniqueItems": True}, False),
    ({"type": "array", "prefixItems": [{"type": "string"}], "uniqueItems": True}, False),
    ({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "uniqueItems": True}, False),
    ({"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True}, True),
])
def test_which_arrays_are_checked(schema: dict[str, Any], checked: bool) -> None:
    """Hand-read: unique, no tuple or ``contains``, and items whose values are
    endless or counted at least ``minItems``."""
    wrapped = {"type": "object", "properties": {"it": schema, "anchor": STRINGS}}  # anchor: one upgrade at least
    f, root = formulas_of(wrapped)
    node = f.child(root, "it")
    assert f.unique(node)
    assert f.checked(node) == checked
    room = f.room(f.item(node, 0))
    assert (room is None or room != UNKNOWN) or not checked


# -- jsonschema as the oracle: a unique node's arrays are unique in every valid instance


def _key(value: Any) -> Any:
    """JSON equality as a hashable key (numbers by value, booleans apart from them)."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", Fraction(value))
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(_key(v) for v in value))
    return ("object", frozenset((k, _key(v)) for k, v in value.items()))


def _violations(f: Formulas, node: int, value: Any, path: str = "") -> list[str]:
    found = []
    if isinstance(value, list):
        keys = [_key(v) for v in value]
        if f.unique(node) and len(set(keys)) < len(keys):
            found.append(path + " unique")
        if f.checked(node) and not f.unique(node):
            found.append(path + " checked but not unique")
        for i, v in enumerate(value):
            found += _violations(f, f.item(node, i), v, f"{path}/{i}")
    elif isinstance(value, dict):
        for k, v in value.items():
            found += _violations(f, f.child(node, k), v, f"{path}/{k}")
    return found


ORACLE_SCHEMAS = [
    {"type": "object", "properties": {"tags": STRINGS, "n": {"type": "array", "items": {"type": "integer"}}}},
    {"type": "array", "items": STRINGS, "uniqueItems": True},  # sets of sets
    {"anyOf": [STRINGS, {"type": "null"}, {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}]},
    {"oneOf": [{"type": "array", "items": {"type": "string"}, "uniqueItems": True},
               {"type": "array", "items": {"type": "number"}, "uniqueItems": True}]},
    {"allOf": [{"type": "array"}, {"uniqueItems": True}], "items": {"type": ["string", "number", "boolean"]}},
    {"type": "object", "patternProperties": {"^s": STRINGS, "^n": {"type": "array", "uniqueItems": False}},
     "additionalProperties": {"type": "array", "items": {"type": "number"}, "uniqueItems": True}},
    {"type": "object", "if": {"required": ["u"]}, "then": {"properties": {"v": STRINGS}},
     "else": {"properties": {"v": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}},
    {"$defs": {"node": {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"},
                                                                  "uniqueItems": True},
                                                          "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
     "$ref": "#/$defs/node"},
    {"type": "array", "prefixItems": [STRINGS], "items": {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True}},
]

KEYS = ["tags", "n", "s1", "n1", "x", "u", "v", "ids", "kids"]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.45:
        return [_random_value(rng, depth + 2) for _ in range(rng.randrange(4))]
    if depth < 3 and roll < 0.6:
        return {k: _random_value(rng, depth + 1) for k in rng.sample(KEYS, rng.randrange(3))}
    return rng.choice(["a", "b", "a", 1, 1.0, 2, True, False, None, [], {}])


@pytest.mark.parametrize("index", range(len(ORACLE_SCHEMAS)))
def test_arrays_at_unique_nodes_are_unique_in_every_instance_jsonschema_accepts(index: int) -> None:
    schema = ORACLE_SCHEMAS[index]
    f, root = formulas_of(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(index)
    valid = refused = 0
    for _ in range(3000):
        value = _random_value(rng)
        if rng.random() < 0.5 and isinstance(value, list):  # make a repeat likely
            value.append(copy.deepcopy(rng.choice(value)) if value else "a")
        if not validator.is_valid(value):
            refused += 1
            continue
        valid += 1
        assert not _violations(f, root, value), (value, _violations(f, root, value))
    assert valid > 30 and refused > 30


def test_the_oracle_finds_repeats() -> None:
    """A repeat at a unique node is reported: the check above can fail."""
    f, root = formulas_of(ORACLE_SCHEMAS[0])
    assert _violations(f, root, {"tags": ["a", "a"], "n": [1, 1]}) == ["/tags unique"]
    f, root = formulas_of(ORACLE_SCHEMAS[4])
    assert _violations(f, root, [1, 1.0]) == [" unique"]
    assert _violations(f, root, [1, True]) == []


# -- limits: never a stronger claim


def test_past_max_explored_nothing_is_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "properties": {f"p{i}": {**STRINGS, "title": str(i)} for i in range(20)}}
    f, root = formulas_of(schema)
    reached = f.explore(root)
    assert reached is not None and all(reached.values())
    assert all(f.child(root, f"p{i}") in reached for i in range(20))
    monkeypatch.setattr(unique_arrays, "MAX_EXPLORED", 10)
    assert f.explore(root) is None
    translation = translate_checked(schema)
    report, arrays = translation.report, translation.unique_arrays
    assert arrays is None and ENFORCED not in {e.status for e in report.entries if e.keyword == "uniqueItems"}


def test_past_max_pattern_subsets_the_places_below_are_not_exact() -> None:
    def schema(count: int) -> dict[str, Any]:
        return {"type": "object", "patternProperties": {f"^p{i}": {**STRINGS, "title": str(i)} for i in range(count)}}

    limit = unique_arrays.MAX_PATTERN_SUBSETS
    f, root = formulas_of(schema(limit))
    reached = f.explore(root)
    assert reached is not None and all(reached.values())
    assert len(reached) > 2 ** limit  # one child per subset of patterns (and their items)
    too_many = schema(limit + 1)
    f = Formulas(too_many, _draft(too_many))
    root = f.of(too_many)
    reached = f.explore(root)
    assert reached is not None
    below = [n for n in reached if n != root]
    assert below and not any(reached[n] for n in below if f.unique(n))


def test_past_max_open_depth_the_room_is_unknown_and_the_array_not_checked() -> None:
    deep: Any = {"type": "string"}
    for _ in range(unique_arrays.MAX_OPEN_DEPTH + 2):
        deep = {"type": "array", "items": deep}
    shallow: Any = {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
    schema = {"type": "object", "properties": {"deep": {"type": "array", "items": deep, "uniqueItems": True},
                                               "shallow": {"type": "array", "items": shallow, "uniqueItems": True}}}
    f = Formulas(schema, _draft(schema))
    root = f.of(schema)
    assert f.room(f.item(f.child(root, "shallow"), 0)) is None and f.checked(f.child(root, "shallow"))
    assert f.room(f.item(f.child(root, "deep"), 0)) == UNKNOWN and not f.checked(f.child(root, "deep"))


def test_a_tiny_memo_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = ORACLE_SCHEMAS[5]
    names = ["s", "s1", "n", "n1", "x", "tags", "é", ""]

    def answers() -> list[Any]:
        f = Formulas(schema, _draft(schema))
        root = f.of(schema)
        out = []
        for name in names * 2:
            node = f.child(root, name)
            out.append((name, f.unique(node), f.checked(node), f.admits(node), f.unique(f.item(node, 0))))
        return out

    before = answers()
    monkeypatch.setattr(unique_arrays, "MAX_MEMO", 1)
    assert answers() == before
    assert [(n, u) for n, u, *_ in before[:5]] == [("s", True), ("s1", True), ("n", False), ("n1", False), ("x", True)]


def _draft(schema: Any) -> Any:
    """The draft the translator reads for a 2020-12 document (as ``applicators.draft_of``
    gives it), with local references resolved in ``schema``."""
    from schema2grammar import conditions, shared
    return conditions.Draft(float_integers=True, format_assertion=False,
                            resolve=lambda ref: shared.follow_pointer(schema, ref))

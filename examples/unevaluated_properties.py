"""``unevaluatedProperties`` and ``unevaluatedItems``, enforced by the grammar where
what the adjacent keywords evaluate is known per branch (``allOf``, ``$ref``,
``anyOf``/``oneOf``, ``if``/``then``/``else``, ``dependentSchemas``, ``contains``); the report,
and what the grammar accepts next to what jsonschema says.

Run: .venv/bin/python examples/unevaluated_properties.py
"""

import json

import jsonschema

import structgen

DRAFT = "https://json-schema.org/draft/2020-12/schema"
schemas = {
    # a base object extended through $ref and closed: additionalProperties could not
    # do this (it does not see the properties the reference declares)
    "closed extension": ({
        "$schema": DRAFT,
        "$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
        "$ref": "#/$defs/base",
        "properties": {"name": {"type": "string"}},
        "unevaluatedProperties": False,
    }, [{"id": 1, "name": "a"}, {"id": 1, "extra": True}]),
    # a tagged union: each branch's names are allowed where that branch passes
    "tagged union": ({
        "$schema": DRAFT,
        "type": "object",
        "properties": {"kind": {"enum": ["card", "bank"]}},
        "required": ["kind"],
        "if": {"properties": {"kind": {"const": "card"}}},
        "then": {"properties": {"number": {"type": "string"}}},
        "else": {"properties": {"account": {"type": "string"}}},
        "unevaluatedProperties": False,
    }, [{"kind": "card", "number": "4111"}, {"kind": "card", "account": "DE12"}, {"kind": "bank", "account": "DE12"}]),
    # a header tuple, then only strings
    "items after a tuple": ({
        "$schema": DRAFT,
        "prefixItems": [{"type": "integer"}],
        "allOf": [{"prefixItems": [True, {"type": "boolean"}]}],
        "unevaluatedItems": {"type": "string"},
    }, [[1, True, "a", "b"], [1, True, 2]]),
    # contains evaluates the items it matches (2020-12): the rest must be null
    "contains": ({"$schema": DRAFT, "contains": {"type": "string"}, "unevaluatedItems": {"type": "null"}},
                 [["a", None, "b"], ["a", 1]]),
}

for name, (schema, instances) in schemas.items():
    grammar = structgen.Grammar.from_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    print(f"{name}: exact {grammar.report.exact}")
    for instance in instances:
        text = json.dumps(instance)
        print(f"  {text:40} grammar {grammar.accepts(text)!s:5} jsonschema {validator.is_valid(instance)}")

# What a $dynamicRef evaluates is resolved at run time: the keyword is reported
# approximated and the grammar is wider (the output is then re-validated with jsonschema).
loose = structgen.Grammar.from_json_schema({"$schema": DRAFT, "$defs": {"extra": {"$dynamicAnchor": "extra"}},
                                            "$dynamicRef": "#extra", "unevaluatedProperties": False})
print(loose.report)

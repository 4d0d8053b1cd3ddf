"""``not`` (of ``patternProperties`` too), ``if``/``then``/``else`` (a switch of them too), ``contains``,
``uniqueItems`` and a ``oneOf`` whose branches may overlap, enforced by the grammar
where the values a schema refuses have an exact grammar (a complement); the report,
and what the grammar accepts next to what jsonschema says.

Run: .venv/bin/python examples/conditional_keywords.py
"""

import json

import jsonschema

import structgen

schemas = {
    # a discriminator: a card payment needs a number, any other kind an account
    "if/then/else": ({
        "type": "object",
        "properties": {"kind": {"enum": ["card", "bank"]}, "number": {"type": "string"}, "account": {"type": "string"}},
        "required": ["kind"],
        "if": {"properties": {"kind": {"const": "card"}}, "required": ["kind"]},
        "then": {"required": ["number"]},
        "else": {"required": ["account"]},
    }, [{"kind": "card", "number": "4111"}, {"kind": "card", "account": "DE12"}, {"kind": "bank", "account": "DE12"},
        {"kind": "bank", "number": "4111"}]),
    # a switch: one if per shape, each testing "shape" against a constant; built as
    # one branch per case (schema2grammar/switch.py), exact past the 6 nested ifs
    "switch": ({
        "type": "object",
        "properties": {"shape": {"type": "string"}, "r": {"type": "number"}, "w": {"type": "number"}},
        "required": ["shape"],
        "allOf": [{"if": {"properties": {"shape": {"const": shape}}}, "then": {"required": needs}}
                  for shape, needs in [("circle", ["r"]), ("square", ["w"]), ("disc", ["r"]), ("tile", ["w"]),
                                       ("ring", ["r"]), ("board", ["w"]), ("coin", ["r"]), ("plate", ["w"])]],
    }, [{"shape": "coin", "r": 1}, {"shape": "coin", "w": 1}, {"shape": "plate", "w": 2}, {"shape": "blob"}]),
    # at most one way to sign in, written as SchemaStore's prometheus writes it: for
    # each method, "if it is set (not null), the others are null"; a switch on three
    # properties, whose cases with two methods set are ruled out and not built
    "mutually exclusive": ({
        "type": "object",
        "properties": {method: {"type": ["string", "null"]} for method in ("password", "token", "oauth")},
        "allOf": [{"if": {"not": {"properties": {method: {"const": None}}}},
                   "then": {"properties": {other: {"const": None} for other in ("password", "token", "oauth")
                                           if other != method}}} for method in ("password", "token", "oauth")],
    }, [{"token": "t"}, {"password": None, "oauth": "o"}, {"password": "p", "token": "t"}, {}]),
    # some "x-" property that is not a string: the complement of patternProperties,
    # a bit in the object's rules set by such a property, needed to close it
    "not patternProperties": ({"type": "object", "not": {"patternProperties": {"^x-": {"type": "string"}}}},
                              [{"x-a": 1}, {"x-a": "s"}, {"x-a": "s", "x-b": 2}, {"b": 1}]),
    # any string but these (in any spelling: "\u0061dmin" is "admin")
    "not": ({"type": "string", "not": {"enum": ["admin", "root"]}}, ["alice", "admin", "root", "\\u0061dmin"]),
    # one or two of the items are 0
    "contains": ({"type": "array", "items": {"type": "integer"}, "contains": {"const": 0}, "minContains": 1,
                  "maxContains": 2}, [[1, 0], [0, 0], [1, 2], [0, 0, 0]]),
    # exactly one of the two names: an object with both matches two branches
    "oneOf": ({"type": "object", "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
               "oneOf": [{"required": ["email"]}, {"required": ["phone"]}]},
              [{"email": "a@b.c"}, {"phone": "555"}, {"email": "a@b.c", "phone": "555"}, {}]),
    # a list of numbers, or a list of at least two: one number matches both, and is refused
    "oneOf over arrays": ({"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "array", "minItems": 2}]},
                          [[1], ["a", "b"], [1, 2], ["a"]]),
    # the location is a map point or a catchment, whose definition a $ref names; not both
    "oneOf with references": ({"$defs": {"point": {"type": "object", "required": ["x"]}, "name": {"type": "string"}},
                               "type": "object",
                               "oneOf": [{"required": ["map"], "properties": {"map": {"$ref": "#/$defs/point"}}},
                                         {"required": ["catchment"], "properties": {"catchment": {"$ref": "#/$defs/name"}}}]},
                              [{"map": {"x": 1}}, {"catchment": "C1"}, {"map": {"x": 1}, "catchment": "C1"}]),
    # tagged variants closed to other names: no complement of a closed object is
    # needed, the tags tell the branches apart (and any non-object matches both)
    "oneOf of tagged variants": ({"oneOf": [
        {"properties": {"kind": {"const": "card"}, "number": {"type": "string"}}, "required": ["kind", "number"],
         "additionalProperties": False},
        {"properties": {"kind": {"const": "cash"}}, "required": ["kind"], "additionalProperties": False}]},
        [{"kind": "card", "number": "4111"}, {"kind": "cash"}, {"kind": "cash", "number": "4111"}, 5]),
    # listed objects less those a closed object schema accepts (judged by a validator)
    "enum beside not": ({"enum": [{"id": 1}, {"id": 1, "note": "x"}, {"v1": 2}],
                         "not": {"properties": {"id": {}}, "patternProperties": {"^v": {}}, "additionalProperties": False}},
                        [{"id": 1}, {"id": 1, "note": "x"}, {"v1": 2}]),
    # tags from a list, each at most once
    "uniqueItems": ({"type": "array", "items": {"enum": ["red", "green", "blue"]}, "uniqueItems": True},
                    [["red", "blue"], ["red", "red"]]),
}

for name, (schema, instances) in schemas.items():
    grammar = structgen.Grammar.from_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    print(f"{name}: exact {grammar.report.exact}")
    for instance in instances:
        text = json.dumps(instance) if not isinstance(instance, str) else f'"{instance}"'
        value = json.loads(text)
        print(f"  {text:40} grammar {grammar.accepts(text)!s:5} jsonschema {validator.is_valid(value)}")

# Where no exact complement exists, the keyword is reported approximated and the
# grammar is wider (the output is then re-validated with jsonschema).
loose = structgen.Grammar.from_json_schema({"type": "object", "not": {"properties": {"a": {}}, "additionalProperties": False}})
print(loose.report)

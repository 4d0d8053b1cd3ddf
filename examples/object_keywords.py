"""Keywords that look at the whole object, enforced by the grammar: property counts
(``minProperties``/``maxProperties``), ``dependentRequired`` and ``dependentSchemas``;
the report, and what the grammar accepts next to what jsonschema says, in the
declared property order and in any order.

Run: .venv/bin/python examples/object_keywords.py
"""

import json

import jsonschema

import structgen

schema = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"},
                   "card": {"type": "string"}},
    "additionalProperties": {"type": "string"},
    "minProperties": 1,
    "maxProperties": 4,
    "dependentRequired": {"street": ["city"], "zip": ["city"]},  # city comes after street, before zip
    "dependentSchemas": {"card": {"required": ["billing"], "properties": {"billing": {"minLength": 5}}}},
}

grammar = structgen.Grammar.from_json_schema(schema)
print(grammar.report)
validator = jsonschema.Draft202012Validator(schema)
for instance in [
    {"street": "Main St", "city": "Springfield"},
    {"street": "Main St"},  # street needs city
    {"city": "Springfield", "zip": "12345"},
    {"zip": "12345"},  # zip needs city, declared before it
    {"card": "4111", "billing": "Home address"},
    {"card": "4111", "billing": "Home"},  # beside card, billing needs 5 characters
    {"card": "4111"},  # card needs billing
    {},  # minProperties
    {"street": "a", "city": "b", "zip": "c", "note": "d", "extra": "e"},  # maxProperties
]:
    text = json.dumps(instance)
    print(f"{text:70} grammar {grammar.accepts(text)!s:5} jsonschema {validator.is_valid(instance)}")

# The same keywords with the properties in any order (property_order="any"): for
# checking what a model or a person wrote, where JSON's order is free.
unordered = structgen.Grammar.from_json_schema(schema, property_order="any")
for instance in [
    {"city": "Springfield", "street": "Main St"},  # declared order: street first
    {"billing": "Home address", "card": "4111"},
    {"zip": "12345", "street": "Main St"},  # still needs city
]:
    text = json.dumps(instance)
    print(f"any order: {text:59} grammar {unordered.accepts(text)!s:5} jsonschema {validator.is_valid(instance)}")

"""``propertyNames`` and a ``not`` of a ``pattern``, enforced exactly: the strings a
schema accepts read as automata (``schema2grammar.string_sets``), their product
turned back into one terminal's regex.

Run: .venv/bin/python examples/property_names.py

Internals at work: it imports ``schema2grammar.complement``, documented but not public API (docs/design.md §5).
"""

import json

import structgen
from schema2grammar import string_sets
from schema2grammar.complement import Draft

# A set of strings on its own: lower-case words of at most 8 characters, "id" excepted.
names_schema = {"pattern": "^[a-z_]+$", "maxLength": 8, "not": {"const": "id"}}
names = string_sets.of_schema(names_schema, "#/propertyNames", Draft(float_integers=True, format_assertion=True))
print("formula:", names.formula)
print("regex:", string_sets.spelled(names))
print({word: names.holds(word) for word in ["user_id", "id", "UserId", "very_long_name"]})

# The same set as the names of an object's properties, declared ones included.
schema = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "additionalProperties": {"type": "integer"},
    "propertyNames": names_schema,
}
grammar = structgen.Grammar.from_json_schema(schema)
print(grammar.report)
for instance in [
    {"name": "a", "retries": 3},
    {"id": 1},  # a declared name propertyNames refuses: absent
    {"name": "a", "Retries": 3},  # upper case
    {"name": "a", "retry_count": 3},  # 11 characters
]:
    text = json.dumps(instance)
    print(f"{'accepted' if grammar.accepts(text) else 'refused '}  {text}")

# A string that no pattern of a oneOf but one finds: each branch less the others.
version = structgen.Grammar.from_json_schema(
    {"type": "string", "oneOf": [{"pattern": "^v[0-9]"}, {"pattern": "-rc$"}]})
for text in ["v1.2", "2.0-rc", "v2.0-rc", "2.0"]:
    print(f"{'accepted' if version.accepts(json.dumps(text)) else 'refused '}  {json.dumps(text)}")

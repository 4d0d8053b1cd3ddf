"""``patternProperties`` enforced exactly: which names take which schema, the regex
of each set of names, and what the grammar accepts.

Run: .venv/bin/python examples/pattern_properties.py
"""

import json

import structgen
from schema2grammar import property_names

schema = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "patternProperties": {"^x-": {"type": "integer"}, "_count$": {"type": "integer", "minimum": 0}},
    "additionalProperties": {"type": "boolean"},
    "required": ["name"],
}

for region in property_names.regions(list(schema["patternProperties"]), list(schema["properties"])):
    matched = [list(schema["patternProperties"])[i] for i in region.matched] or ["(none: additionalProperties)"]
    print(f"names matching {matched}: regex of {len(region.regex)} characters")

grammar = structgen.Grammar.from_json_schema(schema)
print(grammar.report)
for instance in [
    {"name": "a", "x-rev": 3, "retry_count": 2, "verbose": True},
    {"name": "a", "x-rev": "3"},  # a pattern's schema: an integer
    {"name": "a", "x-a_count": -1},  # both patterns: an integer, at least 0
    {"name": "a", "verbose": 1},  # no pattern: additionalProperties, a boolean
]:
    text = json.dumps(instance, ensure_ascii=False)
    print(f"{'accepted' if grammar.accepts(text) else 'refused '}  {text}")

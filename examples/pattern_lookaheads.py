"""Lookaheads at the start of a ``pattern``: password rules, reserved words left
out of identifiers (as a string's pattern and as names under ``patternProperties``).

Run: .venv/bin/python examples/pattern_lookaheads.py
"""

import json

import jsonschema

import structgen
from schema2grammar import ecma

schemas = {
    # at least one digit and one capital, 8 printable ASCII characters or more
    "password": ({"type": "string", "pattern": "^(?=.*[0-9])(?=.*[A-Z])[ -~]{8,}$"},
                 ["Passw0rdX", "password1", "Sh0rt"]),
    # Ansible variables (SchemaStore vars.json): identifiers, but not Python's keywords
    "variables": ({"type": "object", "additionalProperties": False,
                   "patternProperties": {"^(?!(False|None|True|and|if|for|while)$)[a-zA-Z_][\\w]*$": {}}},
                  [{"retries": 3, "host_name": "a"}, {"if": True}, {"None": 1}]),
}

for name, (schema, instances) in schemas.items():
    print(f"{name}: {schema.get('pattern') or list(schema['patternProperties'])[0]}")
    for holds, part in ecma.conjuncts(schema.get("pattern") or list(schema["patternProperties"])[0]):
        print(f"  {'matches' if holds else 'does not match'} {part}")
    grammar = structgen.Grammar.from_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    print(f"  exact: {grammar.report.exact}")
    for instance in instances:
        text = json.dumps(instance)
        print(f"  {text:40} grammar {grammar.accepts(text)!s:5} jsonschema {validator.is_valid(instance)}")

"""What a schema's grammar lets a model write: the readable defaults beside the
draft's own semantics (docs/generating.md).

Run: .venv/bin/python examples/readable_numbers.py
"""

import structgen
from schema2grammar import DRAFT_SEMANTICS

CASES = [
    ({"type": "integer"}, ["12", "12.0", "1.2e+17"]),
    ({"type": "number"}, ["0.5", "1.7976931348623157e+308", "2.8752525252525267e+3018", "1e400"]),
    ({"type": "number", "multipleOf": 7}, ["14", "7e300", "5.90111146354847740e49"]),
    ({"type": "number", "multipleOf": 0.01}, ["0.25", "19.99"]),
    ({"const": {"a": 1, "b": 2}}, ['{"a": 1, "b": 2}', '{"b": 2, "a": 1}']),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string", "format": "duration"},
     ['"P3D"', '"invalid-duration"']),
    ({"type": "object"}, ['{"name": "Paris"}', "{}"]),
]

print(f"{'schema':58} {'text':28} readable  draft")
for schema, texts in CASES:
    readable = structgen.Grammar.from_json_schema(schema, closed_objects=True)
    draft = structgen.Grammar.from_json_schema(schema, closed_objects=True, **DRAFT_SEMANTICS)
    for text in texts:
        shown = str(schema) if len(str(schema)) <= 58 else str(schema)[:55] + "..."
        print(f"{shown:58} {text[:28]:28} {str(readable.accepts(text)):9} {draft.accepts(text)}")

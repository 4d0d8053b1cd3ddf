"""Free text with tagged, schema-checked sections: structural tags on the bundled SmolLM2.

``triggered_tags``: the model writes what it likes; wherever it writes the
trigger ``<city>``, what follows must be one JSON object of the schema, then
``</city>``, and free text goes on (``"at_least_one": true`` would make the
answer hold a section, ``"stop_after_first": true`` end it after the first).
A ``tag`` format is that one section and nothing else. The 135M model rarely
writes the trigger by itself, so the second call asks for a single tag.

Run: .venv/bin/python examples/structural_tag.py
"""

import json
import re

import structgen

CITY = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 30}, "country": {"type": "string", "maxLength": 30}},
        "required": ["name", "country"]}
SECTION = {"type": "tag", "begin": "<city>", "content": {"type": "json_schema", "json_schema": CITY}, "end": "</city>"}
TEXT_WITH_CITIES = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<city>"], "tags": [SECTION]}}
ONE_CITY = {"type": "structural_tag", "format": SECTION}

model, tokenizer = structgen.load_model()
messages = [{"role": "user", "content": 'Name the capital of Italy, marked as <city>{"name": ..., "country": ...}</city>.'}]
for tags in (TEXT_WITH_CITIES, ONE_CITY):
    text = structgen.generate(model, tokenizer, messages, structural_tag=tags, max_tokens=60, repetition_penalty=1.2)
    print(repr(text))
    for section in re.findall(r"<city>(.*?)</city>", text, re.S):
        print("  section:", json.loads(section))  # each one valid against CITY

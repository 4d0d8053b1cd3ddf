"""String formats enforced by the grammar, each by its RFC's grammar: what a schema
of them accepts, and the report (``hostname`` is reported approximated: a name's
total length is not checked).

Run: .venv/bin/python examples/formats.py
"""

import json

import structgen

schema = {
    "$schema": "http://json-schema.org/draft-07/schema#",  # format asserts in draft 7 (2020-12 annotates)
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri"},
        "server": {"type": "string", "format": "ipv6"},
        "timeout": {"type": "string", "format": "duration"},
        "host": {"type": "string", "format": "hostname"},
    },
}

grammar = structgen.Grammar.from_json_schema(schema)
print(grammar.report)
for name, value in [("email", "ada@example.org"), ("email", '"ada lovelace"@example.org'), ("email", "ada@@example.org"),
                    ("homepage", "https://example.org/a?b=c#d"), ("homepage", "example.org"),
                    ("server", "2001:db8::8a2e:370:7334"), ("server", "2001:db8::8a2e::7334"),
                    ("timeout", "PT1H30M"), ("timeout", "P1H"), ("host", "db-1.internal"), ("host", "db_1.internal")]:
    text = json.dumps({name: value})
    print(f"{text:50} {grammar.accepts(text)}")

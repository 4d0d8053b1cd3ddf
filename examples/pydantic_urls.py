"""Pydantic's URL types read URLs with a WHATWG parser, which refuses some RFC 3986
URIs; ``Grammar.from_pydantic`` spells ``format: uri`` so that every URL its
grammar takes validates (docs/schema2grammar.md, "Pydantic's URLs"). This checks
a few URLs against the model's grammar, the RFC's grammar and Pydantic itself.

Run: .venv/bin/python examples/pydantic_urls.py
"""

import json
from typing import Optional

from pydantic import AnyUrl, BaseModel, HttpUrl, ValidationError

import structgen


class Site(BaseModel):
    url: AnyUrl
    home: Optional[HttpUrl] = None


model_grammar = structgen.Grammar.from_pydantic(Site)
rfc_grammar = structgen.Grammar.from_pydantic(Site, urls="rfc3986")
print(f"{'instance':45} {'model grammar':>13} {'RFC 3986':>9} {'Pydantic':>9}")
for instance in [
    {"url": "https://example.com/a?b#c"},
    {"url": "http://"},
    {"url": "http://example.com:65536/"},
    {"url": "http://[v1.fe]/"},
    {"url": "mailto:someone@example.com"},
    {"url": "x:y", "home": "ftp://example.com"},
    {"url": "x:y", "home": "HTTPS://Example.com"},
]:
    text = json.dumps(instance)
    try:
        Site.model_validate_json(text)
        valid = True
    except ValidationError:
        valid = False
    print(f"{text:45} {model_grammar.accepts(text)!s:>13} {rfc_grammar.accepts(text)!s:>9} {valid!s:>9}")

"""Pydantic's validators read less than the JSON Schema it writes: its URL types
use a WHATWG parser, a ``Decimal`` is written as any number or string, an IP
type's format is a name JSON Schema does not define, a date's bounds are left
out. ``Grammar.from_pydantic`` spells out what they read (docs/schema2grammar.md,
"Pydantic's URLs" and after), so every text its grammar takes validates. This
checks a few fields against that grammar, against one from Pydantic's own schema,
and against Pydantic itself.

Run: .venv/bin/python examples/pydantic_validators.py
"""

import datetime
import json
from decimal import Decimal
from ipaddress import IPv4Network
from typing import Annotated, Optional

from pydantic import AnyUrl, BaseModel, Field, HttpUrl, ValidationError

import structgen
from structgen.grammar import PYDANTIC_OPTIONS


class Order(BaseModel):
    url: AnyUrl
    home: Optional[HttpUrl] = None
    price: Annotated[Decimal, Field(max_digits=5, decimal_places=2)] = Decimal("0")
    subnet: Optional[IPv4Network] = None
    shipped: Optional[Annotated[datetime.date, Field(ge=datetime.date(2020, 1, 1))]] = None


ours = structgen.Grammar.from_pydantic(Order)
theirs = structgen.Grammar.from_json_schema(Order.model_json_schema(), **PYDANTIC_OPTIONS)  # Pydantic's own schema
print(f"{'instance':52} {'from_pydantic':>13} {'own schema':>10} {'Pydantic':>9}")
for extra in [
    {"url": "https://example.com/a?b#c", "price": 12.5, "subnet": "10.1.0.0/16", "shipped": "2024-02-29"},
    {"url": "http://"},
    {"url": "http://example.com:65536/"},
    {"url": "x:y", "home": "ftp://example.com"},
    {"url": "x:y", "price": 1234.5},
    {"url": "x:y", "price": "12.345"},
    {"url": "x:y", "subnet": "10.1.2.0/16"},
    {"url": "x:y", "shipped": "2019-12-31"},
]:
    text = json.dumps(extra)
    try:
        Order.model_validate_json(text)
        valid = True
    except ValidationError:
        valid = False
    print(f"{text[:52]:52} {ours.accepts(text)!s:>13} {theirs.accepts(text)!s:>10} {valid!s:>9}")

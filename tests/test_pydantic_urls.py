"""Pydantic's URL types (``AnyUrl``, ``HttpUrl``, ``FileUrl``, DSNs) parse with a
WHATWG URL parser, which refuses some RFC 3986 URIs: ``from_pydantic`` spells
``format: uri`` as ``formats.whatwg_uri`` with the schemes and host each type
requires (``x-url``), and every URL its grammar takes must validate."""

from __future__ import annotations

import json
import random
from typing import Any, Optional

import pytest
from pydantic import AnyUrl, BaseModel, FileUrl, HttpUrl, PostgresDsn, ValidationError

import structgen
from schema2grammar import APPROXIMATED, ENFORCED, Options, SchemaError
from structgen.pydantic_schema import model_schema


class Links(BaseModel):
    site: AnyUrl
    home: Optional[HttpUrl] = None
    files: list[FileUrl] = []
    db: Optional[PostgresDsn] = None


FIELDS = ["site", "home", "files", "db"]
SCHEMES = ["http", "HTTPS", "ws", "wss", "ftp", "file", "File", "x", "a+b", "httpx", "htt", "fil", "files", "mailto",
           "postgres", "postgresql+asyncpg", "mysql"]
HOST_BITS = ["a", "b", "1", "0", "09", "0x", "0x1", "0xg", "xn--", "xn--a", "Xn-", "x", "-", "_", "~", "!", "$", "'",
             "*", ",", ";", "=", "%41", "%2F", "%zz", "256", "255", "999"]


def random_url(rng: random.Random) -> str:
    """A string of URL parts, in and out of what either standard takes."""
    text = rng.choice(SCHEMES) + ":"
    form = rng.choice(["authority", "authority", "authority", "absolute", "rootless", "empty"])
    if form == "authority":
        text += "//"
        if rng.random() < 0.2:
            text += rng.choice(["u", "u:p", "", ":", "%41"]) + "@"
        kind = rng.choice(["ipv4", "ipv6", "future", "domain", "domain", "domain", "empty"])
        if kind == "ipv4":
            text += ".".join(str(rng.choice([0, 1, 9, 99, 255, 256])) for _ in range(rng.choice([3, 4, 4, 5])))
        elif kind == "ipv6":
            text += rng.choice(["[::1]", "[1:2:3:4:5:6:7:8]", "[::ffff:1.2.3.4]", "[1::]", "[1:2]"])
        elif kind == "future":
            text += "[v1.x]"
        elif kind == "domain":
            labels = ["".join(rng.choice(HOST_BITS) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 4))]
            text += ".".join(labels) + rng.choice(["", "", "."])
        if rng.random() < 0.3:
            text += ":" + rng.choice(["", "0", "80", "65535", "65536", "099999", "00065535", "70000"])
    elif form == "absolute":
        text += "/" + rng.choice(["a", "", "b/c", "a:b", "@"])
    elif form == "rootless":
        text += rng.choice(["a", "b/c", "a:b", "@x", "%41"])
    text += rng.choice(["", "/", "/p", "/p/q", "//", "/%20"])
    return text + rng.choice(["", "", "?q", "?", "?a=b&c", "#f", "#", "?q#f"])


@pytest.fixture(scope="module")
def grammar() -> structgen.Grammar:
    return structgen.Grammar.from_pydantic(Links)


def instance(field: str, url: str) -> str:
    return json.dumps({"site": "x:y", field: [url] if field == "files" else url})


def validates(text: str) -> bool:
    try:
        Links.model_validate_json(text)
    except ValidationError:
        return False
    return True


def test_every_url_the_grammar_takes_validates(grammar: structgen.Grammar) -> None:
    rng = random.Random(7)
    taken = {field: 0 for field in FIELDS}
    for _ in range(3000):
        url, field = random_url(rng), rng.choice(FIELDS)
        text = instance(field, url)
        if grammar.accepts(text):
            taken[field] += 1
            assert validates(text), text
    assert min(taken.values()) >= 10, taken  # each field's URLs were tried, not only refused


@pytest.mark.parametrize(
    ("field", "url"),
    [("site", "http://a"), ("site", "HTTP://A/b?q#f"), ("site", "mailto:x@y"), ("site", "urn:isbn:1"),
     ("site", "a:///"), ("site", "http://[::1]:65535/"), ("site", "http://1.2.3.4/"), ("home", "https://a.b/c"),
     ("files", "file:///etc/hosts"), ("files", "file:/x"), ("db", "postgres://u:p@h:5432/db")],
)
def test_urls_pydantic_reads_are_taken(grammar: structgen.Grammar, field: str, url: str) -> None:
    assert grammar.accepts(instance(field, url)) and validates(instance(field, url))


@pytest.mark.parametrize(
    ("field", "url"),
    [("site", "http://"), ("site", "http://[v1.x]/"), ("site", "http://a:65536"), ("site", "http://a.1/"),
     ("site", "http://xn--a/"), ("site", "ftp://"), ("site", "a://:"), ("site", "foo://a@"), ("home", "ftp://a"),
     ("files", "http://a"), ("db", "postgres:db"), ("db", "mysql://h/db")],
)
def test_urls_pydantic_refuses_are_refused(grammar: structgen.Grammar, field: str, url: str) -> None:
    assert not validates(instance(field, url)) and not grammar.accepts(instance(field, url))


def test_the_schema_keeps_what_each_url_type_requires() -> None:
    properties = model_schema(Links)["properties"]
    assert "x-url" not in properties["site"]
    assert properties["home"]["anyOf"][0]["x-url"] == {"schemes": ["http", "https"]}
    assert properties["files"]["items"]["x-url"] == {"schemes": ["file"]}
    db = properties["db"]["anyOf"][0]
    assert db["format"] == "uri" and db["x-url"]["host_required"] is True and "postgres" in db["x-url"]["schemes"]


def test_rfc3986_urls_are_the_default_for_json_schemas() -> None:
    schema = {"type": "string", "format": "uri", "x-url": {"schemes": ["http"]}}
    plain = structgen.Grammar.from_json_schema(schema)
    assert plain.accepts('"http://a:65536"') and plain.accepts('"ftp://a"')
    assert [e.status for e in plain.report.entries if e.keyword == "x-url"] == [APPROXIMATED]
    read = structgen.Grammar.from_json_schema(schema, urls="whatwg")
    assert not read.accepts('"ftp://a"') and read.accepts('"HTTP://a"')
    assert [e.status for e in read.report.entries if e.keyword == "x-url"] == [ENFORCED]


@pytest.mark.parametrize(
    ("x_url", "message"),
    [(["http"], "x-url must be an object"), ({"schemes": []}, "schemes must be a non-empty list"),
     ({"schemes": ["1x"]}, "schemes must be a non-empty list"), ({"host_required": "yes"}, "host_required must be"),
     ({"hosts": 1}, "x-url must be an object")],
)
def test_a_malformed_x_url_is_named(x_url: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        structgen.Grammar.from_json_schema({"type": "string", "format": "uri", "x-url": x_url}, urls="whatwg")


def test_urls_option_is_checked() -> None:
    with pytest.raises(ValueError, match="urls must be one of"):
        Options(urls="whatwgx")

"""``format`` (``schema2grammar/formats.py``): each format's regex against valid
and invalid values, IPv6 against Python's ``ipaddress`` on random addresses,
``regex`` against Python's ``re`` on random patterns."""

from __future__ import annotations

import ipaddress
import json
import random
import re
import warnings

import pytest

from schema2grammar import APPROXIMATED, ENFORCED, Options, SchemaError, automata, translate
from schema2grammar.translate import COUNTED_NOTE
from structgen import Grammar
from structgen.lark_rules import LexerTooLarge

CASES: dict[str, tuple[list[str], list[str]]] = {
    "duration": (
        ["P3Y6M4DT12H30M5S", "P1W", "PT0S", "P0D", "P2M", "PT2M", "PT90S", "P1Y2M", "P1YT1H"],
        ["P", "PT", "P1", "P1YT", "P1H", "P1D1Y", "P1W1D", "1D", "P1.5D", "PT1H1S1M", "P 1D", "p1d"],
    ),
    "hostname": (
        ["example.com", "a", "a-b.c-d", "xn--bcher-kva.example", "1.2.3.4", "x" * 63 + ".com"],
        ["", ".", "a.", ".a", "-a", "a-", "a_b", "a..b", "x" * 64 + ".com", "ex ample.com", "é.com"],
    ),
    "email": (
        ["a@b", "first.last@example.com", "x+tag@sub.example.org", "o'brien@ie", "~@x.y", '"a b"@x.com',
         '"a\\"b"@x.com', '"a\\\\b"@x.com', '"a@b"@c.d', "a@[192.168.0.1]", "a@[IPv6:2001:db8::1]", "a@[ipv6:::1]"],
        ["", "a", "@b", "a@", "a..b@c", ".a@b", "a.@b", "a@b..c", "a@-b", "a@b-", "a b@c", '"a"b@c', "a@[300.1.1.1]",
         "a@[IPv6:1::2::3]", "a@b_c.d", "é@x.com", '"a\\"@b'],
    ),
    "uri": (
        ["http://example.com", "https://user:pw@host:8080/a/b?q=1&r=2#frag", "mailto:a@b.c", "urn:isbn:0451450523",
         "file:///etc/hosts", "ftp://[2001:db8::7]/c", "news:comp.infosystems.www", "a:", "x-y.z+w:%20",
         "http://[v1.x:y]/", "tel:+1-816-555-1212"],
        ["", "example.com", "/path", "//host", "1http://x", "http://x y", "http://x/%zz", "http://[::1/", "a:b#c#d",
         "http://ex ample.com", "http://[1::2::3]/", "http://x/?a[]"],
    ),
    "uri-reference": (
        ["http://example.com/a", "/a/b?c#d", "a/b", "../x", "?q", "#f", "", "//host:80/p", "a@b", "%41"],
        ["a b", "/a%", "#a#b", ":a", "//[::1", "a\\b"],
    ),
    "uri-template": (
        ["http://example.com/{id}", "{+path}/here", "/search{?q,lang}", "{var:30}", "{list*}", "{a.b}", "{x}{y}", "",
         "http://é.com/{x}", "%2F{=x}"],
        ["http://example.com/{", "}", "{}", "a b", "{a..b}", "{var:0}", "{var:10000}", "100%", "it's", "{x y}", "{#}"],
    ),
    "ipv6": (
        ["::", "::1", "1::", "2001:db8::ff00:42:8329", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1", "1:2:3:4:5:6:1.2.3.4",
         "FE80::0202:B3FF:FE1E:8329"],
        ["", ":", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::ffff:256.0.0.1", "1:2:3:4:5:6:7:1.2.3.4",
         "g::", ":1:2:3:4:5:6:7"],
    ),
    "regex": (  # ECMA-262's and Python's; quoted and escaped as json.dumps writes them
        ["", "^[a-z]+$", "a*?", "a*+", "(?:x|y){2,3}", "(?<n>a)\\k<n>", "(?<=a)b", "[^]", "[]", "[]a]", "a{", "]", "}",
         "\\u{1F600}", '"\\"', "é+", "(?i)ab", "(?x) a # [ comment", "^(abc]", "\\*", "[*+?]", "a|"],
        ["*", "+a", "?", "\\", "a**", "a*??", "(+a)", "(?:*a)", "a|?", "[a", "[\\]", "x\\", "(*)"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_formats_take_the_values_their_rfcs_define(name: str) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "format": name})
    valid, invalid = CASES[name]
    for value in valid:
        assert grammar.accepts(json.dumps(value, ensure_ascii=False)), (name, value)  # as MaskBench writes them
    for value in invalid:
        assert not grammar.accepts(json.dumps(value, ensure_ascii=False)), (name, value)


def test_ipv6_equals_the_ipaddress_module() -> None:
    """Random addresses in every written form, and mutations of them, against
    ``ipaddress.IPv6Address`` (no zone ids: RFC 4291 has none)."""
    rng = random.Random(6)
    grammar = Grammar.from_json_schema({"type": "string", "format": "ipv6"})
    texts: list[str] = []
    for _ in range(300):
        groups = [rng.choice([0, 0, 1, rng.randrange(65536)]) for _ in range(8)]
        address = ipaddress.IPv6Address(b"".join(g.to_bytes(2, "big") for g in groups))
        texts += [address.compressed, address.exploded, address.exploded.replace(":0000", ":0")]
        if rng.random() < 0.3:
            texts.append(address.compressed.rsplit(":", 2)[0] + ":" + str(ipaddress.IPv4Address(rng.randrange(2**32))))
    for text in list(texts):
        chars = list(text)
        position = rng.randrange(len(chars))
        chars[position:position + rng.randint(0, 2)] = rng.choice(["", ":", "::", "g", "1", ".", "12345"])
        texts.append("".join(chars))
    for text in texts:
        try:
            ipaddress.IPv6Address(text)
            valid = True
        except ValueError:
            valid = False
        assert grammar.accepts(json.dumps(text)) == valid, text


def test_regex_takes_every_pattern_python_reads() -> None:
    """``format: regex`` is a regular superset (parentheses are not counted):
    random patterns that ``re.compile`` reads are all taken, and it is reported
    approximated."""
    rng = random.Random(8)
    grammar = Grammar.from_json_schema({"type": "string", "format": "regex"})
    pieces = [*"ab()[]{}*+?|\\^$.-:=!<>Px1,", "(?:", "(?=", "(?<n>", "\\d", "[^", "{2}", "é", '"', "\n", "(?x)", "#"]
    refused = 0
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": read all the same
                re.compile(text)
        except re.error:
            refused += not grammar.accepts(json.dumps(text, ensure_ascii=False))
            continue
        assert grammar.accepts(json.dumps(text, ensure_ascii=False)), text
    assert refused > 500  # and many of the others are refused
    assert ("format", APPROXIMATED) in {(e.keyword, e.status) for e in grammar.report.entries}


def test_hostname_is_reported_wider_than_its_rfc() -> None:
    """Each label's 1-63 characters are checked; a name's 253 in all are not."""
    report = translate({"type": "string", "format": "hostname"})[1]
    assert ("format", APPROXIMATED) in {(e.keyword, e.status) for e in report.entries}
    with pytest.raises(SchemaError, match="#: format cannot be enforced exactly"):
        translate({"type": "string", "format": "hostname"}, Options(strict=True))
    for name in ("email", "uri", "uri-reference", "ipv6", "duration"):
        report = translate({"type": "string", "format": name}, Options(strict=True))[1]
        assert ("format", ENFORCED) in {(e.keyword, e.status) for e in report.entries}, name


def test_a_format_and_the_lengths_beside_it_meet_in_one_terminal() -> None:
    """Lengths beside a format are a lookahead on the format's terminal (the engine
    intersects the two) where the automata of both together stay within
    ``automata.MAX_STATES``; past it the format goes first and the lengths are
    reported approximated."""
    grammar = Grammar.from_json_schema({"type": "string", "format": "email", "minLength": 3, "maxLength": 8})
    assert grammar.accepts('"a@b.co"')
    assert not grammar.accepts('"a.longer.name@example.com"') and not grammar.accepts('"abcdef"')
    assert grammar.report.exact and "beside the format" in str(grammar.report)
    wide = Grammar.from_json_schema({"type": "string", "format": "uri-reference", "maxLength": 2000})
    assert {(e.keyword, e.status) for e in wide.report.entries} >= {("format", ENFORCED), ("maxLength", APPROXIMATED)}
    assert "not enforced beside format: a pattern needs more than 20000 automaton states" in str(wide.report)
    assert wide.accepts(json.dumps("a/" * 1001)) and not wide.accepts('"a b"')
    none = Grammar.from_json_schema({"type": "string", "format": "uuid", "maxLength": 8})
    assert "no string of the format has those lengths here" in str(none.report)
    with pytest.raises(SchemaError, match="maxLength 2 is below minLength 3"):
        translate({"type": "string", "format": "email", "minLength": 3, "maxLength": 2})
    for where in ("unbounded", "never"):  # the lengths instead
        loose = Grammar.from_json_schema({"type": "string", "format": "email", "maxLength": 8}, format_grammars=where)
        assert loose.accepts('"abcdef"') and not loose.accepts('"a.longer.name@example.com"')
    with pytest.raises(ValueError, match="format_grammars must be one of"):
        Options(format_grammars="sometimes")


def test_regexes_meet_within_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A date-time within 64 characters: 511 states of the product, the limit at
    it and past it; an e-mail within 255 passes the default limit and stays apart."""
    schema = {"type": "string", "format": "date-time", "maxLength": 64}
    monkeypatch.setattr(automata, "MAX_MEETING_STATES", 511)
    assert Grammar.from_json_schema(schema).report.exact
    monkeypatch.setattr(automata, "MAX_MEETING_STATES", 510)
    assert "more than 510 automaton states" in str(Grammar.from_json_schema(schema).report)
    monkeypatch.undo()
    email = Grammar.from_json_schema({"type": "string", "format": "email", "maxLength": 255})
    assert f"more than {automata.MAX_MEETING_STATES} automaton states" in str(email.report)
    assert email.accepts(json.dumps("a" * 250 + "@b.co"))  # the format is kept, the length not
    assert automata._ecma_syntax(r"[\ue000-\U0010ffff]\\U00000041") == "[\\ue000-\U0010ffff]\\\\U00000041"


@pytest.mark.parametrize(("schema", "valid", "invalid"), [
    ({"format": "date", "pattern": "^2020"}, ["2020-01-01", "2020-02-29"], ["2021-01-01", "2020-13-01", "2020", "2019-02-29"]),
    ({"format": "uri", "pattern": "^https://"}, ["https://a.b/c", "https://"], ["http://a.b", "https://a b"]),
    ({"format": "uuid", "pattern": "^[0-9]", "maxLength": 36}, ["12345678-1234-1234-1234-123456789012"],
     ["a2345678-1234-1234-1234-123456789012", "1"]),
    ({"format": "date-time", "pattern": ".*Z$"}, ["2020-01-01T00:00:00Z"], ["2020-01-01T00:00:00+01:00", "xZ"]),
])
def test_a_format_beside_a_pattern(schema: dict[str, object], valid: list[str], invalid: list[str]) -> None:
    """A format beside a pattern is a lookahead on the pattern's terminal where
    the automata of both (and the lengths) meet within ``automata.MAX_STATES``."""
    grammar = Grammar.from_json_schema({"type": "string", **schema})
    assert grammar.report.exact, str(grammar.report)
    for value in valid:
        assert grammar.accepts(json.dumps(value)), value
    for value in invalid:
        assert not grammar.accepts(json.dumps(value)), value


def test_a_format_beside_a_pattern_it_cannot_meet_is_approximated() -> None:
    """No date starts with x: the automata say so, but they read the engine's
    regexes with ``ecma``'s syntax, so the pattern alone stays (wider, reported);
    past the automata's limits, the same; an annotation is reported as one."""
    never = Grammar.from_json_schema({"type": "string", "format": "date", "pattern": "^x"})
    assert never.accepts('"x"') and not never.accepts('"2020-01-01"')
    assert "no string of the format matches it here" in str(never.report)
    big = Grammar.from_json_schema({"type": "string", "format": "email", "pattern": "^.{0,255}$"})
    assert "not enforced beside pattern: " in str(big.report) and big.accepts('"a"')
    annotated = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string", "format": "date", "pattern": "^x"}
    annotation = Grammar.from_json_schema(annotated, format_annotations="ignored")
    assert annotation.report.exact and annotation.accepts('"xyz"')
    assert "no string of the format matches it here" in str(Grammar.from_json_schema(annotated).report)  # asserted


def test_lengths_give_way_before_formats_where_the_lexer_would_pass_its_limit() -> None:
    """An e-mail's automaton beside a 2,000-character count passes the lexer's state
    limit: the schema is translated again counting fewer characters, and the report
    says so, while the address keeps its shape; without the fallback it is an
    error naming the limit."""
    schema = {"properties": {"to": {"type": "string", "format": "email"}, "body": {"type": "string", "maxLength": 2000}}}
    with pytest.raises(LexerTooLarge, match="more than 50000 DFA states"):
        Grammar.from_lark(translate(schema, Options(lexer_max_length=2048))[0])
    grammar = Grammar.from_json_schema(schema, lexer_max_length=2048)
    assert not grammar.accepts('{"to": "not an address", "body": "hi"}')
    assert grammar.accepts(json.dumps({"to": "a@example.com", "body": "x" * 2000}))
    assert not grammar.accepts(json.dumps({"to": "a@example.com", "body": "x" * 2001}))  # the matcher's count
    assert grammar.report.exact
    assert {e.note for e in grammar.report.entries if e.keyword == "maxLength"} == {COUNTED_NOTE}


def test_the_ladder_counts_fewer_characters_then_drops_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds above 256 characters go first, then formats become any string, then
    fewer characters still are counted (``length_bound`` down ``LENGTH_BOUNDS``),
    each reported; a lexer that fails stands in for one past its limit here: one
    counting more than 100 characters, or spelling out a date. A stage whose
    grammar is the one that failed is not built again. No new try starts past
    ``LADDER_SECONDS``."""
    import re

    from schema2grammar import formats, regexes
    from structgen import grammar as grammar_module

    built = grammar_module.Grammar.from_lark.__func__  # type: ignore[attr-defined]
    tries: list[str] = []

    def small_lexers(cls: type, text: str, start: str = "start") -> Grammar:
        tries.append(text)
        counts = text.replace(regexes.UNREADABLE, "")  # the numbers' digit guard counts no string
        if any(int(n) > 100 for n in re.findall(r"\{(?:[0-9]+,)?([0-9]+)\}", counts)) or formats.FORMATS["date"] in text:
            raise LexerTooLarge("the terminals' automaton: the automaton needs more than 50000 DFA states")
        return built(cls, text, start)

    monkeypatch.setattr(grammar_module.Grammar, "from_lark", classmethod(small_lexers))
    schema = {"properties": {"when": {"type": "string", "format": "date"}, "body": {"type": "string", "maxLength": 200},
                             "tag": {"type": "string", "maxLength": 20}}}
    grammar = Grammar.from_json_schema(schema, lexer_max_length=2048)
    assert len(tries) == 3  # 2,048 characters with the date, 256 without it (the stages between write the same), 32
    notes = {e.keyword: e.note for e in grammar.report.entries if e.status == APPROXIMATED}
    assert notes.keys() == {"format"} and "format_grammars='never'" in notes["format"]  # 200 is the matcher's
    assert grammar.accepts(json.dumps({"body": "x" * 200, "tag": "t"})) and not grammar.accepts(json.dumps({"tag": "t" * 21}))
    assert not grammar.accepts(json.dumps({"body": "x" * 201}))
    bounded = {"properties": {"when": {"type": "string", "format": "date", "maxLength": 40},
                              "body": {"type": "string", "maxLength": 1000}}}
    grammar = Grammar.from_json_schema(bounded)  # the date beside its bound goes, 1,000 characters first
    notes = {e.keyword: e.note for e in grammar.report.entries if e.status == APPROXIMATED}
    assert notes.keys() == {"format"} and "format_grammars='unbounded'" in notes["format"]
    assert not grammar.accepts(json.dumps({"when": "x" * 41})) and grammar.accepts(json.dumps({"when": "x" * 40}))
    monkeypatch.setattr(grammar_module, "LADDER_SECONDS", 0.0)
    with pytest.raises(LexerTooLarge):
        Grammar.from_json_schema(schema)
    for bad in (-1, 2049, 1.5):
        with pytest.raises(ValueError, match="length_bound must be between 0 and 2048"):
            Options(length_bound=bad)  # type: ignore[arg-type]


def test_past_the_limit_with_no_format_to_give_up_the_error_stands() -> None:
    """A pattern whose own automaton passes the limit: every stage is the same
    grammar (the format beside the pattern is not spelled out), so the error is
    the lexer's, named."""
    schema = {"type": "string", "pattern": "^[ab]*a[ab]{16}$", "format": "date"}
    with pytest.raises(LexerTooLarge, match="the terminals' automaton"):
        Grammar.from_json_schema(schema)


def test_pydantic_durations_are_those_a_timedelta_holds() -> None:
    """Python's ``timedelta`` holds at most 999,999,999 days: ``from_pydantic``
    (``duration_digits=6``) takes six digits in every part, which stays below it,
    and RFC 3339's unbounded numbers stay the JSON Schema default."""
    from datetime import timedelta

    from pydantic import BaseModel, TypeAdapter

    model = type("Span", (BaseModel,), {"__annotations__": {"v": timedelta}})
    grammar = Grammar.from_pydantic(model)
    largest = "P999999Y999999M999999DT999999H999999M999999S"
    assert grammar.accepts(json.dumps({"v": largest})) and TypeAdapter(timedelta).validate_json(json.dumps(largest))
    assert not grammar.accepts(json.dumps({"v": "P99999999999999999999D"}))
    assert Grammar.from_json_schema({"type": "string", "format": "duration"}).accepts('"P99999999999999999999D"')
    with pytest.raises(ValueError, match="duration_digits must be between 1 and 100"):
        Options(duration_digits=0)

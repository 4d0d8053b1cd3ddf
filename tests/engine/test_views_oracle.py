"""Lexer views (engine/views.py) against the oracle: masks with views forced on
small grammars with long terminals equal trying every token,
across ignored terminals, lazy terminals, GLR forks whose tops take different
terminals, terminals that are prefixes of each other, bounded beside unbounded
digits, and multi-byte UTF-8."""

from __future__ import annotations

import random

import pytest
from view_walks import tried, walks_agree_with_oracle, with_views

from structgen import Grammar, TokenizerInfo
from structgen.engine.matcher import Matcher as EngineMatcher

GRAMMARS: dict[str, tuple[str, bytes, list[bytes]]] = {
    # GLR: after "km" two tops, one taking SMALL/LA, the other NUM/LB; LA and LB overlap on "b"
    "glr_overlap": (
        'start: x "m" p | y "m" q\n'
        'x: "k"\ny: "k"\n'
        'p: SMALL ";" | LA\nq: NUM ";" | LB\n'
        'SMALL: /[0-9]{1,3}/\nNUM: /[0-9]+/\n'
        'LA: /"[a-c]{0,300}"/\nLB: /"[b-d]{0,300}"/\n',
        b'km0123456789;"abcd',
        [b"km", b'"b', b'bd"', b'b"', b"1234", b"12;", b'bb', b'cc"', b'dd"', b'ab', b'"', b";"],
    ),
    # a lazy terminal that a long greedy one extends past its first match
    "lazy": (
        'start: "a" LAZY | "b" GREEDY | "c" (LAZY | GREEDY) "!"\n'
        'LAZY: /<[a-z>]*?>/\nGREEDY: /<[a-z>]{0,300}/\n',
        b"abc<>xyz!",
        [b"<x>", b"<x>y", b">!", b"<", b">", b"x>", b"xy>", b">x", b"!", b"a<", b"c<x>"],
    ),
    # an ignored terminal that a byte extends into a terminal no state takes here
    "ignored": (
        'start: item+\nitem: "[" LONG "]" | "(" NAME ")" | SPACEY | HASHTAG\n'
        'LONG: /"[a-z ]{0,300}"/\nNAME: /[a-z]{1,8}/\nSPACEY: / +x/\nHASHTAG: /#[a-z]{1,300}/\n'
        'COMMENT: /#[a-z ]{0,300}\\n/\nWS: / +/\n%ignore WS\n%ignore COMMENT\n',
        b'[]()" abxyz#\n',
        [b"  ", b" x", b"  x", b'["', b'ab"', b'"]', b"#ab", b"\n", b" #", b"(ab)", b"x", b'" ', b"z\n[", b"#ab\n", b"#ab]", b"b\n", b"b]", b"#a"],
    ),
    # keywords that are prefixes of a long name, ambiguity kept by the parser
    "prefixes": (
        'start: stmt+\nstmt: "if" NAME ";" | NAME "=" NUM ";" | "iff" SHORT ";"\n'
        'NAME: /[a-z]{1,300}/\nSHORT: /[a-z]{1,2}/\nNUM: /[0-9]{1,3}/ | /[0-9]+\\.[0-9]+/\n'
        '%ignore " "\n',
        b"ifab=0123;. ",
        [b"if", b"iff", b"iffy", b"i", b"f", b"ab", b"=1", b"1.", b".5", b";if", b" if ", b"ff", b"=12;"],
    ),
    # multi-byte UTF-8: a long string of accented letters beside short ones of other ranges
    "utf8": (
        'start: "s" LONGU | "t" SHORTU | "u" (LONGU | SHORTU) "."\n'
        'LONGU: /"[a-zé-ü]{0,300}"/\nSHORTU: /"[ä-ö€]{1,3}"/\n',
        'stu".aé€öü'.encode(),
        ['"é'.encode(), "é".encode(), "ö".encode(), "€".encode(), '"ä'.encode(), 'ä"'.encode(),
             'ü"'.encode(), b'"', b"\xc3", b"\xa9", b"\xe2\x82", b"\xac", 'ö"'.encode(), '€"'.encode(),
             "éö".encode(), 'ä".'.encode()],
    ),
    # the END symbol among a state's act bits; a bounded count beside an unbounded one
    "end_digits": (
        'start: pair*\npair: SMALL ":" (LONG | BIG) ","\n'
        'SMALL: /[0-9]{1,2}/\nBIG: /[0-9]+/\nLONG: /"[0-9a]{0,300}"/\n',
        b'0123456789:,"a',
        [b"12", b"123", b'1:"', b'9"', b'"12', b":1", b",", b'",', b"12:", b"00", b'a"', b'aa'],
    ),
}


WALKS = 16
STEPS = 30


def vocabulary(alphabet: bytes, extra: list[bytes], seed: int) -> tuple[TokenizerInfo, list[bytes]]:
    rng = random.Random(seed)
    pieces = [bytes([b]) for b in range(256)]
    seen = set(pieces)
    for _ in range(500):
        piece = bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 6)))
        if piece not in seen:
            seen.add(piece)
            pieces.append(piece)
    for piece in extra:
        if piece not in seen:
            seen.add(piece)
            pieces.append(piece)
    pieces.append(b"")  # the stop token
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1]), pieces


def engine_matcher(source: str, info: TokenizerInfo, views: bool) -> EngineMatcher:
    return with_views(Grammar.from_lark(source), info, views, every_terminal_long=True)


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_views_equal_the_oracle(name: str) -> None:
    source, alphabet, extra = GRAMMARS[name]
    info, _ = vocabulary(alphabet, extra, len(name))
    walks_agree_with_oracle(lambda: engine_matcher(source, info, views=True), info, random.Random(name), WALKS, STEPS, 0.7)


@pytest.mark.parametrize(
    "name, text",
    [
        ("glr_overlap", b'km"b'),
        ("glr_overlap", b'km"bb'),
        ("glr_overlap", b"km12"),
        ("lazy", b"c<x"),
        ("lazy", b"b<x>"),
        ("lazy", b"a<x"),
        ("ignored", b'["ab'),
        ("ignored", b"[\"a\"] "),
        ("ignored", b"(ab) #a"),
        ("prefixes", b"if"),
        ("prefixes", b"iffy"),
        ("prefixes", b"if ab"),
        ("prefixes", b"ab=1"),
        ("utf8", 'u"é'.encode()),
        ("utf8", 'u"ä'.encode()),
        ("utf8", b'u"\xc3'),
        ("end_digits", b'12:"a'),
        ("end_digits", b"12:1"),
        ("end_digits", b"1"),
    ],
)
def test_views_equal_the_oracle_at_chosen_prefixes(name: str, text: bytes) -> None:
    source, alphabet, extra = GRAMMARS[name]
    info, vocab = vocabulary(alphabet, extra, 7)
    matcher = engine_matcher(source, info, views=True)
    assert matcher.accept_bytes(text), text
    allowed = matcher.allowed_tokens()
    oracle = tried(matcher, info.vocab_size)
    assert [vocab[t] for t in sorted(set(allowed) - set(oracle))] == []
    assert [vocab[t] for t in sorted(set(oracle) - set(allowed))] == []


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_every_view_state_is_the_whole_state_restricted(name: str) -> None:
    """For every LR state's terminals and every lexer state a view stands for: the
    view state accepts and can become exactly the whole state's terminals among
    the view's, and every byte moves both alike (dead in the view exactly where
    the whole automaton is dead or left the view's terminals)."""
    source, alphabet, extra = GRAMMARS[name]
    info, _ = vocabulary(alphabet, extra, 3)
    matcher = engine_matcher(source, info, views=True)
    tables = matcher.compiled.tables
    views = tables.views
    assert views is not None
    whole = views.whole
    count = whole.dfa.state_count
    checked = 0
    for lr_state in range(tables.lr_state_count):
        terminals = tables._act_bits[lr_state] | tables._ignored_bits
        for state in range(1, count):
            if tables._reach_bits[state] & terminals == 0:
                continue  # an empty entry at once (MaskTables.entry): no view asked
            seen = views.state_for(state, terminals)
            if seen == state:
                continue
            wide = terminals | views._short  # none: every terminal is long here
            lexer = views.lexer
            assert seen >= count
            chosen = {t for t in range(len(whole.accepts[0]) + 64) if wide >> t & 1}
            assert set(lexer.accepts[seen]) == set(whole.accepts[state]) & chosen, (lr_state, state)
            assert set(lexer.reachable_terminals[seen]) == set(whole.reachable_terminals[state]) & chosen
            for byte in range(256):
                w = whole.table[state * 256 + byte]
                v = lexer.table[seen * 256 + byte]
                alive = w != -1 and bool(set(whole.reachable_terminals[w]) & chosen)
                assert (v != -1) == alive, (lr_state, state, byte)
            checked += 1
    assert checked > 0


SCHEMAS = {
    "flexible": (
        {
            "type": "object",
            "properties": {
                "etag": {"type": "string", "pattern": "^[a-z.:-]+$"},
                "title": {"type": "string", "maxLength": 60},
                "cta": {"type": "string", "maxLength": 50},
                "n": {"type": "integer", "minimum": 0, "maximum": 100},
                "big": {"type": "integer"},
                "x": {"type": "number"},
            },
            "additionalProperties": True,
        },
        {"lexer_max_length": 2048},  # the counts are the lexer's: long terminals for the views
    ),
    "required_compact": (
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "maxLength": 40},
                "ab": {"type": "string", "pattern": "^[ab]+$"},
                "n": {"type": "integer", "maximum": 999},
                "list": {"type": "array", "items": {"type": "string", "maxLength": 35}},
            },
            "required": ["a"],
            "additionalProperties": False,
        },
        {"whitespace": "compact", "lexer_max_length": 2048},
    ),
}
JSON_ALPHABET = b'{}[],:"0123456789.-etagtitlectanbigx :\n\\u'


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schema_views_equal_the_oracle(name: str) -> None:
    schema, options = SCHEMAS[name]
    extra = [b'"title": "', b'"etag":"', b'"n": 1', b"100,", b"1000", b'", "', b'"}', b"\\u00e9", b'"ab"', b'a":"']
    info, _ = vocabulary(JSON_ALPHABET, extra, 11)
    walks_agree_with_oracle(lambda: with_views(Grammar.from_json_schema(schema, **options), info), info,
                            random.Random(name), 10, 40, 0.6)


def test_a_reduction_on_end_does_not_build_a_second_identical_view() -> None:
    """An LR state that also reduces on END (``table.end``: no lexeme, no pattern)
    takes the same terminals as one that does not: both share one view (with the
    END bit in the key, ``{LONG}`` and ``{LONG, END}`` built the same 303-state
    automaton twice, and their groups twice)."""
    source = 'start: "s" x+ | "t" OTHER\nx: LONG\nLONG: /"[a-z]{0,300}"/\nOTHER: /"[a-y]{0,300}x/\n'
    info, _ = vocabulary(b'st"abxyz', [], 1)
    matcher = engine_matcher(source, info, views=True)
    assert matcher.accept_bytes(b's"ab')
    matcher.allowed_tokens()  # the first LONG: its state takes LONG only
    again = EngineMatcher(matcher.compiled)
    assert again.accept_bytes(b's"a""ab')
    again.allowed_tokens()  # a later LONG: its state takes LONG, or reduces on END
    tables = matcher.compiled.tables
    assert any(tables._act_bits[top.state] >> tables.table.end & 1 for top in again.config.tops)
    views = tables.views
    assert views is not None
    built = [view for view in views._views.values() if view is not None]
    assert len(built) == 1


LONG_TOKENS = (
    'start: x "m" p | y "m" q | "t" TITLE\n'
    'x: "k"\ny: "k"\n'
    'p: SMALL ";" | LA\nq: NUM ";" | LB\n'
    'SMALL: /[0-9]{1,3}/\nNUM: /[0-9]+/\n'
    'LA: /"[a-c]{0,700}"/\nLB: /"[b-d]{0,700}"/\nTITLE: /"[a-z ]{0,700}"/\n'
)


def test_views_with_tokens_longer_than_the_shift_proof() -> None:
    """Lexers past ``SHIFT_FROM_STATES`` rename a count's groups from the next
    state's (``shifted_groups``); tokens longer than ``SHIFT_DEPTH`` are followed
    one by one. Both in view states, with GLR tops in different views."""
    rng = random.Random(5)
    extra = [bytes(rng.choice(b"abcd") for _ in range(rng.randint(10, 26))) for _ in range(400)]
    extra += [b'"' + b"b" * k for k in (15, 16, 17, 20)] + [b"c" * k + b'"' for k in (15, 16, 17, 20)]
    extra += [b"d" * k + b'"' for k in (15, 17)] + [b"km", b'km"', b"1" * 17, b"12;"]
    info, _ = vocabulary(b'km0123;"abcd', extra, 5)

    def new_matcher() -> EngineMatcher:
        matcher = engine_matcher(LONG_TOKENS, info, views=True)
        assert matcher.compiled.tables.lexer.dfa.state_count > 1_000
        return matcher

    walks_agree_with_oracle(new_matcher, info, rng, 6, 40, 0.8, longer_than=8)


def test_state_for_never_names_another_regions_state() -> None:
    """``state_for`` on a state whose lexeme can become none of the terminals
    (``MaskTables.entry`` answers those with an empty entry first): the view's
    automaton dies on its lexeme, and the state stands for itself (``offset +
    DEAD`` was the last state of the region before the view)."""
    source = GRAMMARS["end_digits"][0]
    info, _ = vocabulary(b'0123456789:,"a', [], 1)
    matcher = engine_matcher(source, info, views=True)
    views = matcher.compiled.tables.views
    assert views is not None
    rules = Grammar.from_lark(source).rules
    long = rules.terminal_index("LONG")
    digits = views.whole.dfa.run(b"12")  # SMALL or BIG: never LONG
    seen = views.state_for(digits, 1 << long)
    assert seen == digits or (seen >= views.whole.dfa.state_count and long in views.lexer.reachable_terminals[seen])

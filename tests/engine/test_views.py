"""Lexer views (engine/views.py): masks built in the automaton of the terminals an
LR state takes are the masks of the whole automaton, and a view never stands for
a state where the whole automaton would end a lexeme later."""

from __future__ import annotations

import json
import random

import pytest
from view_walks import tried, with_views

from structgen import Grammar, TokenizerInfo
from structgen.engine.lexer import START
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.engine.views import LONG_PATTERN_STATES, MAX_VIEW_SHARE

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},  # a long terminal: its count (lexer_max_length=2048)
        "code": {"type": "string", "pattern": "^[a-z-]+$"},
        "when": {"type": "string", "format": "date"},
        "n": {"type": "integer", "minimum": 0, "maximum": 100},
        "x": {"type": "number"},
    },
    "additionalProperties": True,
}
# SMALL ends at three digits, NUM goes on: inside a number the view of SMALL alone
# would end a lexeme where the whole automaton does not. LONG and SHOUT are long
# (their counts), so a view of either drops the other.
DIGITS = (
    'start: SMALL NUM | "x" NUM | LONG | "y" WORD | "z" SHOUT\n'
    'SMALL: /[0-9]{1,3}/\nNUM: /[0-9]+/\nLONG: /"[a-z0-9]{0,300}"/\nWORD: /"[a-z]+"/\nSHOUT: /"[a-z]{0,280}!/'
)
GRAMMARS = {
    "schema": lambda: Grammar.from_json_schema(SCHEMA, whitespace="compact", lexer_max_length=2048),
    "digits": lambda: Grammar.from_lark(DIGITS),
}
ALPHABET = b'{}[],:"0123456789.-etitlecodwhnxabz ;!'


def vocabulary(seed: int) -> TokenizerInfo:
    rng = random.Random(seed)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))) for _ in range(700)]
    pieces += [b'"title":"', b'"code":"', b"1234", b"12;", b'"}', b'","']
    pieces.append(b"")  # the stop token
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])


def engine_matcher(name: str, info: TokenizerInfo, views: bool) -> EngineMatcher:
    return with_views(GRAMMARS[name](), info, views)


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_masks_with_views_equal_trying_every_token(name: str) -> None:
    info = vocabulary(len(name))
    rng = random.Random(name)
    used_views = 0
    for _ in range(6):
        matcher = engine_matcher(name, info, views=True)
        plain = engine_matcher(name, info, views=False)
        for _step in range(14):
            allowed = matcher.allowed_tokens()
            assert allowed == tried(matcher, info.vocab_size), name
            assert allowed == plain.allowed_tokens(), name
            ids = [t for t in allowed if t not in info.stop_token_ids]
            if not ids:
                break
            token = rng.choice(ids)
            assert matcher.accept_token(token) and plain.accept_token(token)
        views = matcher.compiled.tables.views
        assert views is not None
        used_views = max(used_views, len([v for v in views._views.values() if v is not None]))
    assert used_views >= 1  # the walks went through states a view stood for


def test_a_view_stands_only_where_lexemes_end_alike() -> None:
    info = vocabulary(1)
    matcher = engine_matcher("digits", info, views=True)
    tables = matcher.compiled.tables
    lexer = tables.lexer
    whole_states = lexer.dfa.state_count
    views = tables.views
    assert views is not None
    rules = Grammar.from_lark(DIGITS).rules
    small, long = rules.terminal_index("SMALL"), rules.terminal_index("LONG")
    word, shout = rules.terminal_index("WORD"), rules.terminal_index("SHOUT")
    assert lexer.dfa.pattern_states is not None
    assert min(lexer.dfa.pattern_states[long], lexer.dfa.pattern_states[shout]) > LONG_PATTERN_STATES
    # after "12" at the start: SMALL could end at "123", where NUM goes on to "1234"
    after_12 = lexer.dfa.run(b"12")
    assert views.state_for(after_12, 1 << small) == after_12
    # inside LONG's quotes with only LONG taken: its view, with every short terminal, drops SHOUT
    inside = lexer.dfa.run(b'"ab')
    assert lexer.reachable_terminals[inside] == tuple(sorted([long, word, shout]))
    seen_from = views.state_for(inside, 1 << long)
    assert seen_from >= whole_states and views.lexer.reachable_terminals[seen_from] == tuple(sorted([long, word]))
    assert views.state_for(START, 1 << long) == START


def test_a_view_is_built_from_the_patterns_automata_the_lexer_was_built_with() -> None:
    """A view's automaton is the product of its terminals' own automata, kept from
    the lexer's build: none is built again inside a step."""
    matcher = engine_matcher("digits", vocabulary(4), views=True)
    views = matcher.compiled.tables.views
    assert views is not None
    cache = views.whole.pattern_cache
    assert cache is not None
    held = len(cache)
    assert held >= len(views.whole.patterns or [])  # one per terminal at least: grammars share the cache
    long = Grammar.from_lark(DIGITS).rules.terminal_index("LONG")
    assert views.state_for(views.whole.dfa.run(b'"ab'), 1 << long) != START
    built = list(views._views.values())
    assert len(built) == 1 and built[0] is not None and len(cache) == held


def test_states_that_take_only_short_terminals_share_one_view() -> None:
    """Key positions of an object take different keys: with no long terminal among
    them they share the view of every short terminal (and its groups)."""
    info = vocabulary(2)
    matcher = engine_matcher("schema", info, views=True)
    text = json.dumps({"title": "ab", "code": "a-b", "when": "2024-01-02", "n": 7, "x": 1.5}, separators=(",", ":"))
    for token in text.encode():  # ids 0-255 are the single bytes
        matcher.allowed_row()
        assert matcher.accept_token(token)
    views = matcher.compiled.tables.views
    assert views is not None
    built = [terminals for terminals, view in views._views.items() if view is not None]
    assert 1 <= len(built) <= 3


@pytest.mark.parametrize("limit", ["max_view_states", "max_views", "max_view_share"])
def test_past_the_view_limits_the_whole_automaton_serves(limit: str) -> None:
    """Views' states in all (``MAX_VIEW_STATES``), sets of terminals tried
    (``MAX_VIEWS``) and one view's share of the whole automaton (``MAX_VIEW_SHARE``)
    are bounded; past any, masks are the whole automaton's."""
    info = vocabulary(3)
    matcher = engine_matcher("digits", info, views=True)
    views = matcher.compiled.tables.views
    assert views is not None
    setattr(views, limit, 0)
    inside = views.whole.dfa.run(b'"ab')
    long = Grammar.from_lark(DIGITS).rules.terminal_index("LONG")
    assert views.state_for(inside, 1 << long) == inside
    assert views.lexer is views.whole  # nothing joined
    plain = engine_matcher("digits", info, views=False)
    for token in b'"ab':
        assert matcher.allowed_tokens() == plain.allowed_tokens()
        assert matcher.accept_token(token) and plain.accept_token(token)
    assert matcher.allowed_tokens() == tried(matcher, info.vocab_size)


def test_views_past_the_count_are_not_built() -> None:
    info = vocabulary(3)
    rules = Grammar.from_lark(DIGITS).rules
    long, word = rules.terminal_index("LONG"), rules.terminal_index("WORD")
    views = engine_matcher("digits", info, views=True).compiled.tables.views
    assert views is not None
    inside = views.whole.dfa.run(b'"ab')  # LONG's, WORD's and SHOUT's
    views.max_views = 1
    assert views.state_for(inside, 1 << long) != inside  # the one set allowed
    assert views.state_for(inside, 1 << word) == inside  # a second set: past the limit
    fresh = engine_matcher("digits", info, views=True).compiled.tables.views
    assert fresh is not None and fresh.state_for(inside, 1 << word) != inside


def test_views_are_told_apart_by_their_long_terminals_only() -> None:
    """Every view takes every short terminal: parser states that take LONG beside
    different short terminals (an object's keys left) share one view."""
    rules = Grammar.from_lark(DIGITS).rules
    long, small, word = rules.terminal_index("LONG"), rules.terminal_index("SMALL"), rules.terminal_index("WORD")
    views = engine_matcher("digits", vocabulary(5), views=True).compiled.tables.views
    assert views is not None
    inside = views.whole.dfa.run(b'"ab')
    seen = {views.state_for(inside, 1 << long | extra) for extra in (0, 1 << small, 1 << word)}
    assert len(seen) == 1 and seen != {inside}
    assert len([view for view in views._views.values() if view is not None]) == 1


def test_a_view_as_big_as_the_whole_automaton_is_not_built() -> None:
    """SHOUT's count runs beside LONG's, so LONG's view drops SHOUT's part but keeps
    nearly every state: at the default ``MAX_VIEW_SHARE`` it is not built, and its
    states cost the budget what was tried."""
    long = Grammar.from_lark(DIGITS).rules.terminal_index("LONG")
    views = engine_matcher("digits", vocabulary(6), views=True).compiled.tables.views
    assert views is not None
    views.max_view_share = MAX_VIEW_SHARE
    inside = views.whole.dfa.run(b'"ab')
    assert views.state_for(inside, 1 << long) == inside
    assert views.lexer is views.whole and list(views._views.values()) == [None]
    assert views._view_states == int(views.whole.dfa.state_count * MAX_VIEW_SHARE)

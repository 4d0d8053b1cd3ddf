"""``CompiledGrammar.precompute``: every lexer state's token groups at compile,
within ``GROUPS_WALKS`` (work, not seconds) and ``GROUPS_LIMIT``; past either,
the rest on first use, in views, with the same masks: the views' automata at
compile, and their states' groups with the work left."""

from __future__ import annotations

import json
import random

import pytest
from clocks import SetClock
from view_walks import tried

import structgen
from structgen import Grammar, TokenizerInfo
from structgen.engine.deadline import Deadline, run_within
from structgen.engine.matcher import CompiledGrammar
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.engine.precompute_order import DEEP_FROM, byte_depths, precompute_order

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 30},
        "code": {"type": "string", "pattern": "^[a-z-]+$"},
        "n": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["title"],
}
ALPHABET = b'{}[],:"0123456789-titlecodn ab'
TEXT = json.dumps({"title": "ab ab-ab", "code": "ab-c", "n": 100}).encode()


def vocabulary() -> TokenizerInfo:
    rng = random.Random(4)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))) for _ in range(600)]
    pieces += [b'{"title": "', b'", "code": "', b'"n": 1', b'", "n": 10', b"ab-c", b'"}']
    pieces.append(b"")  # the stop token
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])


def compiled(info: TokenizerInfo) -> CompiledGrammar:
    """Compiled without precomputing (a new grammar object: ``compile`` caches per grammar)."""
    grammar = Grammar.from_json_schema(SCHEMA, lexer_max_length=2048)  # the title's count: the lexer's
    return structgen.Matcher(structgen.compile(grammar, info, lazy=True))._engine.compiled


def built(grammar: CompiledGrammar) -> int:
    """Lexer states of the whole automaton (not of its views) whose groups are built."""
    whole = grammar.lexer.dfa.state_count
    return sum(1 for groups in grammar.tables._groups[:whole] if groups is not None)


def compile_time_states(grammar: CompiledGrammar) -> int:
    """The states a compile builds: all but the deep ones a step builds alone
    (``precompute_order``: a number's digits past ``DEEP_FROM``)."""
    return len(precompute_order(grammar.lexer, grammar.tables))


def test_within_its_budget_every_state_is_built_at_compile() -> None:
    grammar = compiled(vocabulary())
    grammar.precompute(groups_walks=10.0**9)
    assert built(grammar) == compile_time_states(grammar) and grammar.tables.views is None
    left = grammar.lexer.dfa.state_count - built(grammar)
    assert left > 250  # the number terminal's count of digits, past DEEP_FROM
    bound = grammar.step_bound()
    assert bound.states_left == bound.alone_left == left and bound.walks == 1
    depth = byte_depths(grammar.lexer)
    assert all(depth[state] > DEEP_FROM for state, groups in enumerate(grammar.tables._groups) if groups is None)


@pytest.mark.parametrize("limits", [{"groups_walks": 0.0}, {"groups_limit": 0}])
def test_past_a_limit_the_states_left_are_built_on_first_use_in_views(limits: dict[str, float]) -> None:
    info = vocabulary()
    lazy = compiled(info)
    lazy.precompute(**limits)
    views = lazy.tables.views
    assert views is not None and built(lazy) < lazy.lexer.dfa.state_count
    regions = views.regions()
    before = built(lazy)  # 0 without work; past the state limit, those the views' groups started from
    full = compiled(info)
    full.precompute(groups_walks=10.0**9)
    first, second = EngineMatcher(lazy), EngineMatcher(full)
    for byte in TEXT:  # ids 0-255 are the single bytes
        allowed = first.allowed_tokens()
        assert allowed == second.allowed_tokens() == tried(first, info.vocab_size)
        assert first.accept_token(byte) and second.accept_token(byte)
    assert before < built(lazy) < lazy.lexer.dfa.state_count  # only what the text visited
    assert views.regions() == regions  # every view the text needed was built at compile


@pytest.mark.parametrize("gone", [0.0, 31.0])
def test_under_a_time_limit_precompute_gives_way_at_half_of_it(gone: float) -> None:
    """Precompute is optional work: a compile that has used half its time limit
    (a busy server's compiles wait for each other) builds no more groups and no
    views, and does not raise; steps build what they need, with the same masks."""
    info = vocabulary()
    grammar = compiled(info)
    clock = SetClock()
    deadline = Deadline(60.0, clock)
    clock.now += gone  # 31 s: past half of the limit, well within it; 0: none of it, however long this takes
    run_within(deadline, lambda: grammar.precompute(groups_walks=10.0**9))
    assert built(grammar) == (0 if gone else compile_time_states(grammar))
    assert grammar.tables.views is None
    matcher = EngineMatcher(grammar)
    for byte in TEXT:  # ids 0-255 are the single bytes
        assert matcher.allowed_tokens() == tried(matcher, info.vocab_size)
        assert matcher.accept_token(byte)


def test_the_budget_is_work_so_the_same_states_are_left_on_any_machine() -> None:
    """A budget of half the work every state takes builds some states, not all,
    and the same ones each time: it counts trie nodes and ids, not seconds."""
    info = vocabulary()
    full = compiled(info)
    full.precompute(groups_walks=10.0**9)
    whole = full.tables.work.done
    half = whole / 2 / len(full.trie.node_byte)
    builds = []
    for _ in range(2):
        partial = compiled(info)
        partial.precompute(groups_walks=half)
        builds.append([groups is not None for groups in partial.tables._groups])
        assert whole / 2 <= partial.tables.work.done < whole
    assert builds[0] == builds[1]
    assert 0 < sum(builds[0]) < len(builds[0])


def test_views_are_built_at_compile_and_their_states_groups_within_the_budget() -> None:
    """Past ``GROUPS_LIMIT`` the view of each set of terminals an LR state takes is
    built at compile; its states' groups too, while the budget lasts."""
    info = vocabulary()
    found = []
    for walks in (10.0**9, 0.0):
        grammar = compiled(info)
        grammar.tables.use_views()  # as past GROUPS_LIMIT
        views = grammar.tables.views
        assert views is not None
        views.max_view_share = 1.0  # this small lexer's views are as big as itself
        grammar.precompute(groups_walks=walks)
        view_states = [state for offset, count in views.regions() for state in range(offset, offset + count)]
        assert view_states and (walks > 0 or built(grammar) == 0)
        assert all((grammar.tables._groups[state] is not None) == (walks > 0) for state in view_states)
        found.append(views.regions())
        matcher = EngineMatcher(grammar)
        for byte in TEXT:  # ids 0-255 are the single bytes
            assert matcher.allowed_tokens() == tried(matcher, info.vocab_size)
            assert matcher.accept_token(byte)
        assert views.regions() == found[-1]  # no step built a view
    assert found[0] == found[1]

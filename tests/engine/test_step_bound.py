"""``CompiledGrammar.step_bound``: what it reports is what steps do.

Each step of a text is measured by what it built (the tables' census before and
after), and must stay within the bound reported before it: lexer states whose
groups it built, entries it built."""

from __future__ import annotations

import json
import random

import pytest

import structgen
from structgen import Grammar, StepBound, TokenizerInfo
from structgen.engine.tables import MAX_SHIFT_CHAIN

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}},
                                           "n": {"type": "integer", "minimum": -5}},
          "required": ["name", "n"]}
TEXT = json.dumps({"name": "Ada \u00e9\\n", "tags": ["bb", "a"], "n": 42})


def vocabulary() -> TokenizerInfo:
    rng = random.Random(3)
    pieces = [bytes([b]) for b in range(256)]
    alphabet = [b'{"', b'":', b'", "', b"name", b"tags", b" [", b"]", b"}", b"42", b"-", b"Ada", b" ", b"\\n", b"\xc3\xa9",
                b"bb", b"a", b"ccc", b", ", b'"', b"n"]
    pieces += [b"".join(rng.choice(alphabet) for _ in range(rng.randint(2, 4))) for _ in range(2_000)]
    pieces = list(dict.fromkeys(pieces)) + [b""]
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])


def tokens_of(info: TokenizerInfo, text: bytes) -> list[int]:
    """A greedy longest-match tokenization (any one that spells the text will do)."""
    index = {token: i for i, token in enumerate(info.decoded_vocab) if token}
    out, at = [], 0
    while at < len(text):
        for end in range(min(len(text), at + 16), at, -1):
            if text[at:end] in index:
                out.append(index[text[at:end]])
                at = end
                break
    return out


def test_an_eager_compile_leaves_no_walk_to_a_step() -> None:
    info = vocabulary()
    compiled = structgen.compile(Grammar.builtin("json"), info)
    bound = compiled.step_bound()
    assert isinstance(bound, StepBound)
    assert bound.states_left == 0 and bound.walks == 0
    assert bound.entries_built == bound.entries_possible > 0  # a small grammar: every entry built
    assert 0 < bound.most_dependent <= bound.most_groups
    assert bound.trie_nodes > len(info.decoded_vocab) // 2
    assert bound.as_dict()["walks"] == 0 and "StepBound(walks=0" in repr(bound)


def test_a_larger_grammar_reports_what_its_compile_left() -> None:
    """798 lexer states (gaps of up to 64 spaces, a counted string): past the
    precompute's entry limit, and, at this vocabulary, past its walk budget."""
    compiled = structgen.compile(Grammar.from_json_schema(SCHEMA), vocabulary())
    bound = compiled.step_bound()
    assert 0 < bound.entries_built < bound.entries_possible or bound.entries_built == 0
    assert 0 <= bound.states_left <= bound.lexer_states
    assert bound.walks == (3 if bound.states_left else 0)


@pytest.mark.parametrize("schema", [SCHEMA, None])
def test_lazy_steps_stay_within_the_bound_reported_before_them(schema: dict[str, object] | None) -> None:
    info = vocabulary()
    grammar = Grammar.from_json_schema(schema) if schema is not None else Grammar.builtin("json")
    compiled = structgen.compile(grammar, info, lazy=True)
    before = compiled.step_bound()
    assert before.states_left == before.lexer_states and before.walks == 3  # nothing built yet
    matcher = structgen.Matcher(compiled)
    bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
    for token in tokens_of(info, TEXT.encode()):
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(token)
        after = compiled.step_bound()
        built_states = before.states_left - after.states_left
        assert 0 <= built_states <= 3 + MAX_SHIFT_CHAIN  # its own, the start's, a reference's, a chain
        if before.walks == 0:
            assert built_states == 0
        if before.walks == 1:
            assert built_states <= 1
        assert after.entries_built - before.entries_built <= 1 + before.refinements  # one top: one entry
        before = after
    assert matcher.can_terminate()
    assert before.states_left < before.lexer_states  # the steps built what they visited, no more


def test_deep_states_a_step_builds_alone_are_left_to_it() -> None:
    """A number's digits past ``DEEP_FROM`` bytes (the lexer counts 308 of them to
    keep a number a double): an eager compile leaves those states to the steps,
    which build at most one each (``walks == 1``), and every mask is the one a
    compile that built every state gives."""
    from structgen.engine.precompute_order import DEEP_FROM

    info = vocabulary()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    compiled = structgen.compile(Grammar.from_json_schema(schema), info)
    bound = compiled.step_bound()
    assert bound.states_left == bound.alone_left > 250 and bound.walks == 1
    whole = structgen.compile(Grammar.from_json_schema(schema), info, lazy=True)
    for state in range(whole.step_bound().lexer_states):
        whole.groups(state)
    assert whole.step_bound().walks == 0
    text = b'{"n": -' + b"42" * (DEEP_FROM + 8) + b"}"
    matcher, reference = structgen.Matcher(compiled), structgen.Matcher(whole)
    before = bound
    for token in tokens_of(info, text):
        assert matcher.allowed_tokens() == reference.allowed_tokens()
        assert matcher.accept_token(token) and reference.accept_token(token)
        after = compiled.step_bound()
        assert before.states_left - after.states_left <= 1
        before = after
    assert before.states_left < bound.states_left  # the steps past DEEP_FROM bytes built their states
    assert matcher.can_terminate() and reference.can_terminate()

"""Issue 45, deliverable 3: compiled grammars kept for reuse are bounded in number
and in bytes (``structgen.compiled_budget``), and their bytes are counted from the
objects (``CompiledGrammar.memory_bytes``), tables grown by steps included."""

from __future__ import annotations

import gc

import pytest

import structgen
from structgen.compiled_budget import BUDGET, CompiledBudget
from structgen.engine.table_memory import tables_bytes
from structgen.generate import tokenizer_info_for


@pytest.fixture(scope="module")
def info() -> structgen.TokenizerInfo:
    return tokenizer_info_for(structgen.load_tokenizer())


def schema(i: int) -> structgen.Grammar:
    return structgen.Grammar.from_json_schema({"type": "object", "properties": {f"key_{i}": {"type": "integer"}}, "required": [f"key_{i}"]})


def listed_ids_bytes(compiled: structgen.CompiledGrammar) -> int:
    """The token lists of the built groups, each list once: a floor for the count."""
    seen: dict[int, int] = {}
    for groups in compiled.tables._groups:
        for group in groups or ():
            seen[id(group.token_ids)] = len(group.token_ids) * 4
    return sum(seen.values())


def test_memory_is_counted_from_the_tables_and_again_after_steps_build_more(info: structgen.TokenizerInfo) -> None:
    grammar = schema(0)
    compiled = structgen.compile(grammar, info, lazy=True)  # groups and entries built by the steps
    before = compiled.memory_bytes()
    assert before >= len(grammar.lexer.table) * 8  # at least the automaton's transitions
    matcher = structgen.Matcher(compiled)
    bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
    for token in structgen.load_tokenizer().encode('{"key_0": 12345}', add_special_tokens=False):
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(token)
    after = compiled.memory_bytes()
    assert after > before + listed_ids_bytes(compiled) // 2  # the groups the steps built are counted
    assert after >= listed_ids_bytes(compiled)
    assert after == tables_bytes(compiled.tables) == compiled.memory_bytes()  # counted once, until it grows


class Holder:
    def __init__(self, compiled: structgen.CompiledGrammar) -> None:
        self.compiled_for: dict[int, tuple[object, object]] = {7: (None, compiled)}

    def kept(self) -> bool:
        return 7 in self.compiled_for


def admitted(budget: CompiledBudget, compiled: structgen.CompiledGrammar) -> Holder:
    holder = Holder(compiled)
    budget.admit(holder, 7, compiled)
    return holder


def test_past_the_count_the_least_recently_used_give_their_tables_up(info: structgen.TokenizerInfo) -> None:
    budget = CompiledBudget(max_grammars=2, max_bytes=1 << 40)
    grammars = [structgen.compile(schema(i), info) for i in range(3)]
    first, second = admitted(budget, grammars[0]), admitted(budget, grammars[1])
    budget.used(first, 7)  # the first is used again: the second is now the oldest
    third = admitted(budget, grammars[2])
    assert len(budget) == 2 and [first.kept(), second.kept(), third.kept()] == [True, False, True]
    assert budget.kept_bytes() == grammars[0].memory_bytes() + grammars[2].memory_bytes()


def test_past_the_bytes_the_oldest_go_and_the_newest_stays(info: structgen.TokenizerInfo) -> None:
    grammars = [structgen.compile(schema(i), info) for i in range(3)]
    sizes = [compiled.memory_bytes() for compiled in grammars]
    budget = CompiledBudget(max_grammars=64, max_bytes=sizes[0] + sizes[1])
    holders = [admitted(budget, compiled) for compiled in grammars]
    assert [holder.kept() for holder in holders] == [False, True, True]
    assert budget.kept_bytes() == sizes[1] + sizes[2] <= budget.max_bytes
    budget.configure(64, 1)  # smaller than any grammar: only the newest is kept, until the next comes
    assert [holder.kept() for holder in holders] == [False, False, True] and len(budget) == 1
    with pytest.raises(ValueError, match="must be positive"):
        budget.configure(0, 1)


def test_a_grammar_nobody_holds_leaves_the_budget(info: structgen.TokenizerInfo) -> None:
    """The budget keeps no grammar alive: one collected takes its entry and bytes along."""
    budget = CompiledBudget()
    kept = admitted(budget, structgen.compile(schema(5), info))
    admitted(budget, structgen.compile(schema(6), info))  # dropped at once: nothing holds it
    gc.collect()
    assert len(budget) == 1 and budget.kept_bytes() == kept.compiled_for[7][1].memory_bytes()  # type: ignore[attr-defined]


def test_a_grammar_that_grew_is_counted_again_in_turn(info: structgen.TokenizerInfo) -> None:
    budget = CompiledBudget()
    lazy = structgen.compile(schema(10), info, lazy=True)
    first = admitted(budget, lazy)
    counted = budget.kept_bytes()
    matcher = structgen.Matcher(lazy)
    matcher.fill_next_token_bitmask(structgen.allocate_token_bitmask(1, info.vocab_size))  # builds the start's groups
    assert budget.kept_bytes() == counted  # not yet seen
    other = structgen.compile(schema(11), info)
    second = admitted(budget, other)  # counts the one least recently counted again
    assert budget.kept_bytes() == lazy.memory_bytes() + other.memory_bytes() > counted + other.memory_bytes()
    assert first.kept() and second.kept()


def test_every_compile_is_admitted_and_an_evicted_grammar_compiles_again(info: structgen.TokenizerInfo) -> None:
    old = (BUDGET.max_grammars, BUDGET.max_bytes)
    try:
        BUDGET.configure(2, 1 << 40)
        grammars = [schema(20 + i) for i in range(3)]
        compiled = [structgen.compile(grammar, info) for grammar in grammars]
        assert len(BUDGET) == 2 and grammars[0].compiled_for == {} and grammars[2].compiled_for
        again = structgen.compile(grammars[0], info)
        assert again is not compiled[0] and grammars[0].compiled_for and grammars[1].compiled_for == {}
        assert structgen.compile(grammars[2], info) is compiled[2]  # kept: served as it is
        matcher = structgen.Matcher(compiled[1])  # a dropped grammar still serves whoever holds it
        assert structgen.Matcher(compiled[0]).allowed_tokens() == structgen.Matcher(again).allowed_tokens()
        assert matcher.allowed_tokens()
    finally:
        BUDGET.configure(*old)


def test_the_server_sets_the_budget_and_shows_it(info: structgen.TokenizerInfo) -> None:
    pytest.importorskip("fastapi")  # the server's extra
    from structgen.server import Limits
    from structgen.server.metrics import ServerMetrics

    held = schema(30)  # kept while it is held (the budget holds grammars weakly)
    structgen.compile(held, info)
    shown = ServerMetrics(lambda: 0, lambda: 0).render()
    assert f"structgen_compiled_grammars {len(BUDGET)}" in shown and len(BUDGET) >= 1
    assert f"structgen_compiled_grammar_bytes {BUDGET.kept_bytes()}" in shown
    with pytest.raises(ValueError, match="max_compiled_bytes must be at least 1"):
        Limits(max_compiled_bytes=0)
    with pytest.raises(ValueError, match="max_tools must be at least 1"):
        Limits(max_tools=0)

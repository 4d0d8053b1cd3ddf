"""What grammars share by pattern (structgen/pattern_caches.py): one reading of
a terminal and one automaton per pattern while they are kept, bounds on what is
kept, and grammars that share them accept what they did alone."""

from __future__ import annotations

import pytest

import structgen.grammar
from structgen import Grammar
from structgen.engine.regex import RegexError
from structgen.pattern_caches import TERMINAL_TREES, SharedAutomata, TerminalTrees


def test_a_pattern_is_read_once_while_kept() -> None:
    trees = TerminalTrees(max_chars=100)
    first = trees.parsed("[a-z]+", "")
    assert trees.parsed("[a-z]+", "") is first
    assert trees.parsed("[a-z]+", "i") is not first  # flags are part of the key
    assert len(trees) == 2 and trees.chars == 12


def test_the_least_recently_used_go_past_the_bound() -> None:
    trees = TerminalTrees(max_chars=12)
    kept = trees.parsed("aaaa", "")
    trees.parsed("bbbb", "")
    trees.parsed("aaaa", "")  # used again: "bbbb" is now the oldest
    trees.parsed("cccccc", "")
    assert trees.chars <= 12
    assert trees.parsed("aaaa", "") is kept
    assert len(trees) == 2  # "bbbb" went
    trees.parsed("x" * 13, "")  # longer than the bound: read, never kept
    assert len(trees) == 2 and trees.chars == 10


def test_a_bad_pattern_raises_each_time_and_is_not_kept() -> None:
    trees = TerminalTrees()
    for _ in range(2):
        with pytest.raises(RegexError):
            trees.parsed("a(", "")
    assert len(trees) == 0


def test_grammars_sharing_trees_accept_as_before() -> None:
    text = 'start: NAME ("," NAME)*\nNAME: /[a-z]{1,3}/\n'
    first = Grammar.from_lark(text)
    assert ("[a-z]{1,3}", "") in TERMINAL_TREES._trees
    second = Grammar.from_lark(text)
    for grammar in (first, second):
        assert grammar.accepts("ab,c")
        assert not grammar.accepts("abcd")


def test_a_second_grammar_builds_no_automaton_the_first_built(monkeypatch: pytest.MonkeyPatch) -> None:
    # a cache of this test's own: the process's may reach its bound between the two grammars
    shared = SharedAutomata()
    monkeypatch.setattr(structgen.grammar, "SHARED_AUTOMATA", shared)
    text = 'start: "[" NUMBER ("," NUMBER)* "]"\nNUMBER: /-?(0|[1-9][0-9]*)(\\.[0-9]+)?/\n'
    Grammar.from_lark(text)
    cache = shared.cache()
    held, entries = len(cache), cache.entries
    grammar = Grammar.from_lark(text)
    assert grammar.lexer.pattern_cache is cache
    assert (len(cache), cache.entries) == (held, entries)
    assert grammar.accepts("[1,-2.5,0]") and not grammar.accepts("[01]")


def test_the_shared_automata_start_again_past_their_bound() -> None:
    shared = SharedAutomata(max_entries=10)
    first = shared.cache()
    assert shared.cache() is first  # empty: under the bound
    first.entries = 11
    second = shared.cache()
    assert second is not first and second.entries == 0 and len(second) == 0

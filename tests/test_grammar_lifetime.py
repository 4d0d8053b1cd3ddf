"""A grammar that nobody holds any more goes, with everything compiled for it.

The caches that speed up compiling again (``compiled_budget``, ``spelling``'s
grammar per vocabulary, the patterns' trees and automata) must never keep a
grammar alive: a server or a benchmark builds thousands, one per request, and a
cache that held them all grew a process by gigabytes over a MaskBench run.
"""

from __future__ import annotations

import gc
import json
import warnings
import weakref
from collections.abc import Callable

import pytest

import structgen
from structgen.spelling import spellable
from structgen import Grammar, Matcher, TokenizerInfo
from structgen.generate import tokenizer_info_for


@pytest.fixture(scope="module")
def info() -> TokenizerInfo:
    return tokenizer_info_for(structgen.load_tokenizer())


def alive(compiled_ids: set[int]) -> set[int]:
    """Which of the ``CompiledGrammar`` objects that had these ids are alive (a
    native class: no weak reference; no other one is made while this looks, so an
    id still held by one is the same object)."""
    gc.collect()
    return {id(o) for o in gc.get_objects() if type(o) is structgen.CompiledGrammar and id(o) in compiled_ids}


def used_and_dropped(make: Callable[[], Grammar], info: TokenizerInfo, text: str) -> tuple[weakref.ref[Grammar], int]:
    """A weak reference to a grammar and the id of its compiled tables after a
    matcher walked ``text`` through them and every strong reference went."""
    grammar = make()
    compiled = structgen.compile(grammar, info)
    matcher = Matcher(compiled)
    assert matcher.accept_string(text) and matcher.can_terminate()
    assert structgen.compile(grammar, info) is compiled  # kept for reuse while the grammar lives
    return weakref.ref(grammar), id(compiled)


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}), '{"a": 12}'),
        (lambda: Grammar.from_json_schema({"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True}), '["ab", "c"]'),
        (lambda: Grammar.from_lark('start: "x" NUMBER\n%import common.NUMBER'), "x42"),
        (lambda: Grammar.from_regex(r"[a-z]{2,4}\d"), "abc7"),
    ],
    ids=["object", "checked-array", "lark", "regex"],
)
def test_a_compiled_grammar_nobody_holds_is_collected(make: Callable[[], Grammar], text: str, info: TokenizerInfo) -> None:
    grammar, compiled = used_and_dropped(make, info, text)
    assert not alive({compiled}) and grammar() is None


def test_a_grammar_cut_to_its_vocabulary_is_collected_with_its_cut() -> None:
    """A vocabulary without the byte 0x04 compiles a cut grammar (``spelling``);
    both go once the grammar the user built goes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "... have no single-byte token"
        letters = TokenizerInfo([b"a", b"b", b"c", b""], stop_token_ids=[3])
    grammar = Grammar.from_regex("a\x04|b")
    cut = spellable(grammar, letters)
    assert cut is not grammar
    dropped, dropped_cut = weakref.ref(grammar), weakref.ref(cut)
    assert Matcher(structgen.compile(grammar, letters)).allowed_tokens() == [1]
    del grammar, cut
    gc.collect()
    assert dropped() is None and dropped_cut() is None


def test_many_grammars_built_and_dropped_leave_nothing_behind(info: TokenizerInfo) -> None:
    """Fifty schemas compiled one after another, as a server meets them: once they
    are dropped, none is left (before, every one stayed)."""
    refs = []
    compiled: set[int] = set()
    for i in range(50):
        schema = {"type": "object", "properties": {f"k{i}": {"type": "string", "enum": [f"v{i}", "w"]}}, "required": [f"k{i}"]}
        grammar, tables = used_and_dropped(lambda: Grammar.from_json_schema(schema), info, json.dumps({f"k{i}": "w"}))
        refs.append(grammar)
        compiled.add(tables)
    assert not alive(compiled) and sum(ref() is not None for ref in refs) == 0

"""A constraint's language is checked when it is built and when it meets a
vocabulary (issue 42): a grammar that no finite text matches is an
``EmptyLanguage`` (a schema's, ``NoFiniteValue``), rules that derive nothing are
dropped, and a grammar is cut down to the texts its vocabulary can spell
(``structgen.spelling``): ``Unspellable`` when none is left.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest

import structgen
from schema2grammar import SchemaError
from structgen import Grammar, TokenizerInfo
from structgen.constraint import make_constraint
from structgen.grammar import NoFiniteValue
from structgen.lark_rules import GrammarError
from structgen.matcher import Matcher
from structgen.productive import EmptyLanguage
from structgen.matcher import _compiled
from structgen.spelling import Unspellable, absent_bytes, spellable
from tiny_model import tiny_model

REF_CYCLE = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
SELF_REQUIRED = {"type": "object", "properties": {"x": {"$ref": "#"}}, "required": ["x"]}


def letters_info(pieces: list[str]) -> tuple[TokenizerInfo, list[str]]:
    """A vocabulary of ``pieces`` and a stop token (the last id): no other byte is in it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "... have no single-byte token": the point here
        info = TokenizerInfo([p.encode() for p in pieces] + [b""], stop_token_ids=[len(pieces)])
    return info, pieces


def allowed(grammar: Grammar, info: TokenizerInfo, pieces: list[str], after: str = "") -> set[str]:
    matcher = Matcher(structgen.compile(grammar, info))
    assert matcher.accept_string(after)
    return {pieces[t] if t < len(pieces) else "<stop>" for t in matcher.allowed_tokens()}


@pytest.mark.parametrize(
    ("lark", "says"),
    [
        ('start: start "a"', "'start' derives no finite text"),
        ('start: a\na: b "x"\nb: a "y"', "'start' derives no finite text"),
        ('value: "a"', "no rule for its start symbol 'start'"),
        ("start: A\nA: /[^\\s\\S]/", "terminals ['A'] match no text"),
    ],
)
def test_a_grammar_that_derives_nothing_is_an_empty_language(lark: str, says: str) -> None:
    with pytest.raises(EmptyLanguage, match=re.escape(says)) as raised:
        Grammar.from_lark(lark)
    assert isinstance(raised.value, GrammarError) and raised.value.code == "empty_language"


@pytest.mark.parametrize("schema", [{"$ref": "#"}, REF_CYCLE, SELF_REQUIRED], ids=["ref-itself", "ref-cycle", "required-itself"])
def test_a_schema_without_a_finite_value_is_refused(schema: Any) -> None:
    """Before, these built: ``{"$ref": "#"}`` a grammar whose matcher allowed no token
    at all, the required self-reference one that wrote ``{"x":{"x":...`` to max_tokens."""
    with pytest.raises(NoFiniteValue, match="the schema has no finite value") as raised:
        Grammar.from_json_schema(schema)
    assert isinstance(raised.value, SchemaError) and isinstance(raised.value, EmptyLanguage)
    assert raised.value.code == "empty_language"
    with pytest.raises(SchemaError):
        make_constraint(schema=schema)


def test_an_optional_self_reference_still_has_values() -> None:
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"x": {"$ref": "#"}}})
    assert grammar.accepts('{"x":{"x":{}}}') and grammar.accepts("{}")


def test_rules_that_derive_nothing_open_no_path() -> None:
    """``y`` needs ``x``, which needs itself: after ``a`` only ``b`` can end the text,
    so the mask must not offer ``d`` (before, it did, and then allowed nothing)."""
    info, pieces = letters_info(["a", "b", "c", "d"])
    grammar = Grammar.from_lark('start: "a" y | "a" "b"\ny: "d" x\nx: x "c"')
    assert allowed(grammar, info, pieces, "a") == {"b"}
    assert grammar.accepts("ab") and not grammar.accepts("adc")


def test_a_grammar_is_cut_to_what_the_vocabulary_spells() -> None:
    """No token holds the byte 0x04: the path through it is never offered (before,
    the mask let ``a`` through and then allowed no token), and a grammar needing it
    everywhere is ``Unspellable``."""
    info, pieces = letters_info(["a", "b", "c", '"'])
    assert 0x04 in absent_bytes(info) and ord("a") not in absent_bytes(info)
    either = Grammar.from_regex("a\x04|b")
    assert Matcher(_compiled(either, info, False)).allowed_tokens() == [0, 1]  # the grammar alone: "a" or "b"
    assert allowed(either, info, pieces) == {"b"}  # compiled for this vocabulary: "b" only
    spelled = spellable(either, info)
    assert allowed(spelled, info, pieces) == {"b"} and allowed(spelled, info, pieces, "b") == {"<stop>"}
    assert spellable(either, info) is spelled  # cached per grammar and vocabulary
    lark = Grammar.from_lark('start: "a" X | "b"\nX: "\\x04"')
    assert allowed(spellable(lark, info), info, pieces) == {"b"}
    with pytest.raises(Unspellable, match="no token contains") as raised:
        spellable(Grammar.from_regex("ab?\x04"), info)
    assert raised.value.code == "unspellable" and isinstance(raised.value, GrammarError)


@pytest.mark.parametrize("pattern", ["[abc]+", '"[^"]*"', "(a|\x04)+"])
def test_a_grammar_that_never_needs_a_missing_byte_is_kept_as_it_is(pattern: str) -> None:
    """A byte it may use but never needs (a string may hold any character) costs
    nothing: the mask never offers a token it lacks, and the grammar is the same object."""
    info, _ = letters_info(["a", "b", "c", '"'])
    grammar = Grammar.from_regex(pattern)
    assert spellable(grammar, info) is grammar


@pytest.fixture(scope="module")
def smollm2() -> tuple[Any, Any]:
    tokenizer = structgen.load_tokenizer()
    return tiny_model(tokenizer), tokenizer


def test_smollm2_lacks_some_bytes(smollm2: tuple[Any, Any]) -> None:
    from structgen.generate import tokenizer_info_for

    _, tokenizer = smollm2
    lacking = absent_bytes(tokenizer_info_for(tokenizer))
    assert {0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xF1, 0xF2} <= lacking and ord("a") not in lacking


@pytest.mark.parametrize("pattern", ["\U00050000", "[\U00040000-\U000bffff]+", "\x04"])
def test_generating_what_the_vocabulary_cannot_spell_is_refused_at_compile_time(smollm2: tuple[Any, Any], pattern: str) -> None:
    """Before: ``ValueError: byte 0xf1 has no token in this vocabulary`` from
    jump-forward, or "stop token 0 was allowed by the mask, then refused"."""
    model, tokenizer = smollm2
    with pytest.raises(Unspellable):
        structgen.generate(model, tokenizer, "x", regex=pattern, max_tokens=8)
    from structgen.generate import tokenizer_info_for

    with pytest.raises(Unspellable):  # every compile, not only generate's: the logits processor, vLLM, beams
        structgen.compile(Grammar.from_regex(pattern), tokenizer_info_for(tokenizer))


@pytest.mark.parametrize("missing", ["\U00050000", "\x04"])
def test_generating_keeps_to_the_paths_the_vocabulary_can_spell(smollm2: tuple[Any, Any], missing: str) -> None:
    """Before, the mask offered every letter, the model took one, and jump-forward
    failed: ``ValueError: byte 0xf1 has no token in this vocabulary``."""
    model, tokenizer = smollm2
    assert structgen.generate(model, tokenizer, "x", regex=f"[a-y]{missing}|zz", max_tokens=8) == "zz"

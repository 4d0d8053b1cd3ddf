"""Grammar composition (``Grammar.union`` / ``sequence`` / ``repeat`` / ``literal``)
and the lark text a composed grammar travels as (``structgen.lark_writer``).

Oracles: Python's ``re`` for literal texts, the parts' own ``accepts`` for what a
composition accepts (a union accepts what one part accepts; a sequence what splits
into the parts' texts), and the grammar read back from the written text.
"""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest

from structgen import Grammar, GrammarError
from structgen.composition import MAX_PARTS, composed, literal_rules
from structgen.json.string_lengths import StringLengths
from structgen.json.unique_check import UniqueItemsCheck
from structgen.lark_rules import read_lark
from structgen.lark_writer import write_lark

TRICKY = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", 'say "hi"', "back\\slash", 'a\\"b', "it's", "a/b", "tab\there",
          "line\nbreak", "é ✓ 😀", "(?:x)*", "^$.|+?{}[]-#&~ ", "\x00\x7f", "\\x5b", "\\u0041", "/"]


@pytest.mark.parametrize("text", TRICKY)
def test_a_literal_is_its_text_exactly(text: str) -> None:
    grammar = Grammar.literal(text)
    assert grammar.accepts(text)
    for other in (text[:-1], text + "x", "x" + text, text.upper() if text.upper() != text else text + text):
        assert not grammar.accepts(other), repr(other)


def test_an_empty_literal_is_refused() -> None:
    with pytest.raises(GrammarError, match="needs text"):
        Grammar.literal("")


@pytest.mark.parametrize("text", TRICKY)
def test_written_text_reads_back_to_the_same_language(text: str) -> None:
    """A literal, and a regex of the text's characters escaped as ``re.escape`` does
    (backslashes, a slash, control characters), read back from the written text."""
    for rules in (literal_rules(text), Grammar.from_regex(re.escape(text) + "x?").rules):
        again = read_lark(write_lark(rules))
        assert len(again.terminals) == len(rules.terminals)
        first, second = Grammar(rules), Grammar(again)
        for probe in (text, text + "x", text[:-1], "x", text + "xx"):
            assert first.accepts(probe) == second.accepts(probe), (text, probe)


def test_escapes_lark_would_evaluate_keep_their_meaning() -> None:
    """``\\x5b`` in a pattern is a literal ``[``; lark turns ``\\x5b`` in its text into a
    bare ``[`` (a class opener), so the writer must write ``\\[``."""
    rules = Grammar.from_regex("a\\x5bb|c\\u0041|d\\x2f").rules  # a regex's own escapes, as Python reads them
    assert rules.terminals[0].value == "a\\x5bb|c\\u0041|d\\x2f"
    again = Grammar(read_lark(write_lark(rules)))
    assert again.accepts("a[b") and again.accepts("cA") and again.accepts("d/")
    assert not again.accepts("ab") and not again.accepts("a\\x5bb")


PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}, "age": {"type": "integer"}},
          "required": ["name"], "additionalProperties": False}


def test_union_accepts_what_one_part_accepts() -> None:
    answer = Grammar.from_json_schema(PERSON, whitespace="compact")
    trigger = Grammar.literal("<tool_call>")
    either = Grammar.union(answer, trigger)
    texts = ['{"name":"ann"}', '{"name":"ann","age":3}', "<tool_call>", '{"name":"anne"}', "<tool_call", "", '{"age":3}']
    for text in texts:
        assert either.accepts(text) == (answer.accepts(text) or trigger.accepts(text)), text


def test_sequence_and_repeat_accept_what_splits_into_the_parts() -> None:
    value = Grammar.from_json_schema({"type": "integer", "minimum": 0, "maximum": 99})
    calls = Grammar.sequence(Grammar.literal("<c>"), Grammar.repeat(value, Grammar.literal(",")), Grammar.literal("</c>"))
    rng = random.Random(5)
    for _ in range(200):
        items = [str(rng.randrange(-5, 120)) for _ in range(rng.randrange(0, 4))]
        text = "<c>" + ",".join(items) + "</c>"
        expected = bool(items) and all(value.accepts(item) for item in items)
        assert calls.accepts(text) == expected, text
    assert not calls.accepts("<c>1,,2</c>") and not calls.accepts("<c>1,2") and not calls.accepts("1,2</c>")
    bare = Grammar.repeat(Grammar.literal("ab"))
    assert [bare.accepts("ab" * n) for n in range(4)] == [False, True, True, True]


def test_an_optional_part_is_it_or_nothing() -> None:
    value = Grammar.from_json_schema({"type": "integer"})
    grammar = Grammar.sequence(Grammar.literal("<"), Grammar.optional(value), Grammar.literal(">"))
    assert [grammar.accepts(t) for t in ("<>", "<12>", "<1 2>", "<12", "<x>")] == [True, True, False, False, False]
    assert Grammar.from_lark(grammar.source[1]).accepts("<7>")  # its text builds it again


def test_parts_symbols_do_not_capture_each_other() -> None:
    """Two parts with rules of the same names (every translation has ``start`` and
    ``value``) keep their own languages."""
    small = Grammar.from_json_schema({"enum": [1, 2]})
    text = Grammar.from_json_schema({"type": "string", "enum": ["x"]})
    both = Grammar.sequence(small, Grammar.literal(";"), text)
    assert both.accepts('1;"x"') and not both.accepts('"x";1') and not both.accepts('1;2')


def test_equal_terminals_are_shared() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    single = Grammar.from_json_schema(schema)
    double = Grammar.sequence(single, single)
    assert len(double.rules.terminals) == len(single.rules.terminals)


def test_counted_lengths_carry_over_and_text_checks_do_not() -> None:
    """A string maximum the matcher counts is marked in its terminal, so the composed
    grammar counts it too; a uniqueItems check follows a text from its first byte
    and is left out (the server re-checks what the report calls approximated)."""
    long = Grammar.from_json_schema({"type": "string", "maxLength": 300})
    unique = Grammar.from_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    assert long.check(StringLengths) is not None and unique.check(UniqueItemsCheck) is not None
    joined = Grammar.sequence(Grammar.literal("<"), long, Grammar.literal(">"))
    assert joined.check(StringLengths) is not None
    assert joined.accepts('<"' + "a" * 300 + '">') and not joined.accepts('<"' + "a" * 301 + '">')
    tagged = Grammar.sequence(Grammar.literal("<"), unique)
    assert tagged.check(UniqueItemsCheck) is None and tagged.accepts('<["a","a"]')


def test_a_composed_grammar_is_rebuilt_from_its_text() -> None:
    """The text kept as ``source`` builds the same grammar: what a vLLM worker gets."""
    calls = Grammar.repeat(Grammar.from_json_schema(PERSON), Grammar.literal("\n"))
    kind, text = calls.source
    assert kind == "lark"
    again = Grammar.from_lark(text)
    for probe in itertools.islice(_probes(), 40):
        assert again.accepts(probe) == calls.accepts(probe), probe


def _probes() -> itertools.chain[str]:
    person = ['{"name": "ann"}', '{"name": "bo", "age": 30}', '{"name": "toolong"}']
    return itertools.chain(person, ["\n".join(p) for p in itertools.product(person, repeat=2)], ["", "\n"])


def test_the_number_of_parts_is_bounded() -> None:
    with pytest.raises(GrammarError, match="at most"):
        composed([literal_rules("a")] * (MAX_PARTS + 1), [[0]])
    with pytest.raises(GrammarError, match="no part"):
        composed([literal_rules("a")], [[1]])
    with pytest.raises(GrammarError, match="at least one"):
        composed([], [[]])


def test_lark_grammars_with_inline_terminals_templates_and_ignore_compose() -> None:
    """lark names inline terminals ``__ANON_0`` and template rules ``_sep{A,B}``,
    neither of which its own reader takes back: the composed text renames them."""
    listing = Grammar.from_lark('''
start: "[" _sep{item, ","} "]"
_sep{x, sep}: x (sep x)*
item: /[a-z]+/ | "++"
%ignore " "
''')
    assert listing.accepts("[a, ++, b]")
    both = Grammar.sequence(listing, Grammar.literal(";"), listing)
    assert both.accepts("[a,b] ; [c]") and not both.accepts("[a,b];")
    again = Grammar.from_lark(both.source[1])
    assert again.accepts("[a , b];[++]")


def test_a_terminal_one_part_ignores_stays_a_token_in_another() -> None:
    spaced = Grammar.from_lark('start: "a" "b"\n%ignore " "\n')
    space = Grammar.literal(" ")
    joined = Grammar.sequence(Grammar.literal("x"), space, Grammar.literal("y"))
    assert joined.accepts("x y") and not joined.accepts("xy")
    either = Grammar.union(spaced, joined)
    assert either.accepts("a b") and either.accepts("ab") and either.accepts("x y")

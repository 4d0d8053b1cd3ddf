"""Indentation-sensitive grammars (``structgen.indenter``, docs/indentation.md):
lark's ``Indenter`` made part of the grammar, with exact masks.

Whole texts are judged as lark judges them (its LALR parser with its own
``Indenter``); masks equal the per-token oracle of ``test_exactness`` (a fork of
the matcher fed each token) at every step of random walks, and rollback and
fork keep the levels.
"""

from __future__ import annotations

import random

import lark
import pytest
from lark.indenter import Indenter as LarkIndenter

import structgen
from structgen import Grammar, GrammarError, Indenter, Matcher, TokenizerInfo
from test_exactness import oracle, synthetic_vocabulary
from walking import walk

BLOCKS = r"""
start: (_NL | stmt)*
stmt: simple | compound
simple: NAME "=" expr _NL | "pass" _NL | "return" expr _NL
compound: "if" expr ":" suite ("else" ":" suite)?
        | "while" expr ":" suite
suite: simple | _NL _INDENT stmt+ _DEDENT
expr: NAME | NUMBER | "(" expr ("," expr)* ")" | "[" (expr ("," expr)*)? "]" | expr "+" expr
NAME: /[a-z_]+/
NUMBER: /[0-9]+/
COMMENT: /#[^\n]*/
_NL: ( /\r?\n[\t ]*/ | COMMENT )+
%ignore /[\t ]+/
%ignore COMMENT
%declare _INDENT _DEDENT
"""
"""A small language of blocks, brackets and comments, indented as Python is."""

WORDS = ("if", "while", "else", "pass", "return", " a", "x", " = ", "1", ":", "\n", "    ", "  ", "\t", " ", "\n    ",
         "\n        ", "\n  ", "(", ")", ",", "[", "]", "+", "#", "# c", ":\n", ")\n")


class BlocksIndenter(LarkIndenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


MAX_WIDTH = 12


def blocks() -> Grammar:
    return Grammar.from_lark(BLOCKS, indenter=Indenter(newline="_NL", max_width=MAX_WIDTH))


def lark_accepts(text: str) -> bool:
    """lark's verdict. lark lexes a comment the text ends with as ``_NL`` (a
    newline token with no newline), on which its ``Indenter`` fails (an
    ``IndexError``); structgen reads it as the ignored ``COMMENT`` (a lexed newline
    holds a newline), which lark agrees with once the line is ended."""
    parser = lark.Lark(BLOCKS, parser="lalr", postlex=BlocksIndenter())
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    except IndexError:
        assert "#" in text.rsplit("\n", 1)[-1], text
        return lark_accepts(text + "\n")
    return True


TEXTS = [
    "x = 1\n",
    "if a:\n    x = 1\n",
    "if a:\n    x = 1\n  y = 2\n",  # a dedent to no enclosing level
    "if a:\n    x = 1\ny = 2\n",
    "if a:\n    if b:\n        x = 1\n    y = 2\nz = 3\n",  # two levels, closed one at a time
    "if a:\n    if b:\n        x = 1\nz = 3\n",  # two levels closed by one newline
    "if a:\n    if b:\n        x = 1\n   y = 2\n",
    "if a:\n    x = 1\n        y = 2\n",  # an indent no rule opens
    "x = (1,\n  2)\n",  # inside brackets a newline is nothing
    "x = [1,\n\n      2,\n 3]\n",
    "if a:\nx = 1\n",  # a block that does not open
    "if a:\n    x = 1",  # no newline at the end
    "if a:\n    x = 1\n\n\n",
    "if a:\n    x = 1\n    # c\n    y = 2\n",
    "if a:\n    x = 1\n# c\n    y = 2\n",  # a comment line does not close the block
    "while a:\n\tx = 1\n        y = 2\n",  # a tab is tab_len columns
    "while a:\n\tx = 1\n    y = 2\n",
    "if a:\n  pass\nelse:\n  pass\n",
    "if a:\n  pass\n else:\n  pass\n",
    "if a: pass\n",
    "if a:\n    if b:\n        pass\n    else:\n        pass\nelse:\n    pass\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_whole_texts_are_judged_as_lark_judges_them(text: str) -> None:
    assert blocks().accepts(text) == lark_accepts(text), text


FIRST_LINES = [
    "  x = 1\n",
    "\tx = 1\n",
    "\n\n    x = 1\n",
    "# c\n  x = 1\n",
    "   \n\t\n# c\n  # c\nx = 1\n",  # blank and comment lines first: no line indented
    "\nx = 1\n",
    "",
    "  ",
    "# c",
]


@pytest.mark.parametrize("text", FIRST_LINES)
def test_a_text_begins_a_line_where_the_start_takes_a_newline_first(text: str) -> None:
    """``start: (_NL | stmt)*`` takes a newline first, so the text is read as
    beginning a line: judged as lark judges the text after a newline (its first
    line indented is refused, as Python refuses it); with ``starts_line=False``,
    as lark judges the text itself (whitespace before the first token ignored)."""
    assert blocks().accepts(text) == lark_accepts("\n" + text), text
    lenient = Grammar.from_lark(BLOCKS, indenter=Indenter(newline="_NL", max_width=MAX_WIDTH, starts_line=False))
    assert lenient.accepts(text) == lark_accepts(text), text


def test_a_text_begins_no_line_where_the_start_takes_no_newline_first() -> None:
    """``start: stmt+`` cannot take a newline first: the text is lark's, whitespace
    before the first token ignored; asking for ``starts_line`` is an error."""
    grammar = BLOCKS.replace("start: (_NL | stmt)*", "start: stmt+")
    assert Grammar.from_lark(grammar).accepts("  x = 1\n")
    assert not Grammar.from_lark(grammar).accepts("\nx = 1\n")
    with pytest.raises(GrammarError, match="starts_line: the text cannot begin a line"):
        Grammar.from_lark(grammar, indenter=Indenter(newline="_NL", starts_line=True))


def test_a_line_deeper_than_max_width_cannot_be_written() -> None:
    grammar = blocks()
    assert grammar.accepts("if a:\n" + " " * MAX_WIDTH + "x = 1\n")
    assert not grammar.accepts("if a:\n" + " " * (MAX_WIDTH + 1) + "x = 1\n")
    assert grammar.accepts("x = (1,\n" + " " * MAX_WIDTH + "2)\n")
    assert grammar.accepts("x = (1,\n" + " " * (MAX_WIDTH + 30) + "2)\n")  # inside brackets any width
    assert not grammar.accepts("x = 1\n" + " " * (MAX_WIDTH + 30) + "y = 2\n")


def vocabulary() -> TokenizerInfo:
    return synthetic_vocabulary(WORDS, 7)


@pytest.mark.parametrize("seed", range(3))
def test_masks_equal_the_oracle_on_random_walks(seed: int) -> None:
    """Every step of 8 walks of up to 40 tokens: the whole mask equals the oracle,
    stop ids come exactly where the text is complete, and finished texts parse
    in lark."""
    grammar = blocks()
    info = vocabulary()

    def at_step(matcher: Matcher, allowed: list[int], text: bytes) -> None:
        assert allowed == oracle(matcher, range(info.vocab_size)), text
        complete = matcher.can_terminate()
        assert complete == grammar.accepts(text), text
        assert all((stop in allowed) == complete for stop in info.stop_token_ids), text

    def finished(text: bytes) -> None:
        assert lark_accepts(text.decode()), text

    assert walk(structgen.compile(grammar, info), info, random.Random(seed), 8, 40, 28, at_step, finished) >= 1


def masked_character_by_character(program: str) -> Matcher:
    """A matcher of ``blocks()`` over ``vocabulary()`` fed ``program`` a character
    at a time, its mask equal to the oracle before each one."""
    info = vocabulary()
    matcher = Matcher(structgen.compile(blocks(), info))
    for index in range(len(program)):
        assert sorted(matcher.allowed_tokens()) == oracle(matcher, range(info.vocab_size)), program[:index]
        assert matcher.accept_string(program[index])
    return matcher


def test_masks_follow_the_levels_of_a_nested_program() -> None:
    """At each point of a nested program, the mask over the vocabulary equals the
    oracle (the levels decide which indentation may follow a newline)."""
    matcher = masked_character_by_character("if a:\n    while b:\n        x = 1\n    y = (1,\n  2)\n    # c\nz = 3\n")
    assert matcher.can_terminate()


def test_rollback_and_fork_keep_the_levels() -> None:
    compiled = structgen.compile(blocks(), vocabulary())
    matcher = Matcher(compiled)
    assert matcher.accept_string("if a:\n    if b:\n        x = 1\n")
    fork = matcher.fork()
    assert fork.accept_string("    y = 2\n")  # back to the first level
    assert not matcher.accept_string("   y")  # no level at 3 columns
    assert matcher.accept_string("z = 3\n") and matcher.can_terminate()
    matcher.rollback(1)
    assert matcher.accept_string("        w = 4\n") and matcher.can_terminate()
    assert fork.accept_string("v = 5\n") and fork.can_terminate()


def test_a_lark_indenter_is_read() -> None:
    grammar = Grammar.from_lark(BLOCKS, indenter=BlocksIndenter())
    assert grammar.accepts("if a:\n\tx = 1\n") and not grammar.accepts("if a:\n\tx = 1\n  y = 2\n")


@pytest.mark.parametrize("text, options, message", [
    (BLOCKS, {"newline": "_NEWLINE"}, "no newline terminal _NEWLINE"),
    (BLOCKS.replace("%declare _INDENT _DEDENT", "_INDENT: \"{\"\n%declare _DEDENT"), {}, "_INDENT must have no pattern"),
    (BLOCKS.replace('"(" expr ("," expr)* ")"', '"(" expr'), {}, "leaves RPAR"),
    (BLOCKS.replace('| "[" (expr ("," expr)*)? "]"', '| "]" expr'), {}, "closes RSQB"),
    (BLOCKS.replace("%ignore COMMENT", "%ignore COMMENT\n%ignore _NL"), {}, "is %ignore'd"),
    (BLOCKS.replace("suite: simple |", "suite: _INDENT stmt _DEDENT _INDENT stmt _DEDENT | simple |"), {},
     "opens two blocks"),
    (BLOCKS, {"max_width": 0}, "max_width must be between"),
    (BLOCKS, {"tab_len": 0}, "tab_len must be at least 1"),
])
def test_a_grammar_the_indenter_cannot_follow_is_refused(text: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(GrammarError, match=message):
        Grammar.from_lark(text, indenter=Indenter(**{"newline": "_NL", **options}))


def test_an_indenter_of_another_kind_is_refused() -> None:
    with pytest.raises(GrammarError, match="neither a structgen Indenter nor a lark Indenter"):
        Grammar.from_lark(BLOCKS, indenter=object())


def test_a_grammar_that_declares_both_is_read_with_the_python_indenter() -> None:
    """Without ``indenter=``, ``%declare _INDENT _DEDENT`` means lark's
    ``PythonIndenter`` (its newline ``_NL`` here, the grammar naming no ``_NEWLINE``)."""
    grammar = Grammar.from_lark(BLOCKS)
    assert grammar.accepts("if a:\n\tx = 1\n") and not grammar.accepts("if a:\n\tx = 1\n  y = 2\n")


def test_other_declared_terminals_are_refused() -> None:
    with pytest.raises(GrammarError, match="have no pattern"):
        Grammar.from_lark(BLOCKS.replace("%declare _INDENT _DEDENT", "%declare _INDENT _DEDENT _OTHER")
                          .replace('| "pass" _NL', '| "pass" _OTHER _NL'))
    with pytest.raises(GrammarError, match="have no pattern"):
        Grammar.from_lark('start: "a" _X\n%declare _X')


def test_an_indented_grammar_is_not_composed() -> None:
    with pytest.raises(GrammarError, match="cannot be composed"):
        Grammar.union(blocks(), Grammar.literal("x"))


def test_an_entry_seen_in_a_view_is_refined_in_the_views_under_it() -> None:
    """A refinement of an entry seen in a view is built in the view under the state
    it learns (``MaskTables.refine_key``), so it classifies only what the view left
    dependent, not every group holding a newline again; each refinement's
    dependent groups are some of its parent's, and every mask equals the oracle."""
    program = "if a:\n    while (b +\n  c):\n        x = [1,\n 2]\n        if d:\n            y = (1 + (2 + 3))\n"
    matcher = masked_character_by_character(program)
    tables = matcher._engine.compiled.tables
    in_view_refined = 0
    work = list(tables._entries.values())
    while work:
        entry = work.pop()
        for key, deeper in entry.deeper.items():
            assert {id(group) for group in deeper.dependent} <= {id(group) for group in entry.dependent}
            if key < 0:  # the entry seen in a view: its refinements know the view under them
                for refined_key, refined in deeper.deeper.items():
                    assert refined_key >= tables.lr_state_count  # the view is part of the key
                    assert refined.context[1:] == deeper.context
                    in_view_refined += 1
            work.append(deeper)
    assert in_view_refined >= 1

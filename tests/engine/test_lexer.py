"""The lexer against a reference built on the `regex` module's partial matching.

On ASCII a byte is a character, so "extend the lexeme while it is still a prefix of
some terminal" can be checked independently of our automata with
``regex.fullmatch(..., partial=True)``.
"""

from __future__ import annotations

import random

import pytest
import regex

from structgen.engine.dfa import DEAD, build_dfa
from structgen.engine.lexer import START, Lexer, LexerError
from structgen.engine.regex import literal, parse

TERMINAL_SETS = {
    "json": [
        r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
        r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
        "true", "false", "null", r"\{", r"\}", r"\[", r"\]", ",", ":", r"[ \t\n]+",
    ],
    "keywords": ["if", "else", r"[a-z_][a-z0-9_]*", r"[0-9]+", r"\(", r"\)", r"\s+", "=", "=="],
    "prefixes": ["a", "abc", "bd", "b", "c"],
    "comments": [r"//[^\n]*", "/", r"\*", r"[a-z]+", r"\n", " "],
}
PIECES = {
    "json": ['"a"', '"\\n"', '"', "12", "-0.5", "1e9", "true", "nul", "null", "{", "}", "[", "]", ",", ":", " ", "\n"],
    "keywords": ["if", "else", "iff", "x1", "_y", "42", "(", ")", " ", "=", "==", "==="],
    "prefixes": ["a", "abc", "bd", "b", "c", "ab"],
    "comments": ["//", "/", "*", "ab", "\n", " ", "//x y"],
}
ALPHABETS = {
    "json": '{}[],:" \t\n0123456789-+.eEtrufalsn\\/abx',
    "keywords": "ifelsxyz_019()= \t=",
    "prefixes": "abcd",
    "comments": "/*ab \n",
}


def reference_lex(patterns: list[str], text: str) -> list[tuple[int, ...]] | None:
    out: list[tuple[int, ...]] = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and any(regex.fullmatch(p, text[i : j + 1], partial=True) for p in patterns):
            j += 1
        if j == i:
            return None
        alternatives = tuple(k for k, p in enumerate(patterns) if regex.fullmatch(p, text[i:j]))
        if not alternatives:
            return None
        out.append(alternatives)
        i = j
    return out


@pytest.mark.parametrize("name", list(TERMINAL_SETS))
def test_lexing_equals_the_reference(name: str) -> None:
    patterns = TERMINAL_SETS[name]
    lexer = Lexer(build_dfa([parse(p) for p in patterns]))
    rng = random.Random(name)
    alphabet = ALPHABETS[name]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(1000)]
    texts += ["".join(rng.choice(PIECES[name]) for _ in range(rng.randint(1, 8))) for _ in range(1000)]
    texts += ['{"a": [1, -2.5e3, true, null], "b": "x\\n"}', "if x == 10 else y", "abcbd", "abd", "a//x\n/*"]
    lexed = 0
    for text in texts:
        expected = reference_lex(patterns, text)
        assert lexer.lex(text.encode()) == expected, (name, text)
        lexed += expected is not None and len(expected) > 1
    assert lexed > 100  # many texts lex into several lexemes


def test_equal_extent_alternatives_are_all_emitted() -> None:
    lexer = Lexer(build_dfa([literal("if"), parse("[a-z]+"), parse(r"\s+")]))
    assert lexer.lex(b"if iff") == [(0, 1), (2,), (1,)]


def test_no_backtracking_to_a_shorter_lexeme() -> None:
    """'ab' extends toward 'abc', so after 'ab' the 'd' is an error, not 'a' + 'bd'."""
    lexer = Lexer(build_dfa([literal("a"), literal("abc"), literal("bd")]))
    assert lexer.lex(b"abd") is None
    assert lexer.lex(b"abcbd") == [(1,), (2,)]


def test_lexemes_end_at_bytes_not_characters() -> None:
    """Maximal munch is per byte: a lexeme that grows into the first byte of 'é' and
    then meets 'è' (same first byte) is an error, not 'a' followed by 'è'."""
    lexer = Lexer(build_dfa([literal("aé"), literal("a"), literal("è")]))
    assert lexer.lex("aé".encode()) == [(0,)]
    assert lexer.lex("aè".encode()) is None


def test_step_and_finish() -> None:
    lexer = Lexer(build_dfa([parse("[0-9]+"), literal(",")]))
    state, finished = lexer.step(START, ord("1"))
    assert state != DEAD and finished == ()
    following, finished = lexer.step(state, ord(","))
    assert finished == (0,) and lexer.finish(following) == (True, (1,))
    assert lexer.step(START, ord("x")) == (DEAD, ())
    assert lexer.finish(START) == (True, ())


def test_terminal_matching_the_empty_string_is_an_error() -> None:
    with pytest.raises(LexerError, match="match the empty string"):
        Lexer(build_dfa([parse("[0-9]*"), literal(",")]))


@pytest.mark.parametrize(
    ("pattern", "opener", "closer"),
    [
        (r'".*?"', '"', '"'),
        (r"/\*(.|\n)*?\*/", "/*", "*/"),
        (r"`[^`]*?`", "`", "`"),
        (r"<[a-z]+?>", "<", ">"),
        (r"'(\\.|[^\\'])*?'", "'", "'"),
        (r"x+?y", "x", "y"),
        (r"""[ub]?("(?!"").*?"|'(?!'').*?')""", '"', '"'),  # in each alternative of its last group (SynCode's STRING)
    ],
)
def test_lazy_terminals_end_at_their_first_match_as_re_match_does(pattern: str, opener: str, closer: str) -> None:
    """A terminal with a lazy repeat ends where ``re.match`` (lark's lexer) ends it,
    not at its longest match; the other terminals still munch maximally."""
    import re

    from structgen.engine.regex import ends_at_first_match

    assert ends_at_first_match(pattern)
    lexer = Lexer(build_dfa([parse(pattern), parse("[ab]+")], shortest=[True, False]))
    rng = random.Random(5)
    alphabet = "\"/*`'<>xy\\ab\n"

    def middle() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))

    checked = 0
    for _ in range(2000):
        text = opener + middle() + closer + middle() + rng.choice([closer, ""]) + rng.choice(["", "ab"])
        found = re.match(pattern, text)
        if found is None or not (set(text[found.end() :]) <= set("ab")):
            continue
        # the text is one lazy lexeme followed by one [ab]+ lexeme (or nothing)
        lexemes = lexer.lex(text.encode())
        expected = [(0,)] + ([(1,)] if found.end() < len(text) else [])
        assert lexemes == expected, (pattern, text)
        checked += 1
    assert checked >= 10
    assert not ends_at_first_match(r'".*"') and not ends_at_first_match("a{2,3}")
    # a greedy part after the lazy one, or nothing after it: read as the greedy form
    assert not ends_at_first_match("a*?b+") and not ends_at_first_match("x(ab|a)+?")

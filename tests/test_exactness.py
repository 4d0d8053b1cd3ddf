"""Exactness of masks (DESIGN §4): equal to trying every token, never a dead end,
the real tokens of real programs always allowed, and rollback/fork equal to replay.

The oracle feeds each token's bytes to a fork of the matcher (``accept_token``):
it shares the lexer and parser with the mask but not the mask tables, so any
difference is a mask bug. Texts that the matcher calls complete are also parsed
by lark itself, an implementation that shares nothing with ours.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import random
from pathlib import Path
from typing import Any, NamedTuple

import lark
import pytest

import structgen
from structgen import Grammar, Matcher, TokenizerInfo


class Case(NamedTuple):
    """A grammar and the fragments its synthetic vocabulary is built from, so that
    random walks over that vocabulary make progress through the grammar."""

    lark: str
    words: tuple[str, ...]


CASES: dict[str, Case] = {
    "ambiguous_sum": Case(
        'start: e\ne: e "+" e | e "-" e | "(" e ")" | NUMBER\nNUMBER: /[0-9]+/',
        ("1", "23", "+", "-", "(", ")", "+1", "2)", "(4"),
    ),
    "catalan": Case('start: s\ns: s s | "a" | "(" s ")"', ("a", "(", ")", "aa", "(a", "a)")),
    "dangling_else": Case(
        'start: s\ns: "if" c s | "if" c s "else" s | NAME ";"\nc: "(" NAME ")"\nNAME: /[a-z]+/\n%ignore " "',
        ("if", "else", "(", ")", ";", "x", " ", "elsewhere", "i", "f"),
    ),
    "ignore_whitespace": Case(
        'start: "let" NAME "=" NAME "in" NAME\nNAME: /[a-z]+/\n%ignore /[ \\t\\n]+/',
        ("let", "in", "=", " ", "\n", "\t", "x", "y", "  ", "inx"),
    ),
    "keyword_vs_identifier": Case(
        'start: stmt+\nstmt: "if" NAME "then" NAME ";" | NAME ":=" NAME ";" | "print" NAME ";"\n'
        "NAME: /[a-z_][a-z0-9_]*/\n%ignore \" \"",
        ("if", "then", "print", ":=", ":", "=", ";", " ", "x", "iff", "the", "n1", "_"),
    ),
    "nested_brackets": Case(
        'start: b*\nb: "(" b* ")" | "[" b* "]" | "{" b* "}" | "<>"', ("(", ")", "[", "]", "{", "}", "<", ">", "()", "<>")
    ),
    "equal_extent": Case(
        'start: key "=" val ("," key "=" val)*\nkey: IDENT\nval: WORD | NUM\n'
        "IDENT: /[a-z][a-z0-9]*/\nWORD: /[a-z0-9]+/\nNUM: /[0-9]+/",
        ("a", "b1", "7", "42", "=", ",", "x=", "=1", "ab"),
    ),
    "equal_extent_swapped": Case(
        'start: A B | B A "!"\nA: /[ab]+/\nB: /[bc]+/\n%ignore " "', ("a", "b", "c", "bb", " ", "!", "ab", "bc")
    ),
    "prefix_literals": Case('start: ("a" | "ab" | "abc" | "c" | "bc")+', ("a", "b", "c", "ab", "bc", "abc", "ca")),
    "prefix_literals_separated": Case(
        'start: w ("," w)* "."\nw: "a" | "ab" | "abc" | "abcd"\n%ignore " "', ("a", "b", "c", "d", "ab", "abc", ",", ".", " ")
    ),
    "optional_repeat": Case(
        'start: "x"? "y"* "z"+ ["w" "v"] ("q" | "r")* "."', ("x", "y", "z", "w", "v", "q", "r", ".", "yy", "zw")
    ),
    "empty_alternatives": Case(
        'start: a b c "."\na: "a" a |\nb: | "b" | "bb"\nc: c "c" |', ("a", "b", "c", ".", "bb", "ab", "cc")
    ),
    "left_recursion": Case('start: l\nl: l "," ITEM | ITEM\nITEM: /[0-9]+/', ("1", "23", ",", ",4", "5,")),
    "right_recursion": Case('start: r\nr: ITEM ";" r | ITEM "."\nITEM: /[a-z]+/', ("a", "bc", ";", ".", "d;")),
    "unicode": Case(
        'start: (GREEK | CJK | EMOJI | "→" | " ")+\nGREEK: /[α-ω]+/\nCJK: /[一-龥]/\nEMOJI: /[😀-😏]/',
        ("α", "βγ", "ω", "日", "本", "😀", "😏", "→", " ", "a"),
    ),
    "case_insensitive": Case(
        'start: "select"i NAME ("," NAME)* "from"i NAME\nNAME: /[a-z]+/\n%ignore " "',
        ("SELECT", "select", "Sel", "ect", "FROM", "from", "fR", "x", ",", " "),
    ),
    "precedence": Case(
        "?start: sum\n?sum: product | sum \"+\" product | sum \"-\" product\n"
        '?product: power | product "*" power | product "/" power\n?power: atom "^" power | atom\n'
        '?atom: NUMBER | NAME | "-" atom | "(" sum ")" | NAME "(" [sum ("," sum)*] ")"\n'
        'NUMBER: /[0-9]+(\\.[0-9]+)?/\nNAME: /[a-z]+/\n%ignore " "',
        ("1", "2.5", "+", "-", "*", "/", "^", "(", ")", ",", "x", "f(", " "),
    ),
    "line_comments": Case(
        'start: stmt*\nstmt: NAME "=" NUMBER ";"\nNAME: /[a-z]+/\nNUMBER: /[0-9]+/\n'
        "COMMENT: /#[^\\n]*/\n%ignore COMMENT\n%ignore /[ \\n]+/",
        ("x", "=", "1", ";", "#", "# c", "\n", " ", "x=1;"),
    ),
    "block_comments": Case(
        'start: "[" [NAME ("," NAME)*] "]"\nNAME: /[a-z]+/\nC_COMMENT: /\\/\\*([^*]|\\*+[^*\\/])*\\*+\\//\n'
        '%ignore C_COMMENT\n%ignore " "',
        ("[", "]", "a", ",", "/*", "*/", "*", "/", " ", "**/"),
    ),
    "string_escapes": Case(
        'start: STRING ("," STRING)*\nSTRING: /"([^"\\\\\\n]|\\\\["\\\\\\/nt]|\\\\u[0-9a-fA-F]{4})*"/',
        ('"', "a", "\\", '\\"', "\\n", "\\u", "00e9", ",", "é", '",'),
    ),
    "numbers": Case(
        'start: num ("," num)*\nnum: INT | FLOAT | HEX | BIN\nINT: /[+-]?(0|[1-9][0-9]*)/\n'
        "FLOAT: /[+-]?[0-9]+\\.[0-9]*([eE][+-]?[0-9]+)?/\nHEX: /0x[0-9a-fA-F]+/\nBIN: /0b[01]+/\n%ignore \" \"",
        ("0", "1", "12", "-", "+", ".", "e", "E", "0x", "f", "0b", ",", " "),
    ),
    "key_literal_vs_string": Case(
        'start: "{" [pair ("," pair)*] "}"\npair: "\\"id\\"" ":" NUM | STRING ":" STRING\n'
        'STRING: /"[a-z]*"/\nNUM: /[0-9]+/\n%ignore " "',
        ("{", "}", '"', "id", '"id"', ":", "7", ",", "x", " ", '":'),
    ),
    "two_lookahead": Case('start: a "x" "y" | b "x" "z"\na: "p"\nb: "p"', ("p", "x", "y", "z", "px")),
    "lr1_not_lalr": Case(
        'start: "a" a_ "d" | "b" b_ "d" | "a" b_ "e" | "b" a_ "e"\na_: "c"\nb_: "c"', ("a", "b", "c", "d", "e", "ac")
    ),
    "nullable_prefix": Case('start: x "q"\nx: y "w" x | "w"\ny: |"v"', ("q", "w", "v", "vw", "wq")),
    "xml_like": Case(
        'start: element\nelement: "<" NAME ">" content* "</" NAME ">" | "<" NAME "/>"\n'
        "content: element | TEXT\nNAME: /[a-z]+/\nTEXT: /[a-z ]+/",
        ("<", ">", "</", "/>", "a", "b", " ", "<a>", "</a>", "ab"),
    ),
    "template": Case(
        'start: part*\npart: TEXT | "{{" NAME "}}" | "{%" "if" NAME "%}" start "{%" "end" "%}"\n'
        'TEXT: /[^{}% ]+/\nNAME: /[a-z]+/\n%ignore " "',
        ("{{", "}}", "{%", "%}", "if", "end", "x", "hi", " ", "{", "}", "%"),
    ),
}
"""Small grammars, one per lexing or parsing situation the masks must get right."""

JSON_LARK = (Path(__file__).resolve().parent.parent / "grammars" / "json.lark").read_text()
JSON_WORDS = ("{", "}", "[", "]", ",", ":", '"', "a", "1", "-", ".", "e", "true", "null", " ", "\n", "\\n", '"k": ')
DEAD_END_CASES = ["precedence", "nested_brackets", "string_escapes", "xml_like", "keyword_vs_identifier", "numbers"]
"""Grammars for the real-vocabulary walks, next to JSON: their lark parse is cheap."""


def synthetic_vocabulary(words: tuple[str, ...], seed: int) -> TokenizerInfo:
    """Every byte, the grammar's fragments, random concatenations of them and random
    byte slices of those (which cut UTF-8 characters), one special id and a stop id."""
    rng = random.Random(seed)
    encoded = [w.encode() for w in words]
    joined = [b"".join(rng.choice(encoded) for _ in range(rng.randint(2, 4))) for _ in range(300)]
    slices = []
    for piece in rng.sample(joined, 100):
        start = rng.randrange(len(piece))
        slices.append(piece[start : rng.randint(start + 1, len(piece))])
    pieces = [bytes([b]) for b in range(256)] + encoded + joined + slices + [b"", b""]
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1], special_token_ids=[len(pieces) - 2])


@functools.cache
def grammar(name: str) -> Grammar:
    """One Grammar per name for the session, so compiled grammars are shared (cached on it)."""
    return Grammar.from_lark(JSON_LARK if name == "json" else CASES[name].lark)


@functools.cache
def vocabulary(name: str) -> TokenizerInfo:
    return synthetic_vocabulary(JSON_WORDS if name == "json" else CASES[name].words, len(name))


@functools.cache
def lark_parser(name: str) -> lark.Lark:
    """lark's own recognizer: every lexing is tried, so it accepts at least our language."""
    if name == "json":
        return lark.Lark(JSON_LARK, parser="lalr")
    return lark.Lark(CASES[name].lark, parser="earley", lexer="dynamic_complete")


def lark_accepts(name: str, text: bytes) -> bool:
    try:
        lark_parser(name).parse(text.decode())
    except lark.exceptions.LarkError:
        return False
    return True


def oracle(matcher: Matcher, token_ids: range) -> list[int]:
    """The ids whose bytes a fork of the matcher accepts, tried one by one."""
    return [t for t in token_ids if matcher.fork().accept_token(t)]


def check_step(name: str, matcher: Matcher, info: TokenizerInfo, text: bytes) -> list[int]:
    """Assert the mask equals the oracle over the whole vocabulary and that stop ids
    are in it exactly when the text is complete; return the mask."""
    allowed = sorted(matcher.allowed_tokens())
    assert allowed == oracle(matcher, range(info.vocab_size)), (name, text)
    complete = matcher.can_terminate()
    assert complete == grammar(name).accepts(text), (name, text)
    assert all((stop in allowed) == complete for stop in info.stop_token_ids), (name, text)
    return allowed


def choose(matcher: Matcher, allowed: list[int], info: TokenizerInfo, rng: random.Random, closing: bool) -> int:
    """A random allowed token; a stop token with probability 1/4 once allowed, and
    when ``closing``, preferably one after which the text is complete, so walks end."""
    stops = [t for t in allowed if t in info.stop_token_ids]
    if stops and rng.random() < 0.25:
        return stops[0]
    if closing:
        for token in rng.sample(allowed, min(len(allowed), 64)):
            fork = matcher.fork()
            if fork.accept_token(token) and fork.can_terminate():
                return token
    return rng.choice(allowed)


def oracle_walks(name: str, info: TokenizerInfo, walks: int, steps: int, seed: int) -> int:
    """Random walks checking every step; returns how many walks chose a stop token."""
    compiled = structgen.compile(grammar(name), info)
    rng = random.Random(seed)
    finished = 0
    for _ in range(walks):
        matcher = Matcher(compiled)
        text = b""
        for step in range(steps):
            allowed = check_step(name, matcher, info, text)
            assert allowed, (name, text)  # never a dead end
            token = choose(matcher, allowed, info, rng, closing=step >= steps // 2)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                assert lark_accepts(name, text), (name, text)
                finished += 1
                break
            text += info.decoded_vocab[token]
    return finished


@pytest.mark.parametrize("name", list(CASES))
def test_synthetic_vocabulary_masks_equal_the_oracle(name: str) -> None:
    """Every step of 8 walks of up to 14 tokens, over the grammar's own ~670-token
    vocabulary: the whole mask equals the oracle; finished texts parse in lark."""
    finished = oracle_walks(name, vocabulary(name), walks=8, steps=14, seed=1)
    assert finished >= 1, name


@pytest.mark.parametrize("name", list(CASES))
def test_smollm2_masks_equal_the_oracle(name: str, infos: dict[str, TokenizerInfo]) -> None:
    """SmolLM2's 49k vocabulary: every step of 2 walks of 6 tokens, the whole mask
    against the whole vocabulary (no sampling)."""
    oracle_walks(name, infos["smollm2"], walks=2, steps=6, seed=2)


def test_json_synthetic_vocabulary_masks_equal_the_oracle() -> None:
    finished = oracle_walks("json", vocabulary("json"), walks=8, steps=20, seed=3)
    assert finished >= 1


@pytest.mark.parametrize("vocab", ["smollm2", "deepseek"])
@pytest.mark.parametrize("name", ["json", *DEAD_END_CASES])
def test_real_vocabulary_walks_never_dead_end(name: str, vocab: str, infos: dict[str, TokenizerInfo]) -> None:
    """Walks of up to 60 tokens over a real vocabulary never meet an empty mask, stop
    ids are allowed exactly when the text is complete, and most walks finish (closing
    bias after 20 tokens) with a text that lark (and for JSON, ``json``) accepts."""
    info = infos[vocab]
    compiled = structgen.compile(grammar(name), info)
    rng = random.Random(f"{name}-{vocab}")
    finished = 0
    for _ in range(8):
        matcher = Matcher(compiled)
        text = b""
        for step in range(60):
            allowed = matcher.allowed_tokens()
            assert allowed, (name, text)
            allowed_set = set(allowed)
            assert all((stop in allowed_set) == matcher.can_terminate() for stop in info.stop_token_ids), (name, text)
            token = choose(matcher, allowed, info, rng, closing=step >= 20)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                assert lark_accepts(name, text), (name, text)
                if name == "json":
                    json.loads(text)
                finished += 1
                break
            text += info.decoded_vocab[token]
    assert finished >= 4, (name, vocab)

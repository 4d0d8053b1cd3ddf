"""Grammar: lark text or a regex to an exact recognizer (regex -> DFA -> lexer -> GLR)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

import corpus
import structgen
from structgen.grammar import Grammar
from structgen.lark_rules import GrammarError

JSON_LARK = (Path(__file__).resolve().parent.parent / "grammars" / "json.lark").read_text()


def strict_json(text: str) -> bool:
    def refuse(constant: str) -> None:
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


def mutations(text: str, rng: random.Random) -> list[str]:
    out = []
    for _ in range(3):
        chars = list(text)
        position = rng.randrange(len(chars) + 1)
        op = rng.randrange(3)
        if op == 0 and chars:
            del chars[min(position, len(chars) - 1)]
        elif op == 1:
            chars.insert(position, rng.choice('{}[],:" \\0123456789.-eEtrufalsn\x01\t/u'))
        elif chars:
            chars[min(position, len(chars) - 1)] = rng.choice('"\\}],: 0')
        out.append("".join(chars))
    return out


def test_json_grammar_accepts_exactly_strict_json() -> None:
    grammar = Grammar.from_lark(JSON_LARK)
    rng = random.Random(5)
    documents = [t for t in corpus.texts() if strict_json(t)]
    assert len(documents) >= 90
    texts = documents + [m for d in documents for m in mutations(d, rng)]
    texts += ["", " ", "1", "-0", "01", "1.", ".5", "1e5", "[1,]", "{,}", '"\\x"', '"\\u12"', "nul", "[] []", " [ ] "]
    accepted = 0
    for text in texts:
        assert grammar.accepts(text) == strict_json(text), text
        accepted += strict_json(text)
    assert accepted >= 150 and len(texts) - accepted >= 150


def test_regex_grammar_equals_re() -> None:
    grammar = Grammar.from_regex(r"[a-z]+(-[a-z]+)*@[a-z]+\.(com|org)", "i")
    for text in ["ab-c@x.com", "AB@X.ORG", "a@b.net", "-a@b.com", "a@b.co", ""]:
        assert grammar.accepts(text) == (re.fullmatch(r"[a-z]+(-[a-z]+)*@[a-z]+\.(com|org)", text, re.I) is not None)


def test_keyword_and_identifier_alternatives() -> None:
    grammar = Grammar.from_lark('start: "if" NAME | NAME NAME\nNAME: /[a-z]+/\n%ignore " "')
    assert grammar.accepts("if x")  # the keyword, or two names
    assert grammar.accepts("iff x")  # maximal munch: "iff" is one NAME
    assert grammar.accepts("x if")  # "if" as a NAME
    assert not grammar.accepts("if")
    assert not grammar.accepts("a b c")


def test_terminal_errors_name_the_terminal() -> None:
    with pytest.raises(GrammarError, match=r"terminal A \(/\(\?<=x\)x/\): lookbehind assertions"):
        Grammar.from_lark("start: A\nA: /(?<=x)x/")
    with pytest.raises(GrammarError, match=r"terminals \['A'\] match the empty string"):
        Grammar.from_lark('start: A "b"\nA: /x*/')


def test_grammars_nested_too_deeply_are_grammar_errors() -> None:
    """lark reads a rule's expressions recursively: deep enough, a clear error, not a
    RecursionError (nor a 20,000-character message for a deep terminal)."""
    assert Grammar.from_lark("start: " + "(" * 100 + '"a"' + ")" * 100).accepts("a")
    with pytest.raises(GrammarError, match="nests expressions too deeply"):
        Grammar.from_lark("start: " + "(" * 3000 + '"a"' + ")" * 3000)
    with pytest.raises(GrammarError, match="nests groups too deeply") as caught:
        Grammar.from_lark("start: A\nA: /" + "(?:" * 5000 + "a" + ")" * 5000 + "/")
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(("name", "terminals"), [("go", 87), ("java", 101), ("sql", 79), ("c", 32)])
def test_syncode_grammars_compile(name: str, terminals: int) -> None:
    """Real programming-language grammars (read from the syncode package) go through
    every stage: all their terminals are regexes the engine compiles."""
    import importlib.util

    spec = importlib.util.find_spec("syncode")
    assert spec is not None and spec.submodule_search_locations
    root = Path(list(spec.submodule_search_locations)[0])
    grammar = Grammar.from_lark(next(root.rglob(f"{name}.lark")).read_text())
    assert len(grammar.rules.terminals) == terminals
    assert grammar.lexer.dfa.state_count > terminals


def test_builtin_grammars_ship_with_the_package() -> None:
    """grammars/json.lark is installed as structgen.grammars: it is read from the
    installed package, not from a checkout."""
    grammar = structgen.Grammar.builtin("json")
    assert grammar.accepts('{"a": [1, -2.5e3, true, null, "\\u00e9"]}')
    assert not grammar.accepts("{'a': 1}")
    with pytest.raises(structgen.GrammarError, match="no built-in grammar 'yaml'; there are \\['json', 'python'\\]"):
        structgen.Grammar.builtin("yaml")


PLAIN_GRAMMARS = [
    'start: a | B\na: B C | \nB: /b/\nC: /c+/i\nD: /unused/',
    'start: x [B x (C x)*] D\nx: B | C\ny: B\nB: /b/\nC: /c/\nD: /d/',
    'start: p q\np: A [B (C A)*] | [B A]\nq: A (C A)* | (C A)* B\nA: /a/\nB: /\\x22b\\\\"/\nC: /\\u00e9|[^\\n]/s',
    'start: a\na: b\nb: a A |\nunused: A\nA: /a/',
    'start: A  B\nA : /a/\n\nB: /b/  ',
]
"""Grammars in the plain form ``schema2grammar`` writes, which ``lark_rules``
reads without lark."""

FALLBACK_GRAMMARS = [
    'start: A\nA: "a"',  # a string literal
    "start: A+\nA: /a/",  # another operator
    "start: A // comment\nA: /a/",
    "start: A\nA: /a/\n%ignore A",
    "start: [A]\nA: /a/",  # a one-symbol [...]
    "start: x\nx: A | A\nA: /a/",  # a repeated expansion
    "start: missing\nA: /a/",
]
"""Grammars outside that form: lark reads them (or reports the error)."""


@pytest.mark.parametrize("text", PLAIN_GRAMMARS + FALLBACK_GRAMMARS)
def test_plain_grammars_read_as_lark_reads_them(text: str) -> None:
    from structgen import lark_rules

    plain = lark_rules._read_plain(text, "start")
    if text in FALLBACK_GRAMMARS:
        assert plain is None
        return
    assert plain is not None
    assert plain == lark_rules._read_with_lark(text, "start")


def test_schema_grammars_read_as_lark_reads_them() -> None:
    from schema2grammar import Options, translate

    from structgen import lark_rules

    schemas = [
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"x": {"type": "object"}}, "required": ["x"], "additionalProperties": True},
        {"type": "array", "items": {"anyOf": [{"type": "null"}, {"type": "boolean"}, {"enum": ["p", "q"]}]}},
        {},
    ]
    for schema in schemas:
        text, _ = translate(schema, Options())
        plain = lark_rules._read_plain(text, "start")
        assert plain is not None, text
        assert plain == lark_rules._read_with_lark(text, "start"), text

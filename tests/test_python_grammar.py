"""The shipped Python grammar (``Grammar.builtin("python")``, grammars/python.lark)
with its indentation exact (docs/indentation.md): real standard-library modules
allowed token by token under three real tokenizers, finished random walks that
lark's own Python parser accepts, and wrong indentation or brackets refused."""

from __future__ import annotations

import ast
import functools
import os
import random
from pathlib import Path
from typing import Any

import lark
import pytest
from lark.indenter import PythonIndenter

import structgen
from structgen import Grammar, Matcher, TokenizerInfo
from test_exactness import random_segmentation
from walking import walk

STDLIB = Path(os.__file__).parent
FILES = 50
"""Standard-library modules fed token by token: the smallest of 1 KB and more."""


@functools.cache
def python() -> Grammar:
    return Grammar.builtin("python")


@functools.cache
def lark_python() -> lark.Lark:
    text = (Path(__file__).resolve().parent.parent / "grammars" / "python.lark").read_text()
    return lark.Lark(text, parser="lalr", postlex=PythonIndenter())


def lark_accepts(text: str) -> bool:
    try:
        lark_python().parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


def modules() -> list[Path]:
    """Real modules of the running Python, as written (never rewritten for the grammar)."""
    found = sorted((path for path in STDLIB.glob("*.py") if path.stat().st_size >= 1_000),
                   key=lambda path: (path.stat().st_size, path.name))
    assert len(found) >= FILES
    return found[:FILES]


def test_the_modules_parse_as_lark_parses_them() -> None:
    """The grammar's language is lark's: every module both accept or both refuse,
    and every one is accepted (lark's grammar covers these modules)."""
    for path in modules():
        text = path.read_text()
        assert python().accepts(text), path.name
        assert lark_accepts(text), path.name


@pytest.mark.slow
@pytest.mark.parametrize("vocab", ["smollm2", "deepseek", "mistral_v3"])
def test_modules_are_allowed_token_by_token(vocab: str, hf_tokenizers: dict[str, Any],
                                            infos: dict[str, TokenizerInfo]) -> None:
    """Forced paths: each module as the tokenizer encodes it, every token in the
    mask at its step and accepted, and one random other segmentation of every
    fifth module accepted token by token; a stop token is allowed at the end."""
    info = infos[vocab]
    compiled = structgen.compile(python(), info)
    rng = random.Random(vocab)
    bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
    for number, path in enumerate(modules()):
        text = path.read_text()
        encoded = hf_tokenizers[vocab].encode(text, add_special_tokens=False)
        assert info.join_bytes(encoded) == text.encode(), path.name
        paths = [encoded] + ([random_segmentation(text.encode(), info, rng)] if number % 5 == 0 else [])
        for masked, ids in zip((True, False), paths):
            matcher = Matcher(compiled)
            for step, token in enumerate(ids):
                if masked:  # a bit test: a list of a 100k-id mask costs more
                    matcher.fill_next_token_bitmask(bitmask)
                    assert int(bitmask[0, token >> 5]) >> (token & 31) & 1, (path.name, info.join_bytes(ids[:step])[-80:])
                assert matcher.accept_token(token), (path.name, info.join_bytes(ids[:step])[-80:])
            assert matcher.can_terminate(), path.name
            assert info.stop_token_ids[0] in matcher.allowed_tokens(), path.name


@pytest.mark.slow
def test_finished_random_walks_are_python_to_lark(infos: dict[str, TokenizerInfo]) -> None:
    """Walks of up to 80 tokens over SmolLM2's vocabulary (a closing bias after 40)
    that end with a stop token: lark's Python parser and ``ast.parse`` accept
    each (the text begins a line, so no first line is indented: lark would let
    one through, Python calls it an unexpected indent)."""
    info = infos["smollm2"]
    texts: list[str] = []

    def finished(text: bytes) -> None:
        assert lark_accepts(text.decode()), text
        texts.append(text.decode())

    walk(structgen.compile(python(), info), info, random.Random(3), 6, 80, 40, lambda *_: None, finished)
    assert len(texts) >= 3
    assert all(_ast_parses(text) for text in texts), texts


def _ast_parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("text", [
    "def f(x):\n    return x\n  y = 1\n",  # a dedent to no enclosing level
    "def f(x):\nreturn x\n",  # a block that does not open
    "x = 1\n    y = 2\n",  # an indent no statement opens
    "if x:\n    pass\n        pass\n",
    "x = (1,\n",  # a bracket never closed
    "x = 1)\n",  # a bracket never opened
    "x = [1, 2)\n",
    "def f(x):\n\tif x:\n        return 1\n    return 2\n",  # a tab is 8 columns
    "  x = 1\n",  # the first line indented
    "\n\n  x = 1\n",  # the first statement indented, after blank lines
    "# a comment\n\tx = 1\n",
    "x := 1\n",  # an assignment expression at statement level
    "f(a=x := 1)\n",
    "y = lambda: x := 1\n",
    "[y for x in z if w := x]\n",
])
def test_wrong_indentation_and_brackets_are_refused(text: str) -> None:
    assert not python().accepts(text), text
    assert not lark_accepts("\n" + text), text  # lark's own Indenter on a text that begins a line
    with pytest.raises(SyntaxError):
        ast.parse(text)


@pytest.mark.parametrize("text", [
    "def f(x):\n    return x\n",
    "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n",
    "x = (1,\n     2)\ny = [\n  3,\n]\n",
    "class A:\n    '''Doc.'''\n\n    def m(self):\n        # note\n        return f\"{self!r:>4}\"\n",
    "match p:\n    case [x, y]:\n        pass\n    case _:\n        pass\n",
    "s = 'a\\'b' + \"c\\\"d\" + r'\\d' + b\"\\x00\" + '''x\n'y'\n''' + \"\"\"\"\"\"\n",
    "if (n := len(a)) > 10:\n    print(n, [y := f(n), y ** 2], a[i := 0])\nwhile chunk := read():\n    pass\n",
    "\n   \n\t\n# c\n  # c\nx = 1\n",  # blank and comment lines before the first statement
    "",
])
def test_python_texts_are_accepted(text: str) -> None:
    ast.parse(text)
    assert python().accepts(text) and lark_accepts(text), text

"""The shipped Python grammar (``Grammar.builtin("python")``, grammars/python.lark)
with its indentation exact (docs/indentation.md), judged by Python's own parser
(``ast.parse``): real standard-library modules allowed token by token under three
real tokenizers, finished random walks that Python accepts, and wrong
indentation, brackets, targets, keywords and identifiers refused."""

from __future__ import annotations

import ast
import functools
import keyword
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

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


def python_accepts(text: str) -> bool:
    """Python's verdict: the text parses (``ast.parse`` also refuses what its
    parser's error rules catch, such as ``f() = 1``)."""
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def modules() -> list[Path]:
    """Real modules of the running Python, as written (never rewritten for the grammar)."""
    found = sorted((path for path in STDLIB.glob("*.py") if path.stat().st_size >= 1_000),
                   key=lambda path: (path.stat().st_size, path.name))
    assert len(found) >= FILES
    return found[:FILES]


def test_the_modules_are_accepted() -> None:
    for path in modules():
        text = path.read_text()
        assert python().accepts(text) and python_accepts(text), path.name


@pytest.mark.slow
@pytest.mark.parametrize("vocab", ["smollm2", "deepseek", "mistral_v3"])
def test_modules_are_allowed_token_by_token(vocab: str, hf_tokenizers: dict[str, Any],
                                            infos: dict[str, TokenizerInfo]) -> None:
    """Forced paths: each module as the tokenizer encodes it, every token accepted
    and, for every module under SmolLM2 and every second one under the larger
    vocabularies (a mask at 128k tokens costs more), in the mask at its step; one
    random other segmentation of every fifth module accepted token by token; a
    stop token allowed at the end."""
    info = infos[vocab]
    compiled = structgen.compile(python(), info)
    rng = random.Random(vocab)
    bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
    for number, path in enumerate(modules()):
        text = path.read_text()
        encoded = hf_tokenizers[vocab].encode(text, add_special_tokens=False)
        assert info.join_bytes(encoded) == text.encode(), path.name
        paths = [encoded] + ([random_segmentation(text.encode(), info, rng)] if number % 5 == 0 else [])
        masks = vocab == "smollm2" or number % 2 == 0
        for masked, ids in zip((masks, False), paths):
            matcher = Matcher(compiled)
            for step, token in enumerate(ids):
                if masked:  # a bit test: a list of a 100k-id mask costs more
                    matcher.fill_next_token_bitmask(bitmask)
                    assert int(bitmask[0, token >> 5]) >> (token & 31) & 1, (path.name, info.join_bytes(ids[:step])[-80:])
                assert matcher.accept_token(token), (path.name, info.join_bytes(ids[:step])[-80:])
            assert matcher.can_terminate(), path.name
            assert info.stop_token_ids[0] in matcher.allowed_tokens(), path.name


@pytest.mark.slow
def test_finished_random_walks_are_python(infos: dict[str, TokenizerInfo]) -> None:
    """Walks of up to 80 tokens over SmolLM2's vocabulary (a closing bias after 40)
    that end with a stop token: Python's parser accepts each (random tokens write
    odd names, numbers, targets and indentation: each is one Python allows)."""
    info = infos["smollm2"]
    texts: list[str] = []

    def finished(text: bytes) -> None:
        assert python_accepts(text.decode()), text
        texts.append(text.decode())

    walk(structgen.compile(python(), info), info, random.Random(3), 10, 80, 40, lambda *_: None, finished)
    assert len(texts) >= 3


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
    "f() = 1\n",  # targets: a call, an operator, a literal
    "a + b = 1\n",
    "x = 1 = y\n",
    "a, f() = 1, 2\n",
    "for a + b in c:\n    pass\n",
    "[x for f() in c]\n",
    "del f()\n",
    "f(): int = 1\n",
    "a, b: int\n",
    "f() += 1\n",
    "f(a.b=1)\n",
    "None = 1\n",  # keywords are no names
    "x = while\n",
    "x.if = 1\n",
    "f(class=1)\n",
    "a⁶ = 1\n",  # \\w holds it, Python's identifiers do not
    "x = 1 + \\  \n  2\n",  # a line continuation with a space after the backslash
])
def test_what_python_refuses_is_refused(text: str) -> None:
    assert not python().accepts(text), text
    assert not python_accepts(text), text


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
    "a, (b, *c), [d.e, f[0]] = g\nx = y = z = 0\n(a.b) = [1][0] = f().x = 2\n",  # targets
    "x: int = 5\n(y): str\na.b[c] += 1\ndel a, (b, c), [d.e]\nfor k, v in d.items():\n    pass\n",
    "[x for a, (b, c) in d if b]\nf(a, *b, c=1, **d)\n",
    "match = case = _ = 1\nNone_ = Truex = ifx = 2\n",  # soft keywords and names that start as keywords
    "é = ﬁx = 一 = Ⅰx = 1\n",
    "x = 1 + \\\n  2 + \\\r\n 3\n",
])
def test_python_texts_are_accepted(text: str) -> None:
    assert python_accepts(text), text
    assert python().accepts(text), text


def test_a_lone_starred_target_is_refused_as_python_compiles_it() -> None:
    """``*a = c`` parses (``ast.parse``), and Python's compiler refuses it: the
    grammar does as the compiler, as the PEG grammar's ``star_targets`` reads."""
    assert python_accepts("*a = c\n") and not python().accepts("*a = c\n")
    with pytest.raises(SyntaxError, match="starred assignment target"):
        compile("*a = c\n", "<text>", "exec")
    assert python().accepts("*a, = c\n[*a] = c\n(*a, b) = c\n")


def test_names_are_identifiers_but_keywords() -> None:
    """``NAME`` in grammars/python.lark is an identifier but a keyword, checked on
    the keywords, their prefixes and extensions, and random names."""
    text = (Path(__file__).resolve().parent.parent / "grammars" / "python.lark").read_text()
    name = re.compile(re.search(r"^NAME: /(.*)/$", text, re.MULTILINE).group(1))  # type: ignore[union-attr]
    rng = random.Random(0)
    words = list(keyword.kwlist) + [k[:cut] for k in keyword.kwlist for cut in range(1, len(k))]
    words += [k + tail for k in keyword.kwlist for tail in ("_", "1", "x", "é")]
    alphabet = "abdefilnorstuwyFNT_0é⁶²ﬁ一Ⅰª"
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(5000)]
    for word in words:
        assert bool(name.fullmatch(word)) == (word.isidentifier() and not keyword.iskeyword(word)), word

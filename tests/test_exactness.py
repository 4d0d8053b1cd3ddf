"""Exactness of masks (docs/design.md §4): equal to trying every token, never a dead end,
the real tokens of real programs always allowed, and rollback/fork equal to replay.

The oracle feeds each token's bytes to a fork of the matcher (``accept_token``,
then ``rollback(1)`` when accepted): it shares the lexer and parser with the mask
but not the mask tables, so any difference is a mask bug. Texts that the matcher calls complete are also parsed
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

import corpus
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
        'start: b*\nb: "(" b* ")" | "[" b* "]" | "{" b* "}" | "<>"',
        ("(", ")", "[", "]", "{", "}", "<", ">", "()", "<>"),
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
        'start: w ("," w)* "."\nw: "a" | "ab" | "abc" | "abcd"\n%ignore " "',
        ("a", "b", "c", "d", "ab", "abc", ",", ".", " "),
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
    "lazy_repeat": Case(
        'start: (TAG | WORD)+\nTAG: /<.*?>/\nWORD: /[a-z]+/\nCOMMENT: /\\/\\*[\\s\\S]*?\\*\\//\n'
        '%ignore COMMENT\n%ignore " "',
        ("<", ">", "a", "b", "/*", "*/", "*", "/", " ", "<a>", "><", "\n"),
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
DEAD_END_CASES = ["precedence", "string_escapes", "numbers", "key_literal_vs_string", "template", "unicode"]
"""Grammars for the real-vocabulary walks, next to JSON: ones whose random walks
often end (in others a name or comment grows until the length cap)."""


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
    """The ids whose bytes a probe (a fork of the matcher) accepts, tried one by one;
    a refused token leaves the probe unchanged, an accepted one is rolled back."""
    probe = matcher.fork()
    allowed = []
    for token in token_ids:
        if probe.accept_token(token):
            allowed.append(token)
            probe.rollback(1)
    return allowed


def check_step(name: str, matcher: Matcher, info: TokenizerInfo, text: bytes) -> list[int]:
    """Assert the mask equals the oracle over the whole vocabulary, holds no special
    id but stop ids, and those exactly when the text is complete; return the mask."""
    allowed = sorted(matcher.allowed_tokens())
    assert allowed == oracle(matcher, range(info.vocab_size)), (name, text)
    assert not set(allowed) & set(info.special_token_ids) - set(info.stop_token_ids), (name, text)
    complete = matcher.can_terminate()
    assert complete == grammar(name).accepts(text), (name, text)
    assert all((stop in allowed) == complete for stop in info.stop_token_ids), (name, text)
    return allowed


def choose(matcher: Matcher, allowed: list[int], info: TokenizerInfo, rng: random.Random, closing: bool) -> int:
    """A random allowed token (from the sorted mask, so the walk depends only on the
    mask's contents). Stop ids are rarely taken before ``closing``, always after;
    when closing, a token that completes the text is preferred, looked for among
    the allowed tokens of at most 2 bytes and 64 random others, and failing that a
    short token (long ones mostly extend a name or a string), so walks end."""
    stops = [t for t in allowed if t in info.stop_token_ids]
    if stops and (closing or rng.random() < 0.1):
        return stops[0]
    if closing:
        short = [t for t in allowed if len(info.decoded_vocab[t]) <= 2]
        for token in rng.sample(short, len(short)) + rng.sample(allowed, min(len(allowed), 64)):
            fork = matcher.fork()
            if fork.accept_token(token) and fork.can_terminate():
                return token
        if short:
            return rng.choice(short)
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
            token = choose(matcher, allowed, info, rng, closing=step >= steps * 2 // 3)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                assert lark_accepts(name, text), (name, text)
                finished += 1
                break
            text += info.decoded_vocab[token]
    return finished


@pytest.mark.parametrize("name", ["json", *CASES])
def test_synthetic_vocabulary_masks_equal_the_oracle(name: str) -> None:
    """Every step of 10 walks of up to 24 tokens, over the grammar's own ~670-token
    vocabulary: the whole mask equals the oracle; finished texts parse in lark."""
    finished = oracle_walks(name, vocabulary(name), walks=10, steps=24, seed=1)
    assert finished >= 1, name


@pytest.mark.parametrize("name", ["json", *CASES])
def test_smollm2_masks_equal_the_oracle(name: str, infos: dict[str, TokenizerInfo]) -> None:
    """SmolLM2's 49k vocabulary: every step of 3 walks of up to 10 tokens, the whole
    mask against the whole vocabulary (no sampling)."""
    oracle_walks(name, infos["smollm2"], walks=3, steps=10, seed=2)


def test_ambiguity_nested_in_brackets_is_followed() -> None:
    """Each "1+1+" inside a bracket leaves two parses open, so the parses of the
    prefix multiply with the depth (2**19 here, in 95 bytes): stacks that merge
    equal tops keep this polynomial, and the mask must still be exact."""
    name = "ambiguous_sum"
    info = vocabulary(name)
    matcher = Matcher(structgen.compile(grammar(name), info))
    text = b"(1+1+" * 19
    assert matcher.accept_string(text)
    assert check_step(name, matcher, info, text)
    assert matcher.accept_string(b"1" + b")" * 19) and matcher.can_terminate()


@pytest.mark.parametrize("vocab", ["smollm2", "deepseek"])
@pytest.mark.parametrize("name", ["json", *DEAD_END_CASES])
def test_real_vocabulary_walks_never_dead_end(name: str, vocab: str, infos: dict[str, TokenizerInfo]) -> None:
    """Walks of up to 60 tokens over a real vocabulary never meet an empty mask, stop
    ids are allowed exactly when the text is complete, and at least 3 of 10 walks
    finish (closing bias after 20 tokens) with a text that lark (and for JSON, ``json``) accepts."""
    info = infos[vocab]
    compiled = structgen.compile(grammar(name), info)
    rng = random.Random(f"{name}-{vocab}")
    finished = 0
    for _ in range(10):
        matcher = Matcher(compiled)
        text = b""
        for step in range(60):
            allowed = sorted(matcher.allowed_tokens())
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
    assert finished >= 3, (name, vocab)


GO_PROGRAMS = [
    r"""package main

import "fmt"

type Point struct { X int; Y int; }

func (p Point) Dot(q Point) int {
	return p.X*q.X + p.Y*q.Y
}

func sum(values []int) int {
	total := 0
	for _, v := range values {
		total += v
	}
	return total
}

func main() {
	var p Point
	p.X = 3
	p.Y = 4
	nums := []int{1, 2, 3, 4, 5}
	if sum(nums) > 10 && p.Dot(p) == 25 {
		fmt.Println("sum:", sum(nums), "x:", p.X)
	} else {
		fmt.Printf("%d %s\n", 0, `raw`)
	}
}
""",
    r"""package main

import "fmt"
import "strings"

// fib returns the n-th Fibonacci number.
func fib(n int) int {
	if n < 2 {
		return n
	}
	a, b := 0, 1
	for i := 1; i < n; i++ {
		a, b = b, a+b
	}
	return b
}

func classify(n int) string {
	switch n % 15 { case 0:
		return "fizzbuzz"
	case 3, 6, 9, 12:
		return "fizz"
	default:
		return strings.Repeat(fmt.Sprint(n), 2)
	}
}

func main() {
	counts := make(map[string]int)
	for i := 1; i <= 20; i++ {
		counts[classify(i)]++
	}
	fmt.Println("fib(10) =", fib(10), "kinds =", len(counts)) // 55 and 3
}
""",
    r"""package main

import "fmt"

type Stack struct { items []int; }

func (s Stack) Push(v int) Stack {
	s.items = append(s.items, v)
	return s
}

func (s Stack) Pop() (Stack, int, bool) {
	if len(s.items) == 0 {
		return s, 0, false
	}
	last := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return s, last, true
}

func main() {
	var s Stack
	for i := 0; i < 5; i++ {
		s = s.Push(i * i)
	}
	for {
		var v int
		var ok bool
		s, v, ok = s.Pop()
		if !ok {
			break
		}
		fmt.Println("popped", v, 0x1F, 2.5e3, "done")
	}
}
""",
]
"""Laid out as SynCode's Go grammar wants: struct fields on one line and a switch's
first case on the switch line (its rules allow no newline after those braces)."""

JAVA_PROGRAMS = [
    r"""package com.example.shapes;

import java.util.List;
import java.util.ArrayList;

public class Shapes {
    private int count;

    public Shapes(int count) {
        this.count = count;
    }

    /**
     * The area of a rectangle.
     * @param width the width
     */
    public static double area(double width, double height) {
        return width * height;
    }

    public List<Integer> squares() {
        List<Integer> result = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            result.add(i * i);
        }
        return result;
    }

    public static void main(String[] args) {
        Shapes shapes = new Shapes(10);
        int total = 0;
        for (int value : shapes.squares()) {
            total += value;
        }
        System.out.println("total = " + total);
        System.out.println(area(2.5, 4.0));
    }
}
""",
    r"""import java.util.Map;
import java.util.HashMap;

/* Counts letters. */
public class WordCounter {
    private final Map<Character, Integer> counts = new HashMap<>();

    public void add(char c) {
        if (counts.containsKey(c)) {
            counts.put(c, counts.get(c) + 1);
        } else {
            counts.put(c, 1);
        }
    }

    public int countOf(char c) {
        return counts.getOrDefault(c, 0);
    }

    public boolean isVowel(char c) {
        switch (c) {
            case 'a':
            case 'e':
            case 'i':
                return true;
            default:
                return false;
        }
    }

    public static void main(String[] args) {
        WordCounter counter = new WordCounter();
        char[] letters = new char[3];
        letters[0] = 'a';
        letters[1] = 'b';
        letters[2] = 'a';
        for (char c : letters) {
            counter.add(c);
        }
        System.out.println("a: " + counter.countOf('a') + ", b: " + counter.countOf('b'));
    }
}
""",
    r"""package demo;

public class Search {
    // Binary search over a sorted array; -1 when absent.
    static int find(int[] values, int target) {
        int low = 0;
        int high = values.length - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (values[mid] < target) {
                low = mid + 1;
            } else if (values[mid] > target) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    public static void main(String[] args) throws Exception {
        int[] values = new int[100];
        for (int i = 0; i < values.length; i++) {
            values[i] = 3 * i;
        }
        try {
            int index = find(values, 42);
            System.out.println(index + gcd(48, 18));
        } catch (IllegalStateException e) {
            throw e;
        } finally {
            System.out.println("done"); /* always */
        }
    }
}
""",
]


@functools.cache
def syncode_grammar(language: str) -> Grammar:
    spec = importlib.util.find_spec("syncode")
    assert spec is not None and spec.submodule_search_locations
    root = Path(list(spec.submodule_search_locations)[0])
    return Grammar.from_lark(next(root.rglob(f"{language}.lark")).read_text())


def json_documents() -> list[str]:
    """The JSON texts of the shared corpus, and one with nesting, escapes and non-ASCII."""
    documents = [t for t in corpus.texts() if t.strip().startswith(("{", "["))]
    nested = {"name": "Zoë \"quoted\"", "tags": ["日本", "😀", ""], "n": [-1.5e3, 0, 42], "ok": True, "x": None}
    return [*documents, json.dumps(nested, indent=2), json.dumps(nested, ensure_ascii=False)]


TEXTS = {"go": GO_PROGRAMS, "java": JAVA_PROGRAMS, "json": json_documents()}


def text_grammar(language: str) -> Grammar:
    return grammar("json") if language == "json" else syncode_grammar(language)


@functools.cache
def ids_by_bytes(info: TokenizerInfo) -> dict[bytes, list[int]]:
    by_bytes: dict[bytes, list[int]] = {}
    for token_id, spelled in enumerate(info.decoded_vocab):
        if spelled:
            by_bytes.setdefault(spelled, []).append(token_id)
    return by_bytes


def random_segmentation(data: bytes, info: TokenizerInfo, rng: random.Random) -> list[int]:
    """The bytes cut into vocabulary tokens left to right, each a random choice among
    the tokens (up to 16 bytes) that spell the text at that point."""
    by_bytes = ids_by_bytes(info)
    out: list[int] = []
    position = 0
    while position < len(data):
        options = [found for n in range(1, 17) if (found := by_bytes.get(data[position : position + n]))]
        chosen = rng.choice(options)
        out.append(rng.choice(chosen))
        position += len(info.decoded_vocab[chosen[0]])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("vocab", ["smollm2", "deepseek", "mistral_v3"])
@pytest.mark.parametrize("language", list(TEXTS))
def test_real_texts_are_allowed_token_by_token(
    language: str, vocab: str, hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]
) -> None:
    """Forced paths: each text as the tokenizer encodes it and cut into two random
    other token sequences; every token is in the mask at its step (a list scan: a set
    of a 100k-id mask costs more) and accepted, and a stop token is allowed at the end."""
    info = infos[vocab]
    compiled = structgen.compile(text_grammar(language), info)
    rng = random.Random(f"{language}-{vocab}")
    for text in TEXTS[language]:
        data = text.encode()
        assert text_grammar(language).accepts(data), text
        encoded = hf_tokenizers[vocab].encode(text, add_special_tokens=False)
        assert info.join_bytes(encoded) == data, text
        for ids in (encoded, random_segmentation(data, info, rng), random_segmentation(data, info, rng)):
            matcher = Matcher(compiled)
            for step, token in enumerate(ids):
                assert token in matcher.allowed_tokens(), (info.join_bytes(ids[:step]), info.decoded_vocab[token])
                assert matcher.accept_token(token), (info.join_bytes(ids[:step]), info.decoded_vocab[token])
            assert matcher.can_terminate(), text
            assert info.stop_token_ids[0] in matcher.allowed_tokens(), text


def observe(matcher: Matcher) -> tuple[list[int], bool, bool, str]:
    """Everything a matcher answers about its state."""
    mask = sorted(matcher.allowed_tokens())
    return mask, matcher.can_terminate(), matcher.is_terminated(), matcher.find_jump_forward_string()


def replayed(compiled: Any, history: list[int]) -> tuple[list[int], bool, bool, str]:
    matcher = Matcher(compiled)
    for token in history:
        assert matcher.accept_token(token)
    return observe(matcher)


ROLLBACK_CASES = [
    "json", "ambiguous_sum", "catalan", "dangling_else", "unicode",
    "string_escapes", "template", "equal_extent", "line_comments", "lazy_repeat",
]


def interleave(name: str, info: TokenizerInfo, operations: int, seed: int) -> tuple[int, int]:
    """Random operations on a pool of matchers (accept an allowed token, one time in
    ten with ``choose``'s closing bias so stop ids come; try a disallowed one;
    rollback(k); fork; reset): after each, every matcher looks exactly like a fresh
    one fed the tokens it still holds. Returns the longest history and the rollbacks past a stop id."""
    compiled = structgen.compile(grammar(name), info)
    rng = random.Random(seed)
    pool: list[tuple[Matcher, list[int]]] = [(Matcher(compiled), [])]
    longest = past_stop = 0
    for _ in range(operations):
        matcher, history = rng.choice(pool)
        operation = rng.random()
        if operation < 0.6:
            allowed = sorted(matcher.allowed_tokens())
            if allowed:
                token = choose(matcher, allowed, info, rng, closing=rng.random() < 0.1)
                assert matcher.accept_token(token)
                history.append(token)
        elif operation < 0.7:
            allowed_set = set(matcher.allowed_tokens())
            refused = rng.choice([t for t in range(info.vocab_size) if t not in allowed_set])
            assert not matcher.accept_token(refused)
        elif operation < 0.82:
            k = rng.randint(0, min(3, len(history)))
            past_stop += k > 0 and matcher.is_terminated()
            matcher.rollback(k)
            del history[len(history) - k :]
        elif operation < 0.97:
            if len(pool) < 6:
                pool.append((matcher.fork(), list(history)))
        else:
            matcher.reset()
            history.clear()
        longest = max(longest, len(history))
        for other, other_history in pool:
            assert observe(other) == replayed(compiled, other_history), (name, other_history)
    return longest, past_stop


@pytest.mark.parametrize("name", ROLLBACK_CASES)
def test_rollback_and_fork_interleavings_equal_replay(name: str) -> None:
    """400 operations over the grammar's synthetic vocabulary: forks share nothing
    mutable, and rollback undoes exactly k steps, past a stop token too."""
    longest, past_stop = interleave(name, vocabulary(name), operations=400, seed=5)
    assert longest >= 10 and past_stop >= 1, (longest, past_stop)


def test_rollback_and_fork_interleavings_equal_replay_on_smollm2(infos: dict[str, TokenizerInfo]) -> None:
    """The same for JSON over SmolLM2's 49k vocabulary."""
    longest, past_stop = interleave("json", infos["smollm2"], operations=150, seed=6)
    assert longest >= 10 and past_stop >= 1, (longest, past_stop)

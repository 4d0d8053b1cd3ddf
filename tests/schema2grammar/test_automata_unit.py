"""``schema2grammar.automata`` unit by unit, against Python's ``re`` and brute force.

- A pattern's DFA (``search_nfa`` + ``determinize`` over ``Classes``) accepts a string
  exactly where ECMA-262 finds the pattern in it: the oracle is ``re.search`` with
  the same random pattern written here in Python's syntax (``.`` spelled as ECMA's
  "not a line terminator", ``$`` as ``\\Z``), on exhaustive short strings and random
  longer ones over a small alphabet (ASCII, line terminators, BMP and astral).
- ``product`` signatures give intersection, union, difference and complement: they
  agree with the boolean combinations of ``re.search``.
- ``to_regex`` of a product with a boolean combination as accepting states is a regex
  over JSON string spellings: ``re.fullmatch`` of it on ``json.dumps`` spellings of a
  string (and on random other spellings: ``\\uXXXX`` in either case, ``\\/``,
  surrogate pairs) agrees with the combination of ``re.search`` on the string.
- ``_minimized`` keeps the language, never grows the state count, leaves no two
  equivalent states (a pairwise table-filling check written here), and gives the
  textbook sizes on known cases.
- ``closing_distance``, ``lengths_found`` and ``count_strings`` equal brute-force
  enumerations with ``re``; ``regexes_meet`` equals a brute-force search for a
  common witness; the state limits raise ``ecma.Unsupported``.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import re

import pytest

from schema2grammar import automata, ecma
from schema2grammar.automata import DFA, Classes

ALPHABET = ["a", "b", "c", "x", "\n", "\r", "é", "😀", "\u2028"]
"""Test strings' characters: the patterns' own, others, and ECMA line terminators."""


def build(patterns: list[str]) -> tuple[list[DFA], Classes]:
    """Each pattern's search DFA, over classes common to all of them."""
    nfas = [automata.search_nfa(ecma.parse(p)) for p in patterns]
    classes = Classes(automata.cut_points([r for nfa in nfas for moves in nfa.moves for r, _ in moves]))
    return [automata.determinize(nfa, classes) for nfa in nfas], classes


def run(dfa: DFA, classes: Classes, text: str) -> int:
    state = 0
    for char in text:
        state = dfa.next[state][bisect.bisect_right(classes.cuts, ord(char)) - 1]
    return state


def accepts(dfa: DFA, classes: Classes, text: str, accepting: list[bool] | None = None) -> bool:
    return (accepting or dfa.accepting)[run(dfa, classes, text)]


# -- random patterns, in ECMA's syntax and in Python's


ATOMS = [("a", "a"), ("b", "b"), ("[ab]", "[ab]"), ("[^a]", "[^a]"), ("[a-c]", "[a-c]"), ("é", "é"), ("😀", "😀"),
         (".", "[^\n\r\u2028\u2029]"), ("\\n", "\\n"), ("[😀-😁x]", "[😀-😁x]")]


def random_regex(rng: random.Random, depth: int = 0) -> tuple[str, str]:
    roll = rng.random()
    if depth >= 3 or roll < 0.35:
        return rng.choice(ATOMS)
    if roll < 0.6:
        parts = [random_regex(rng, depth + 1) for _ in range(rng.randrange(2, 4))]
        return "".join(e for e, _ in parts), "".join(p for _, p in parts)
    if roll < 0.8:
        parts = [random_regex(rng, depth + 1) for _ in range(rng.randrange(2, 4))]
        return "(?:" + "|".join(e for e, _ in parts) + ")", "(?:" + "|".join(p for _, p in parts) + ")"
    e, p = random_regex(rng, depth + 1)
    op = rng.choice(["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"])
    return f"(?:{e}){op}", f"(?:{p}){op}"


def random_pattern(rng: random.Random) -> tuple[str, re.Pattern[str]]:
    e, p = random_regex(rng)
    start, end = rng.choice([("", ""), ("^", ""), ("", "$"), ("^", "$"), ("^", "$")])
    python = ("\\A" if start else "") + f"(?:{p})" + ("\\Z" if end else "")
    return f"{start}(?:{e}){end}", re.compile(python)


def sample_strings(rng: random.Random, count: int, longest: int = 8) -> list[str]:
    short = ["".join(t) for n in range(3) for t in itertools.product(ALPHABET, repeat=n)]
    return short + ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(longest + 1))) for _ in range(count)]


PATTERNS = [random_pattern(random.Random(seed)) for seed in range(60)] + [
    ("^[a-c]+$", re.compile("\\A[a-c]+\\Z")), ("a.b", re.compile("a[^\n\r\u2028\u2029]b")),
    ("(?:^a|b$)", re.compile("\\Aa|b\\Z")), ("^$", re.compile("\\A\\Z")), ("[^\\s\\S]", re.compile("(?!)")),
]


@pytest.mark.parametrize("index", range(len(PATTERNS)))
def test_a_patterns_dfa_accepts_where_re_search_finds_it(index: int) -> None:
    pattern, oracle = PATTERNS[index]
    [dfa], classes = build([pattern])
    rng = random.Random(index)
    for text in sample_strings(rng, 300):
        assert accepts(dfa, classes, text) == (oracle.search(text) is not None), (pattern, text)


def _combinations(seed: int) -> tuple[list[str], list[re.Pattern[str]]]:
    rng = random.Random(1000 + seed)
    chosen = [random_pattern(rng) for _ in range(3)]
    return [e for e, _ in chosen], [p for _, p in chosen]


BOOLEAN = {
    "intersection": (lambda s: s == 0b111, lambda f: f[0] and f[1] and f[2]),
    "union": (lambda s: s != 0, lambda f: f[0] or f[1] or f[2]),
    "difference": (lambda s: s & 1 and not s & 2, lambda f: f[0] and not f[1]),
    "complement": (lambda s: not s & 1, lambda f: not f[0]),
    "symmetric": (lambda s: bool(s & 1) != bool(s & 4), lambda f: f[0] != f[2]),
}


@pytest.mark.parametrize("seed", range(15))
def test_product_signatures_are_the_boolean_combinations_of_re(seed: int) -> None:
    patterns, oracles = _combinations(seed)
    dfas, classes = build(patterns)
    product, signatures = automata.product(dfas, classes)
    for text in sample_strings(random.Random(seed), 200):
        found = [o.search(text) is not None for o in oracles]
        signature = signatures[run(product, classes, text)]
        assert [bool(signature >> i & 1) for i in range(3)] == found, (patterns, text)
        for name, (combine, expected) in BOOLEAN.items():
            assert bool(combine(signature)) == expected(found), (name, patterns, text)


def spellings_of(rng: random.Random, text: str) -> list[str]:
    """JSON spellings of ``text`` between its quotes: both ``json.dumps`` ones, and a
    random mix of each character's other spellings (no ``\\u`` for printable ASCII)."""
    out = [json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]]
    for _ in range(2):
        parts = []
        for char in text:
            code = ord(char)
            choices = [json.dumps(char)[1:-1], json.dumps(char, ensure_ascii=False)[1:-1]]
            if code < 0x20 or code == 0x22 or code == 0x5C or 0x7F <= code <= 0xFFFF:
                choices += [f"\\u{code:04x}", f"\\u{code:04X}"]
            if code > 0xFFFF:
                high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
                choices.append(f"\\u{high:04X}\\u{low:04x}")
            if char == "/":
                choices.append("\\/")
            parts.append(rng.choice(choices))
        out.append("".join(parts))
    return out


SPELLED_ALPHABET = ["a", "b", "x", "/", '"', "\\", "\n", "é", "😀"]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("name", sorted(BOOLEAN))
def test_to_regex_spells_the_language_of_the_automaton(seed: int, name: str) -> None:
    rng = random.Random(2000 + seed)
    chosen = [random_pattern(rng) for _ in range(3)]
    if seed % 3 == 0:  # some patterns naming the characters JSON escapes
        chosen[1] = ('^(?:a|"|\\\\|/)+$', re.compile('\\A(?:a|"|\\\\|/)+\\Z'))
    dfas, classes = build([e for e, _ in chosen])
    product, signatures = automata.product(dfas, classes)
    combine, expected = BOOLEAN[name]
    accepting = [bool(combine(s)) for s in signatures]
    try:
        regex = automata.to_regex(product, accepting, classes, 2_000_000)
    except ecma.Unsupported:
        pytest.skip("past max_work")
    texts = ["".join(t) for n in range(4) for t in itertools.product(SPELLED_ALPHABET, repeat=n)]
    texts += ["".join(rng.choice(SPELLED_ALPHABET) for _ in range(rng.randrange(9))) for _ in range(150)]
    compiled = None if regex is None else re.compile(regex)
    for text in texts:
        want = expected([p.search(text) is not None for _, p in chosen])
        for spelled in spellings_of(rng, text):
            got = compiled is not None and compiled.fullmatch(spelled) is not None
            assert got == want, (name, [e for e, _ in chosen], text, spelled, regex)


def test_to_regex_of_an_empty_language_is_none() -> None:
    dfas, classes = build(["^a$", "^b$"])
    product, signatures = automata.product(dfas, classes)
    assert automata.to_regex(product, [s == 3 for s in signatures], classes, 10_000) is None


def test_to_regex_past_max_work_is_unsupported() -> None:
    [dfa], classes = build(["^(?:a[bc]|b[ac]|c[ab]){1,6}$"])
    with pytest.raises(ecma.Unsupported):
        automata.to_regex(dfa, dfa.accepting, classes, 20)


def _equivalent_pairs(dfa: DFA, accepting: list[bool]) -> set[tuple[int, int]]:
    """Pairs of states no string tells apart (table filling, written out here)."""
    n = len(dfa.next)
    apart = {(p, q) for p in range(n) for q in range(p + 1, n) if accepting[p] != accepting[q]}
    changed = True
    while changed:
        changed = False
        for p in range(n):
            for q in range(p + 1, n):
                if (p, q) in apart:
                    continue
                for c in range(len(dfa.next[p])):
                    a, b = sorted((dfa.next[p][c], dfa.next[q][c]))
                    if a != b and (a, b) in apart:
                        apart.add((p, q))
                        changed = True
                        break
    return {(p, q) for p in range(n) for q in range(p + 1, n)} - apart


@pytest.mark.parametrize("index", range(0, len(PATTERNS), 3))
def test_minimization_keeps_the_language_and_leaves_no_equivalent_states(index: int) -> None:
    pattern, oracle = PATTERNS[index]
    [dfa], classes = build([pattern])
    minimal, final = automata._minimized(dfa, dfa.accepting)
    assert len(minimal.next) <= len(dfa.next)
    assert final == minimal.accepting
    assert not _equivalent_pairs(minimal, final)
    for text in sample_strings(random.Random(index), 200):
        assert accepts(minimal, classes, text, final) == (oracle.search(text) is not None), (pattern, text)


@pytest.mark.parametrize("pattern, states", [
    # a lone surrogate is no character: every DFA has a dead state for it
    ("abb", 5),  # Σ*abbΣ*: nothing, a, ab, found; dead
    ("^(?:a|b)*abb$", 5),  # the dragon book's 4, and the dead state (other characters)
    ("^a{3}$", 5),  # 0, 1, 2, 3 a's, dead
    ("^(?:a|aa|aaa)+$", 3),  # a+: start, a+, dead
    ("(?:x|y)", 3),  # not found yet, found; dead
])
def test_minimization_gives_the_textbook_sizes(pattern: str, states: int) -> None:
    [dfa], _ = build([pattern])
    minimal, _ = automata._minimized(dfa, dfa.accepting)
    assert len(minimal.next) == states


# -- brute-force oracles over the characters that matter


def _words(alphabet: str, low: int, high: int) -> list[str]:
    return ["".join(t) for n in range(low, high + 1) for t in itertools.product(alphabet, repeat=n)]


def brute_closing_distance(oracle: re.Pattern[str], alphabet: str, low: int, longest: int, reach: int) -> tuple[int, int] | None:
    """(K, D) by enumeration: K = max(shortest found text, low); D = the most
    characters a text of K or more characters needs to become a found text of
    ``low`` or more (texts that never do left out), searched to ``reach``."""
    found = [w for w in _words(alphabet, 0, longest) if oracle.search(w)]
    if not found:
        return None
    k = max(min(len(w) for w in found), low)

    def distance(text: str) -> int | None:
        for n in range(reach + 1):
            for tail in _words(alphabet, n, n):
                if len(text) + n >= low and oracle.search(text + tail):
                    return n
        return None

    distances = [d for w in _words(alphabet, k, longest) if (d := distance(w)) is not None]
    return k, max(distances)


@pytest.mark.parametrize("pattern, python, low, expected", [
    ("^[a-z]+(?: [a-z]+)*$", "\\A[a-z]+(?: [a-z]+)*\\Z", 0, (1, 1)),  # words: after a space, one more letter
    ("^ab$", "\\Aab\\Z", 0, (2, 0)),
    ("ab", "ab", 0, (2, 2)),  # "xx" needs "ab"
    ("^a{2,4}$", "\\Aa{2,4}\\Z", 0, (2, 0)),
    ("^(?:ab)+$", "\\A(?:ab)+\\Z", 0, (2, 1)),  # "aba" needs "b"
    ("^a+$", "\\Aa+\\Z", 5, (5, 0)),
    ("^a+b?$", "\\Aa+b?\\Z", 3, (3, 0)),
    ("^(?:abc|a)$", "\\A(?:abc|a)\\Z", 0, (1, 1)),  # "ab" needs "c"
    ("a$", "a\\Z", 2, (2, 1)),
    ("^(?:a b|a)+$", "\\A(?:a b|a)+\\Z", 0, (1, 1)),
])
def test_closing_distance_equals_brute_force(pattern: str, python: str, low: int, expected: tuple[int, int]) -> None:
    # the characters the pattern tells apart (one letter stands for [a-z]), and one it does not name
    alphabet = "a Z" if "[a-z]" in pattern else "".join(c for c in "abc " if c in pattern) + "Z"
    assert brute_closing_distance(re.compile(python), alphabet, low, expected[0] + 4, 3) == expected
    assert automata.closing_distance(ecma.parse(pattern), low) == expected


def test_closing_distance_of_a_pattern_that_finds_nothing_is_none() -> None:
    assert automata.closing_distance(ecma.parse("[^\\s\\S]"), 0) is None


@pytest.mark.parametrize("pattern, python, low, high", [
    ("^a{3}$", "\\Aa{3}\\Z", 4, None), ("^a+$", "\\Aa+\\Z", 3, 3), ("^(?:ab)+$", "\\A(?:ab)+\\Z", 3, 3),
    ("^(?:ab)+$", "\\A(?:ab)+\\Z", 3, 4), ("b", "b", 0, 0), ("b", "b", 1, 1), ("^(?:ab|b)c$", "\\A(?:ab|b)c\\Z", 3, 5),
    ("^(?:ab|b)c$", "\\A(?:ab|b)c\\Z", 4, None), ("a|^bb$", "a|\\Abb\\Z", 2, 2),
])
def test_lengths_found_equals_brute_force(pattern: str, python: str, low: int, high: int | None) -> None:
    oracle = re.compile(python)
    top = high if high is not None else low + 6
    brute = any(oracle.search(w) for w in _words("abcZ", low, top))
    assert automata.lengths_found(ecma.parse(pattern), low, high) == brute


@pytest.mark.parametrize("pattern, python", [
    ("^(?:a|bc|[x-z])$", "\\A(?:a|bc|[x-z])\\Z"), ("^[ab]{0,3}$", "\\A[ab]{0,3}\\Z"), ("^(?:a|aa)(?:b|ab)$", None),
    ("^$", "\\A\\Z"), ("^a+$", None),
])
def test_count_strings_equals_enumeration(pattern: str, python: str | None) -> None:
    [dfa], classes = build([pattern])
    found = automata.count_strings(dfa, dfa.accepting, classes, 1000)
    if python is None and "+" in pattern:
        assert found == 1000  # endless
        return
    oracle = re.compile(python or pattern.replace("^", "\\A").replace("$", "\\Z"))
    alphabet = "".join(sorted({c for c in pattern if c.isalpha()} | set("xyz") | {"Z"}))
    assert found == sum(1 for w in _words(alphabet, 0, 4) if oracle.search(w))


def test_count_strings_stops_at_the_cap() -> None:
    [dfa], classes = build(["^[a-z]{3}$"])
    assert automata.count_strings(dfa, dfa.accepting, classes, 10**9) == 26**3
    assert automata.count_strings(dfa, dfa.accepting, classes, 100) == 100


@pytest.mark.parametrize("regexes", [
    ("[a-c]+", "[c-e]+"), ("a+", "b+"), ("a{2,3}", "a{4}"), ("(?:ab)*", "a(?:ba)*b"), ("(?:ab)+", "(?:ba)+"),
    ("a*", "b*"), ("\\U0001F600", "[\\U0001F600-\\U0001F601]"), ("\\U0001F600x", "[^x]x"),
    ("[ab]{3}", "a[ab]b", "[ab]a[ab]"), ("[ab]{3}", "a[ab]b", "[ab]a[ab]", "b.."),
])
def test_regexes_meet_equals_a_brute_force_witness_search(regexes: tuple[str, ...]) -> None:
    compiled = [re.compile(r) for r in regexes]
    brute = any(all(c.fullmatch(w) for c in compiled) for w in _words("abcdex😀", 0, 4))
    assert automata.regexes_meet(regexes) == brute


def test_state_limits_raise_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ecma.Unsupported):  # the 13th character from the end: 2^13 states
        build(["a[ab]{12}$"])
    build(["a[ab]{6}$"])  # 2^7: within the limit
    monkeypatch.setattr(automata, "MAX_STATES", 50)
    with pytest.raises(ecma.Unsupported):
        build(["a[ab]{6}$"])
    with pytest.raises(ecma.Unsupported):
        automata.lengths_dfa(0, 100, Classes(automata.cut_points([])))


def test_lengths_dfa_counts_characters() -> None:
    classes = Classes(automata.cut_points([[(0x61, 0x61)]]))
    rng = random.Random(5)
    for low, high in [(0, 0), (2, 4), (3, None), (0, None)]:
        dfa = automata.lengths_dfa(low, high, classes)
        for text in sample_strings(rng, 50, 10):
            assert accepts(dfa, classes, text) == (low <= len(text) and (high is None or len(text) <= high))


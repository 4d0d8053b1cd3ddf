"""Regex -> byte DFA: the automaton accepts exactly the UTF-8 of what ``re`` fullmatches."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.engine import charset
from structgen.engine.dfa import DEAD, AutomatonLimitError, ByteDFA, build_dfa
from structgen.engine.regex import MAX_REPEAT, RegexError, concat, divisible, last_line_width, literal, parse

PATTERNS = [
    (r"[0-9]+", ""),
    (r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", ""),
    (r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"', ""),
    (r"[a-zA-Z_]\w*", ""),
    (r"\d{2,4}", ""),
    (r"\s+", ""),
    (r"\S\W\D", ""),
    (r"(?a)\w+", ""),
    (r".", ""),
    (r".", "s"),
    (r"a.b", "s"),
    (r"(ab|a)(bc|c)?", ""),
    (r"(?:x|y){0,3}z", ""),
    (r"a{3}", ""),
    (r"a{2,}", ""),
    (r"a*?b+?", ""),
    (r"select", "i"),
    (r"[a-z]+", "i"),
    (r"[^a-z]", "i"),
    (r"k", "i"),
    (r"ß|straße", "i"),
    (r"(?i:true)|FALSE", ""),
    (r"\u00e9|e\u0301", ""),
    (r"[\u4e00-\u9fff]+", ""),
    (r"[^\x00-\x7f]", ""),
    (r"[\U0001F300-\U0001FAFF]", ""),
    (r"[^\n]*\n", ""),
    (r"//[^\n]*", ""),
    (r"/\*(.|\n)*?\*/", ""),
    (r" a  b # comment", "x"),
    (r"[\s\S]", ""),
    (r"[^\W\d]", ""),
    (r"", ""),
    (r"a|", ""),
    # lookaheads the rest of the pattern follows to its end: intersections
    (r'(?="[^"]{1,3}")"[a-c]*"', ""),
    (r"(?=a)(?=.b)abc|x", ""),
    (r"x(?:(?=.{0,2}y)\w+y|z)", ""),
    (r"(?=[a-z]{2})(?:\w|é)+", "i"),
    (r"a(?=b)", ""),
    # negative lookaheads the rest of the pattern follows to its end: differences
    (r'(?!"(?:id|type)")"[a-z]*"', ""),
    (r"(?!ab)[abc]+", ""),
    (r"(?!a)(?=.b)\w+", ""),
    (r"x(?:(?!.{0,2}y)\w+|z)", ""),
    (r"(?!a|bb)[ab]{0,3}", ""),
    (r"(?![\s\S])", ""),
    # lookbehinds that see only their own group's text: a difference / an intersection
    (r"a.(?<!x)c", ""),
    (r"xx+(?<=xx)y", ""),
    (r"ab(?<!b)c", ""),
    (r"(\"\"\"(?<!\\).*?\"\"\"|'''(?<!\\).*?''')", "s"),
    (r"(?:ab|a)(?<=b)z?", ""),
]

ALPHABET_EXTRAS = "aAbBcz09_ .\n\t\"\\/-+eE{}xyzkKK\u212aß\u1e9eSsſİıéé日本😀\u0301\u00a0\u2028"


def fullmatch(pattern: str, flags: str, text: str) -> bool:
    bits = 0
    for flag in flags:
        bits |= {"i": re.I, "s": re.S, "x": re.X, "m": re.M}[flag]
    return re.fullmatch(pattern, text, bits) is not None


def alphabet(pattern: str) -> str:
    return "".join(sorted(set(pattern + ALPHABET_EXTRAS)))


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS)
def test_dfa_accepts_exactly_what_re_fullmatches(pattern: str, flags: str) -> None:
    dfa = build_dfa([parse(pattern, flags)])
    rng = random.Random(pattern)
    letters = alphabet(pattern)
    samples = [""] + ["".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    for text in samples:
        assert dfa.matches(text.encode()) == fullmatch(pattern, flags, text), (pattern, text)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_dfa_agrees_with_re_on_random_texts(data: st.DataObject) -> None:
    pattern, flags = data.draw(st.sampled_from(PATTERNS))
    text = data.draw(st.text(alphabet=alphabet(pattern), max_size=12))
    dfa = _cached_dfa(pattern, flags)
    assert dfa.matches(text.encode()) == fullmatch(pattern, flags, text)


_DFAS: dict[tuple[str, str], ByteDFA] = {}


def _cached_dfa(pattern: str, flags: str) -> ByteDFA:
    key = (pattern, flags)
    if key not in _DFAS:
        _DFAS[key] = build_dfa([parse(pattern, flags)])
    return _DFAS[key]


def test_matching_texts_are_accepted() -> None:
    cases = {
        r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?": ["0", "-12.5e+3", "7E9"],
        r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"': ['""', '"a\\n\\u00e9 日本 😀"'],
        r"[\U0001F300-\U0001FAFF]": ["😀", "🫠"],
    }
    for pattern, texts in cases.items():
        dfa = build_dfa([parse(pattern)])
        for text in texts:
            assert dfa.matches(text.encode()), (pattern, text)


def test_invalid_utf8_is_never_accepted() -> None:
    dfa = build_dfa([parse(".*", "s")])
    assert dfa.matches("héllo 😀 \x00 \U0010ffff".encode())
    for bad in [b"\xff", b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe6\x97"]:
        assert not dfa.matches(bad), bad


def test_dead_bytes_are_cut_immediately() -> None:
    """Trimmed: a byte that no pattern can continue with leads to DEAD, not a trap state."""
    dfa = build_dfa([parse("[0-9]+")])
    assert dfa.run(b"12a") == DEAD
    assert dfa.run(b"\xe6") == DEAD  # a lead byte of some character, but no digit


def test_automata_are_minimal() -> None:
    # the start state is always its own state ("nothing read yet"), never re-entered
    assert build_dfa([parse("(a|b)*")]).state_count == 2
    assert build_dfa([parse("a*|a*a")]).state_count == 2
    assert build_dfa([parse("[0-9]+")]).state_count == 2
    assert build_dfa([parse("(0|1)(0|1)")]).state_count == 3
    # a character class spells multi-byte characters with shared continuation states
    # start, end, and continuation states: 1, 2 or 3 bytes left, and the restricted
    # second bytes after E0, ED, F0 and F4
    assert build_dfa([parse("[\u0080-\U0010ffff]")]).state_count == 9


def test_start_state_is_never_reentered() -> None:
    """After "ab", what remains of (ab)*c equals the start's language, yet it is a
    different state: the lexer reads state 0 as "no lexeme started"."""
    for pattern in [r"(ab)*c", r"[a-z ]*\.", r"(a|b)*"]:
        dfa = build_dfa([parse(pattern)])
        assert all(target != 0 for target in dfa.table), pattern


def test_several_patterns_share_one_automaton() -> None:
    dfa = build_dfa([literal("if"), parse("[a-z]+"), literal("IF", ignore_case=True)])
    assert dfa.accepts[dfa.run(b"if")] == (0, 1, 2)
    assert dfa.accepts[dfa.run(b"iF")] == (2,)
    assert dfa.accepts[dfa.run(b"iff")] == (1,)
    assert dfa.run(b"i") != DEAD and dfa.accepts[dfa.run(b"i")] == (1,)


def test_empty_language() -> None:
    dfa = build_dfa([parse(r"[^\x00-\U0010ffff]")])
    assert dfa.state_count == 1
    assert dfa.accepts == [()]
    assert all(t == DEAD for t in dfa.table)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"((?=a)a)b", "lookaheads that the rest of the pattern does not follow to its end"),
        (r"(?:(?=a)a)*", "lookaheads that the rest of the pattern does not follow to its end"),
        (r"(?=a(?=b))ab", "lookaheads that the rest of the pattern does not follow to its end"),
        (r"(?<=a)b", "lookbehind assertions that may look before the pattern's own text"),
        (r"(?<!a)b", "negative lookbehind assertions that may look before"),
        (r"a?(?<!a)b", "negative lookbehind assertions that may look before"),  # ``a?`` may hold no character
        (r"((?!a)a)b", "negative lookaheads that the rest of the pattern does not follow to its end"),
        (r"(a)\1", "backreferences"),
        (r"^a", "anchors"),
        (r"a\b", "anchors"),
        (r"(?>a)", "atomic groups"),
        (r"a++", "possessive repeats"),
        (r"a[", "invalid regex: unterminated character set"),
        (r"a{2,1}", "invalid regex"),
        (f"a{{{MAX_REPEAT + 1}}}", f"exceeds the limit of {MAX_REPEAT}"),
        ("a{4294967295}", "invalid regex: the repetition number is too large"),  # re's OverflowError
    ],
)
def test_unsupported_patterns_are_clear_errors(pattern: str, message: str) -> None:
    with pytest.raises(RegexError, match=re.escape(message)):
        parse(pattern)


def test_bad_flags_are_errors() -> None:
    with pytest.raises(RegexError, match="unknown regex flag 'q'"):
        parse("a", "q")
    with pytest.raises(RegexError, match="unknown regex flag 'l'"):  # LOCALE: str patterns refuse it
        parse("a", "l")
    with pytest.raises(RegexError, match="invalid regex: ASCII and UNICODE flags are incompatible"):
        parse("a", "au")


@pytest.mark.parametrize("pattern", [r"[^k]", r"[^\u212a]", r"[^a-z]", r"[^\W]"])
def test_negated_classes_under_ignore_case_equal_re(pattern: str) -> None:
    dfa = build_dfa([parse(pattern, "i")])
    compiled = re.compile(pattern, re.I)
    for code_point in [*range(0x250), 0x130, 0x131, 0x17F, 0x212A, 0x212B, 0x1E9E, 0x3A3, 0x3C2, 0x3C3]:
        ch = chr(code_point)
        assert dfa.matches(ch.encode()) == (compiled.fullmatch(ch) is not None), (pattern, hex(code_point))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_each_pattern_keeps_its_own_accept_label(data: st.DataObject) -> None:
    """One automaton for several patterns: a text's labels are exactly the patterns
    it fullmatches, after minimization merged whatever it could."""
    chosen = data.draw(st.lists(st.sampled_from(PATTERNS[:20]), min_size=2, max_size=4, unique=True))
    dfa = build_dfa([parse(p, f) for p, f in chosen])
    for _ in range(20):
        pattern, _flags = data.draw(st.sampled_from(chosen))
        text = data.draw(st.text(alphabet=alphabet(pattern), max_size=8))
        state = dfa.run(text.encode())
        labels = list(dfa.accepts[state]) if state != DEAD else []
        assert labels == [i for i, (p, f) in enumerate(chosen) if fullmatch(p, f, text)]


def _equivalence_classes(dfa: ByteDFA) -> int:
    """Moore's refinement of ``dfa`` itself (the start kept alone, as the engine
    keeps it): how many states a minimal automaton has; equal to the state count
    when no two states of ``dfa`` accept the same language."""
    count = dfa.state_count
    block = [0 if s == 0 else 1 + sorted({tuple(a) for a in dfa.accepts[1:]}).index(tuple(dfa.accepts[s]))
             for s in range(count)]
    while True:
        signature: dict[tuple[int, ...], int] = {}
        refined = [signature.setdefault(
            (block[s], *[-1 if t == DEAD else block[t] for t in dfa.table[s * 256:(s + 1) * 256]]), len(signature))
            for s in range(count)]
        if len(signature) == len(set(block)):
            return len(signature)
        block = refined


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_automata_of_several_patterns_have_no_equivalent_states(data: st.DataObject) -> None:
    """Minimization (Hopcroft, over byte classes) leaves no two states that an
    independent refinement would merge."""
    chosen = data.draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5, unique=True))
    dfa = build_dfa([parse(p, f) for p, f in chosen])
    assert _equivalence_classes(dfa) == dfa.state_count


def test_state_limit_is_explicit() -> None:
    # (a|b)*a(a|b){n}: the minimal DFA needs 2^(n+1) states
    with pytest.raises(AutomatonLimitError, match="more than 100 DFA states"):
        build_dfa([parse("(a|b)*a(a|b){8}")], max_states=100)
    # 32 windows of the last five letters, plus the start state of its own
    assert build_dfa([parse("(a|b)*a(a|b){4}")], max_states=100).state_count == 33


@pytest.mark.parametrize("name", ["digit", "word", "space"])
def test_categories_equal_re_on_every_code_point(name: str) -> None:
    members = charset.category(name, ascii_only=False)
    pattern = re.compile({"digit": r"\d", "word": r"\w", "space": r"\s"}[name])
    for code_point in range(0x110000):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        assert charset.contains(members, code_point) == (pattern.fullmatch(chr(code_point)) is not None), hex(code_point)


def test_cased_code_points_are_every_character_case_changes() -> None:
    # read a chunk of characters at a time; the definition is one at a time
    expected = []
    for code_point in range(0x110000):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        ch = chr(code_point)
        if ch.lower() != ch or ch.upper() != ch or ch.casefold() != ch or ch.swapcase() != ch:
            expected.append(code_point)
    assert charset._cased_code_points() == expected


def test_every_character_is_each_code_point_once_in_order() -> None:
    text = charset.every_character()
    assert len(text) == 0x110000 - 0x800
    for index in (0, 0x41, 0xD7FF, 0xD800, 0xE000 - 0x800 + 5, len(text) - 1):
        assert ord(text[index]) == charset.code_point_at(index)
    assert ord(text[0xD7FF]) == 0xD7FF and ord(text[0xD800]) == 0xE000 and ord(text[-1]) == 0x10FFFF


@settings(max_examples=300, deadline=None)
@given(lo=st.integers(0, 0x10FFFF), width=st.integers(0, 0x3000))
def test_utf8_sequences_spell_exactly_the_range(lo: int, width: int) -> None:
    hi = min(lo + width, 0x10FFFF)
    ranges = charset.normalize([lo, hi])
    sequences = [s for i in range(0, len(ranges), 2) for s in charset.utf8_sequences(ranges[i], ranges[i + 1])]

    def spelled(data: bytes) -> bool:
        return any(
            len(s) == 2 * len(data) and all(s[2 * k] <= data[k] <= s[2 * k + 1] for k in range(len(data)))
            for s in sequences
        )

    rng = random.Random(lo * 31 + width)
    probes = {lo, hi, lo - 1, hi + 1, *[rng.randint(max(0, lo - 200), min(0x10FFFF, hi + 200)) for _ in range(100)]}
    for code_point in probes:
        if 0 <= code_point <= 0x10FFFF and not 0xD800 <= code_point <= 0xDFFF:
            assert spelled(chr(code_point).encode()) == (lo <= code_point <= hi)
    for sequence in sequences:  # every byte string a sequence allows is a character in range
        data = bytes(rng.randint(sequence[2 * k], sequence[2 * k + 1]) for k in range(len(sequence) // 2))
        code_point = ord(data.decode("utf-8"))
        assert lo <= code_point <= hi


GAP_PATTERNS = [r'"(?:[^"\\]|\\.)*"', r"-?[0-9]+", r"\{", r"\}", r",", r"true", r'"key"']


@pytest.mark.parametrize("bound", ["{0,3}", "{0,1}", "*"])
def test_a_gap_every_pattern_starts_with_is_spliced_in_front(bound: str) -> None:
    """Patterns that all start with the same optional run (the whitespace before each
    JSON token) get the run as one chain of states in front of the rests' automaton:
    the same labels on every text as the patterns built whole, and as few states as
    building it whole with the run written out (which the splice does not detect)."""
    spliced = build_dfa([parse(f"[ \\t\\n]{bound}(?:{p})") for p in GAP_PATTERNS])
    written = {"{0,3}": "(?:[ \\t\\n](?:[ \\t\\n][ \\t\\n]?)?)?", "{0,1}": "(?:[ \\t\\n]|)", "*": "(?:[ \\t\\n]|\\t)*"}[bound]
    rng = random.Random(5)
    pieces = [" ", "\t", "\n", '"', "\\", "a", "-", "1", "{", "}", ",", "true", '"key"', "k"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        state = spliced.run(text.encode())
        labels = list(spliced.accepts[state]) if state != DEAD else []
        expected = [i for i, p in enumerate(GAP_PATTERNS) if re.fullmatch(f"[ \\t\\n]{bound}(?:{p})", text)]
        assert labels == expected, text
    assert all(target != 0 for target in spliced.table)
    whole = build_dfa([parse(f"{written}(?:{p})") for p in GAP_PATTERNS])
    assert spliced.state_count == whole.state_count


def test_a_gap_a_pattern_could_start_inside_is_not_spliced() -> None:
    """``[ ]{0,2}`` before `` x``: the rest starts with a byte of the run, so the run
    is not where the text starts; the automaton is built whole, and stays exact."""
    dfa = build_dfa([parse("[ ]{0,2}(?: x)"), parse("[ ]{0,2}(?:y)")])
    for text, labels in [(" x", [0]), ("   x", [0]), ("    x", []), ("  y", [1]), ("   y", [])]:
        state = dfa.run(text.encode())
        assert (list(dfa.accepts[state]) if state != DEAD else []) == labels, text


NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


def _mantissa_divisible(text: str, divisor: int) -> bool:
    mantissa = re.split("[eE]", text)[0]
    return int("".join(c for c in mantissa if c.isdigit())) % divisor == 0


@pytest.mark.parametrize("divisor", [1, 3, 7, 11, 13, 999])
def test_a_divisible_group_keeps_the_texts_whose_mantissa_digits_it_divides(divisor: int) -> None:
    """``(?P<divisible_by_D>...)``: the body's texts whose digits before any exponent,
    as one integer, are a multiple of D (the point and the sign left out)."""
    dfa = build_dfa([parse(f"(?P<divisible_by_{divisor}>{NUMBER})")])
    rng = random.Random(divisor)
    for _ in range(2000):
        text = rng.choice(["", "-"]) + str(rng.randrange(0, 10 ** rng.randrange(1, 9)))
        if rng.random() < 0.3:
            text += "." + str(rng.randrange(0, 1000))
        if rng.random() < 0.3:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 40))
        text += rng.choice(["", "", "x"])  # not a number: never taken
        expected = re.fullmatch(NUMBER, text) is not None and _mantissa_divisible(text, divisor)
        assert dfa.matches(text.encode()) == expected, (divisor, text)
    assert dfa.state_count <= 3 * divisor + 20  # the remainders beside the number's own states


def test_divisible_groups_are_told_apart_by_suffixes_and_nest_in_other_constructs() -> None:
    dfa = build_dfa([parse(r"(?P<divisible_by_3_a>[0-9]+)x(?P<divisible_by_7_b>[0-9]+)|n")])
    assert dfa.matches(b"12x14") and dfa.matches(b"n")
    assert not dfa.matches(b"13x14") and not dfa.matches(b"12x15")
    inside = build_dfa([parse(r"(?!0)(?P<divisible_by_4>[0-9]{1,3})")])  # a lookahead's rest: intersected
    assert [n for n in range(1000) if inside.matches(str(n).encode())] == list(range(4, 1000, 4))
    plain = build_dfa([parse(r"(?P<divisible>[0-9]+)")])  # other names are plain groups
    assert plain.matches(b"13")


def _last_line_columns(text: str, tab_len: int) -> int:
    """As lark's ``Indenter`` counts them: a space one column, a tab ``tab_len``,
    anything else none; -1 before any newline."""
    if "\n" not in text:
        return -1
    last = text.rsplit("\n", 1)[-1]
    return last.count(" ") + tab_len * last.count("\t")


@pytest.mark.parametrize("width", [0, 3, 8, 9])
def test_a_counter_beside_a_body_as_the_whole_pattern_or_inside_one(width: int) -> None:
    """A pattern that is a counter beside a body (a last line's width, a divisor) is
    minimized as that product is built; inside another pattern the product goes
    through the subset construction again. Both keep exactly the counted texts."""
    body = r"(?:\n[ \t]*|#[^\n]*)+"
    whole = build_dfa([last_line_width(parse(body), width, 4)])
    inside = build_dfa([concat([last_line_width(parse(body), width, 4), literal("x")])])
    rng = random.Random(width)
    for _ in range(3000):
        text = "".join(rng.choice(["\n", " ", "\t", "#", "a"]) for _ in range(rng.randrange(0, 12)))
        expected = re.fullmatch(body, text) is not None and _last_line_columns(text, 4) == width
        assert whole.matches(text.encode()) == expected, (width, text)
        assert inside.matches((text + "x").encode()) == expected, (width, text)
    number = parse(r"[0-9]+")
    whole_divisible = build_dfa([divisible(number, 7)])
    inside_divisible = build_dfa([concat([divisible(number, 7), literal("x")])])
    for n in range(300):
        assert whole_divisible.matches(str(n).encode()) == (n % 7 == 0)
        assert inside_divisible.matches(f"{n}x".encode()) == (n % 7 == 0)


@pytest.mark.parametrize("name", ["divisible_by_0", "divisible_by_10001"])
def test_a_divisor_out_of_range_is_a_clear_error(name: str) -> None:
    with pytest.raises(RegexError, match=f"group '{name}': a divisor must be between 1 and 10000"):
        parse(f"(?P<{name}>[0-9]+)")

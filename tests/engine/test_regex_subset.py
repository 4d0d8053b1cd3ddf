"""``regex_subset`` reads the common regex syntax without ``re``'s parser: whatever it
reads must be the language ``regex.parse`` gives (compared as minimal automata, which
``build_dfa`` numbers canonically), and whatever it leaves must go to ``re``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_files import translated_schemas
from structgen.engine.dfa import build_dfa
from structgen.engine.regex import Node, RegexError, parse, parse_terminal
from structgen.engine.regex_subset import MAX_NESTING, read_subset, read_terminal
from structgen.lark_rules import read_lark

MAX_STATES = 20_000


def automaton(node: Node) -> tuple[object, ...]:
    """The minimal automaton's table and accepting states (or the error building it),
    its states numbered in breadth-first order from the start, byte by byte: two
    minimal automata of one language differ only in their numbering (``(?:a*-)a``
    and re's tree of it number theirs apart)."""
    try:
        dfa = build_dfa([node], max_states=MAX_STATES)
    except RegexError as exc:
        return (type(exc).__name__,)
    order = [0]
    number = {0: 0}
    for state in order:
        for byte in range(256):
            target = dfa.table[state * 256 + byte]
            if target >= 0 and target not in number:
                number[target] = len(order)
                order.append(target)
    table = tuple(
        -1 if dfa.table[state * 256 + byte] < 0 else number[dfa.table[state * 256 + byte]]
        for state in order
        for byte in range(256)
    )
    return table, tuple(tuple(dfa.accepts[state]) for state in order)


def same_language(pattern: str) -> bool:
    node = read_subset(pattern)
    assert node is not None, pattern
    return automaton(node) == automaton(parse(pattern))


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "abc",
        r"[ \t\n\r]{0,64}(?:\x22a\x22)",
        r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
        "a|b(?:c|)*d{2,}e{,3}f{4}",
        "(?:a*-)a",  # its minimal automaton numbered apart from re's (hypothesis found it)
        r"\d+\.\w\S\D\W\s",
        r"[\d\s-]x[\w.]",
        "[]a-]",
        "[^]]",
        "[a-]x",
        r"[\]\\\-^]",
        r"[\x00-\x1f\u00e9-\u00ff]",
        r"\u00e9\U0001F600\x7f",
        r"\a\f\n\r\t\v\\\.\*\{\}\/\"",
        r"[\b]",
        "(a)(b)|(?:c)",
        "(?P<max_length_8_1>a)b(?P<y>c)*",
        "a.b",
        "a]b}c",
        "(?:(?:(?:x)))+",
        "(?:)*",
        "-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
    ],
)
def test_the_subset_reads_what_re_reads(pattern: str) -> None:
    assert same_language(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "a*?", "a+?", "a??", "a{2}?", "a++", "a{2}+", "a**", "a{2}{3}",  # lazy, possessive, repeated repeats
        "(?=a)a", "(?!a)a", "(?<=a)a", "(?P<divisible_by_3>[0-9]+)", "(?P<x>a)(?P<x>b)", "(?P<1x>a)", "(?P=x)", "(?i)a", "(?#c)a", "(?>a)",
        "^a", "a$", r"\ba", r"\Aa", r"\1", r"\0", r"\N{EM DASH}", r"\q",  # anchors, references, names, bad escapes
        "a{", "{1}", "a{,}", "a{x}", "a{3,2}", "a{99999}", "a{4294967295}", "*a", "|+",  # not repeats, or bad ones
        "[[a]", "[a--b]", "[a&&b]", "[a||b]", "[a~~b]", "[a-\\d]", "[z-a]", "[a", "[]",  # sets re warns of, bad ranges
        "(a", "a)", r"\ud800", "[\\ud800-\\udfff]", "\\x4", "\\u12", "\\U00110000", "\\",
    ],
)
def test_what_the_subset_leaves_goes_to_re(pattern: str) -> None:
    assert read_subset(pattern) is None
    try:
        expected: object = parse_terminal(pattern)
    except RegexError as exc:
        with pytest.raises(RegexError) as raised:
            read_terminal(pattern)
        assert str(raised.value) == str(exc)
        return
    found = read_terminal(pattern)
    assert found[1] == expected[1]  # type: ignore[index]
    assert automaton(found[0]) == automaton(expected[0])  # type: ignore[index]


def test_flags_go_to_re() -> None:
    node, _ = read_terminal("ab", "i")
    assert build_dfa([node]).matches(b"AB")


def test_nesting_past_the_limit_goes_to_re() -> None:
    deep = "(?:" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1)
    assert read_subset(deep) is None
    shallow = "(?:" * 300 + "a" + ")" * 300
    assert read_subset(shallow) is not None and same_language(shallow)


ATOMS = st.sampled_from([
    "a", "b", "-", ",", "}", "]", r"\.", r"\x22", r"\u00e9", r"\d", r"\s", ".",
    "[a-c]", "[^b]", "[]a]", r"[\d-]", "[a-]", r"[^\x00-\x1f\\]", "[é-ü0]",
])
QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,}", "{0,3}", "{,2}"])


def _patterns() -> st.SearchStrategy[str]:
    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        group = st.tuples(st.sampled_from(["(?:", "("]), inner).map(lambda t: t[0] + t[1] + ")")
        quantified = st.tuples(st.one_of(ATOMS, group), QUANTIFIERS).map("".join)
        sequence = st.lists(quantified, max_size=4).map("".join)
        return st.lists(sequence, min_size=1, max_size=3).map("|".join)

    return st.recursive(st.tuples(ATOMS, QUANTIFIERS).map("".join), grow, max_leaves=12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_patterns())
def test_generated_subset_patterns_read_as_re_reads_them(pattern: str) -> None:
    assert same_language(pattern)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab-^$[]{}()|*+?.\\dxu0123,:=!<P>", max_size=14))
def test_any_text_is_read_as_re_reads_it_or_left_to_re(pattern: str) -> None:
    node = read_subset(pattern)
    try:
        expected = parse(pattern)
    except RegexError:
        assert node is None, pattern  # the subset never takes what re refuses
        return
    if node is not None:
        assert automaton(node) == automaton(expected), pattern


@pytest.mark.slow
def test_maskbench_terminals_read_as_re_reads_them() -> None:
    """Every regex terminal of every 50th MaskBench schema's grammar (each pattern
    once): nearly all are in the subset, and each reads as ``re`` reads it."""
    seen: set[str] = set()
    read = left = 0
    for record, text in translated_schemas(every=50):
        for terminal in read_lark(text).terminals:
            if terminal.kind != "re" or terminal.flags or terminal.value in seen:
                continue
            seen.add(terminal.value)
            node = read_subset(terminal.value)
            if node is None:
                left += 1
                continue
            assert automaton(node) == automaton(parse(terminal.value)), (record["id"], terminal.name)
            read += 1
    assert read > 1_000 and left < read / 100, (read, left)

"""Regexes for JSON scalars: whole quoted strings, whole numbers, integer ranges.

Every string-like terminal is a whole quoted string and every number terminal a
whole number (docs/design.md §6), so maximal munch never splits a value wrongly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schema2grammar import spellings
from schema2grammar.spellings import CHAR, ESCAPE, UNICODE_ESCAPE  # noqa: F401  (a string's characters: spellings)

STRING = f'"{CHAR}*"'
NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
INTEGER = r"-?(?:0|[1-9][0-9]*)"
ZERO_FRACTION = r"(?:\.0+)?"
"""After an integer: ``1.0`` is the integer 1 (draft 6 on), and ``json.dumps`` writes it so."""
BIG_INTEGER = r"[1-9](?:\.[0-9]{1,16})?e\+(?:1[6-9]|[2-9][0-9]|[1-9][0-9]{2,})"
"""How ``json.dumps`` writes a float of 1e16 or more (``1e+16``, ``1.2345e+30``): at
most 17 digits and an exponent of 16 or more, so always a whole number."""
BIG = 10**16

DOUBLE_MAX = "17976931348623157"
"""The digits of the largest finite double, ``1.7976931348623157e+308``."""


def _above(digits: str) -> str:
    """Digit strings after a point that read as more than ``digits`` do."""
    parts = [digits[:i] + f"[{int(d) + 1}-9]" for i, d in enumerate(digits) if d != "9"]
    return "(?:" + "|".join(parts + [digits + "0*[1-9]"]) + ")"


UNREADABLE = "|".join([
    r"-?[1-9][0-9]{308}",  # 309 digits before the point (or more)
    r"-?[0-9](?:\.[0-9]+)?[eE]\+?0*(?:309|3[1-9][0-9]|[4-9][0-9]{2}|[1-9][0-9]{3})",
    rf"-?(?:[2-9](?:\.[0-9]+)?|1\.{_above(DOUBLE_MAX[1:])}[0-9]*)[eE]\+?0*308",
    r"-?[1-9][0-9]+(?:\.[0-9]+)?[eE]\+?0*[1-9][0-9]{2}",  # two digits or more before the point, 1e100 up
    r"-?[1-9][0-9]{209}[0-9]*(?:\.[0-9]+)?[eE]\+?0*[1-9]",  # 210 digits or more, any exponent up
])
"""The starts of numbers that a JSON reader may not read back as a finite double:
past ``1.7976931348623157e+308`` (``json.loads`` and ``JSON.parse`` give
infinity), and, to keep the automaton small, some finite ones no model needs
(309 digits before the point, or 2 to 209 with an exponent of 100 up, or more
with any exponent up). Every number ``json.dumps`` writes for a finite float is
readable. A start, not a whole number: ``(?!UNREADABLE)`` refuses every text that
begins with one (``engine.regex``)."""

READABLE_INTEGER = 10**308
"""Readable integers stay below this in magnitude (308 digits at most: ``UNREADABLE``)."""

FLOAT_SPELLING = r"-?[0-9]+[.eE]"
"""The start of a number written with a fraction or an exponent."""


def readable(pattern: str, integer: bool) -> str:
    """``pattern``'s numbers that a JSON reader reads back as they are meant
    (``Options.numbers == "readable"``): finite doubles, and for an integer, digits
    only (``1.0`` reads as a float in Python, ``1e+20`` is refused by Pydantic)."""
    refused = f"{UNREADABLE}|{FLOAT_SPELLING}" if integer else UNREADABLE
    return f"(?!{refused})(?:{pattern})"

MAX_LENGTH_BOUND = 2_048
"""Length bounds above this are not enforced (reported): each character a string
counts is about 20 states of the lexer's automaton (UTF-8 sequences, escapes), so
2,048 characters take about 41,000 of its 50,000 (``MAX_DFA_STATES``), and MaskBench's
``maxLength: 4096`` strings could not compile at all."""

def number_equal_to(value: int | float) -> str:
    """Every spelling of a number equal to ``value`` that ``json.dumps`` gives an int
    or a float: ``2``, ``2.0``, ``2.00``...; ``1e+20``; ``-0`` for zero too."""
    spelled = json.dumps(value)
    if isinstance(value, float) and not value.is_integer():
        return re.escape(spelled)
    whole = "-?0" if value == 0 else re.escape(str(int(value)))
    options = [whole + ZERO_FRACTION]
    if abs(value) >= BIG and value == _as_float(value):
        options.append(re.escape(json.dumps(_as_float(value))))  # 10**20 is also written 1e+20
    return "(?:" + "|".join(options) + ")"


def _as_float(value: int | float) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None


def integer_spellings(low: int | None, high: int | None) -> str:
    """Integers in ``[low, high]`` as ``json.dumps`` writes ints and floats: ``12``,
    ``-0``, ``12.0`` and, where the range reaches past 1e16, ``1.2e+17``."""
    options = [integer_range(low, high) + ZERO_FRACTION]
    if high is None and (low is None or low <= BIG):
        options.append(BIG_INTEGER)
    if low is None and (high is None or high >= -BIG):
        options.append("-" + BIG_INTEGER)
    return "(?:" + "|".join(options) + ")"


def string_of_length(low: int, high: int | None) -> str:
    """A quoted string of ``low`` to ``high`` characters (None: no upper bound)."""
    if low == 0 and high is None:
        return STRING
    upper = "" if high is None else str(high)
    return f'"{CHAR}{{{low},{upper}}}"'


_PLAIN = frozenset(chr(code) for code in range(0x20, 0x7F)) - frozenset('"\\/')
"""The characters with one spelling (``spellings.PLAIN_TEXT``)."""


def string_except(words: list[str]) -> str:
    """A quoted string whose text is none of ``words``, in any spelling
    (``spellings``: ``"\\u00e9"`` is ``"é"``, and is refused where ``é`` is).

    Over a trie of the words' characters, such a text either ends at a trie node
    where no word ends, or leaves the trie (a character no word continues with
    there, in any spelling) and then goes on freely. Each trie edge is its
    character in all its spellings. The free tail is written once, after all the
    ways of leaving, not once per trie node; and so is the escape that leaves a
    node whose children all have one spelling (printable ASCII: the usual names):
    any escape leaves there, and ``ESCAPE`` is written once, after the paths to
    those nodes. The pattern grows with the trie, not with the trie times the
    (long) pattern of one character."""
    texts = [word for word in dict.fromkeys(words) if spellings.spellable(word)]
    if not texts:  # (a word with a lone surrogate has no spelling: there is nothing to leave out)
        return STRING
    nodes: list[dict[str, Any]] = [{}]  # parents before children (a long word recurses nowhere)
    for text in texts:
        node = nodes[0]
        for char in text:
            if char not in node:
                node[char] = {}
                nodes.append(node[char])
            node = node[char]
        node[""] = {}  # a word ends here
    ending: dict[int, str | None] = {}  # paths below a node that end where no word ends
    leaving: dict[int, str] = {}  # paths below a node, then a character that leaves (escapes: at nodes not plain)
    escaping: dict[int, str | None] = {}  # paths below a node to one where every escape leaves
    for node in reversed(nodes):
        children = sorted(char for char in node if char)
        plain = all(char in _PLAIN for char in children)
        spelled = [re.escape(char) if char in _PLAIN else spellings.spell_char(char) for char in children]
        below = [id(node[char]) for char in children]
        ends = [] if "" in node else [""]
        ends += [edge + found for edge, at in zip(spelled, below) if (found := ending[at]) is not None]
        ending[id(node)] = "(?:" + "|".join(ends) + ")" if ends else None
        if plain:  # (the usual node: written as before, the escapes after the paths to such nodes)
            leaves = ["[^\\x00-\\x1f\\x22\\\\" + "".join(spellings.class_member(ord(char)) for char in children) + "]"]
        else:
            others = spellings.minus(spellings.ALL, [(ord(char), ord(char)) for char in children])
            leaves = [found for found in (spellings.raw(others), spellings.escapes(others)) if found is not None]
        leaving[id(node)] = "(?:" + "|".join(leaves + [edge + leaving[at] for edge, at in zip(spelled, below)]) + ")"
        escapes = [""] if plain else []
        escapes += [edge + found for edge, at in zip(spelled, below) if (found := escaping[at]) is not None]
        escaping[id(node)] = "(?:" + "|".join(escapes) + ")" if escapes else None
    root = id(nodes[0])
    escaped = f"|{escaping[root]}{ESCAPE}" if escaping[root] is not None else ""
    free = f"(?:{leaving[root]}{escaped}){CHAR}*"
    return '"(?:' + (f"{ending[root]}|" if ending[root] is not None else "") + free + ')"'


def integer_range(low: int | None, high: int | None) -> str:
    """Integers in ``[low, high]`` (None: unbounded) as JSON writes them, with
    ``-0`` for zero too."""
    parts: list[str] = []
    if high is None or high >= 0:
        parts.extend(natural_range(max(low or 0, 0), high))
    if low is None or low < 0:
        magnitude_low = 1 if high is None or high >= 0 else -high
        magnitude_high = None if low is None else -low
        parts.extend("-" + part for part in natural_range(magnitude_low, magnitude_high))
    if (low is None or low <= 0) and (high is None or high >= 0):
        parts.append("-0")
    return "(?:" + "|".join(parts) + ")" if parts else ""


MAX_NUMBER_BOUND = 10**15
"""Integers up to this size are complemented exactly (``complement``): below
json.dumps's switch to exponents at 1e16, no neighbour needs one."""

def natural_range(low: int, high: int | None) -> list[str]:
    """Naturals in ``[low, high]`` without leading zeros, as alternatives."""
    if high is not None and low > high:
        return []
    parts: list[str] = []
    length = len(str(low))
    top = high if high is not None else 10**length - 1
    while True:
        first = max(low, 10 ** (length - 1) if length > 1 else 0)
        last = min(top, 10**length - 1)
        if first <= last:
            parts.extend(digits_between(str(first), str(last)))
        if high is None:
            parts.append(f"[1-9][0-9]{{{length},}}")
            return parts
        if last >= high:
            return parts
        length += 1


def digits_between(low: str, high: str) -> list[str]:
    """Digit strings of one length between ``low`` and ``high`` (of that length), as alternatives."""
    if low == high:
        return [low]
    if len(low) == 1:
        return [f"[{low}-{high}]"]
    rest = len(low) - 1
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return [f"[{low[0]}-{high[0]}][0-9]{{{rest}}}"]
    if low[0] == high[0]:
        return [low[0] + "(?:" + "|".join(digits_between(low[1:], high[1:])) + ")"]
    parts = [low[0] + "(?:" + "|".join(digits_between(low[1:], "9" * rest)) + ")"]
    if int(high[0]) - int(low[0]) > 1:
        parts.append(f"[{int(low[0]) + 1}-{int(high[0]) - 1}][0-9]{{{rest}}}")
    parts.append(high[0] + "(?:" + "|".join(digits_between("0" * rest, high[1:])) + ")")
    return parts

"""Regular expressions, as lark terminals write them, to a small syntax tree.

Patterns are parsed by Python's own ``re`` parser, so the syntax accepted (and the
errors for bad syntax) are exactly ``re``'s, as lark itself compiles terminals with
``re``. The tree keeps only what a byte automaton needs: character sets (already
expanded for ``\\d \\w \\s``, ``.``, negation and case-insensitivity), concatenation,
alternation and bounded or unbounded repetition. Lazy and greedy repeats denote the
same language, so both become one repeat.

A positive lookahead ``(?=X)`` followed by the rest ``Y`` of the pattern (nothing
after ``Y`` but the pattern's end) becomes an intersection: the texts of ``Y`` that
start with a text of ``X``; a negative one ``(?!X)``, a difference: the texts of
``Y`` that start with none. That is ``re``'s reading when ``X`` looks no further
than the terminal's own text, which is how lookaheads are written to bound a
quoted string's length (``(?="[^"]{1,8}")"[a-z]+"``) or to leave some quoted
strings out (``(?!"(?:id|type)")"[^"]*"``); a text that needs what follows the
terminal to decide ``X`` is judged on the terminal's text alone. A lookbehind
``(?<!X)`` (or ``(?<=X)``) after items of its own group that always hold at least
``X``'s width (``'''(?<!\\)``: a long string's quotes) is a difference (an intersection) of those items
with the texts that end with ``X``. What no finite automaton can express
(lookbehinds that may see past their group's start, other lookaheads,
backreferences, anchors, atomic groups, possessive repeats) is an error that
says which construct it was.

One construct is the engine's own: a group named ``divisible_by_D`` (or
``divisible_by_D_`` and any suffix, to tell two apart in one pattern) keeps the
texts of its body whose decimal digits before the first ``e`` or ``E``, read as one
integer, are a multiple of ``D`` (``DIVISIBLE``). That is a ``D``-state automaton,
which a regex can only spell with thousands of characters for 7 or 11; JSON Schema's
``multipleOf`` uses it (``schema2grammar.multiples``). ``re`` and lark read the group
as plain grouping.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

from mypy_extensions import mypyc_attr

from structgen.engine import charset

EMPTY: Final = 0
CHARS: Final = 1
CONCAT: Final = 2
ALT: Final = 3
REPEAT: Final = 4
INTERSECT: Final = 5
DIFFERENCE: Final = 6
DIVISIBLE: Final = 7
LAST_LINE_WIDTH: Final = 8

MAX_DIVISOR: Final = 10_000
"""Largest ``D`` of a ``divisible_by_D`` group (its automaton has ``D`` + 2 states)."""

_DIVISIBLE_NAME: Final = re.compile(r"divisible_by_([0-9]+)(?:_\w*)?")

UNBOUNDED: Final = -1
MAX_REPEAT: Final = 10_000
"""Largest repetition bound (``{m,n}``) accepted; larger ones are a RegexError."""

_sre: Final[Any] = importlib.import_module("re._parser")
_const: Final[Any] = importlib.import_module("re._constants")


class RegexError(ValueError):
    """A pattern the engine cannot turn into an automaton, with the reason."""


@mypyc_attr(acyclic=True)  # a tree: untracked by the collector, as its tuples become (docs/tables.md)
class Node:
    """One node of a regex tree.

    ``CHARS``: one character from ``ranges`` (normalized code-point ranges);
    ``CONCAT`` / ``ALT``: ``children`` in sequence / as alternatives;
    ``REPEAT``: ``children[0]`` between ``low`` and ``high`` times (``UNBOUNDED``);
    ``INTERSECT``: the texts of every one of ``children``;
    ``DIFFERENCE``: the texts of ``children[0]`` that are no text of ``children[1]``;
    ``DIVISIBLE``: the texts of ``children[0]`` whose digits before any ``e``/``E``
    are, as one decimal integer, a multiple of ``low``;
    ``LAST_LINE_WIDTH``: the texts of ``children[0]`` with a newline whose last
    line holds ``low`` columns of spaces and tabs (``-low - 1`` columns or more
    where ``low`` is negative), a tab worth ``high`` (``engine.line_widths``);
    ``EMPTY``: the empty string.

    A grammar's lexer keeps its patterns' trees (``views`` rebuilds parts of the
    automaton from them): tens of thousands of nodes for a large schema. Tracked
    and holding lists, they were scanned by every full collection.
    """

    def __init__(
        self, kind: int, ranges: list[int], children: list[Node], low: int = 0, high: int = 0
    ) -> None:
        self.kind = kind
        self.ranges: tuple[int, ...] = tuple(ranges)
        self.children: tuple[Node, ...] = tuple(children)
        self.low = low
        self.high = high


def chars(ranges: list[int]) -> Node:
    return Node(CHARS, ranges, [])


def concat(children: list[Node]) -> Node:
    if len(children) == 1:
        return children[0]
    return Node(CONCAT, [], children) if children else Node(EMPTY, [], [])


def alternation(children: list[Node]) -> Node:
    return children[0] if len(children) == 1 else Node(ALT, [], children)


def repeat(child: Node, low: int, high: int) -> Node:
    return Node(REPEAT, [], [child], low, high)


def intersection(children: list[Node]) -> Node:
    return children[0] if len(children) == 1 else Node(INTERSECT, [], children)


def difference(kept: Node, removed: Node) -> Node:
    return Node(DIFFERENCE, [], [kept, removed])


def divisible(body: Node, divisor: int) -> Node:
    return Node(DIVISIBLE, [], [body], divisor)


def last_line_width(body: Node, width: int, tab_len: int, at_least: bool = False) -> Node:
    return Node(LAST_LINE_WIDTH, [], [body], -width - 1 if at_least else width, tab_len)


def literal(text: str, ignore_case: bool = False) -> Node:
    """A literal string (lark's ``"..."`` terminals; ``"..."i`` for ignore_case)."""
    return concat([_char_node(ord(ch), ignore_case, False) for ch in text])


TOO_DEEP: Final = "the pattern nests groups too deeply to read (its parsers recurse once per group)"


def parse(pattern: str, flags: str = "") -> Node:
    """Parse a Python regex; ``flags`` are lark's terminal flags (``"imsx"``)."""
    items, flag_bits, divisors = _read(pattern, flags)
    return _converted(items, flag_bits, divisors)


def parse_terminal(pattern: str, flags: str = "") -> tuple[Node, bool]:
    """``parse`` and ``ends_at_first_match`` of a terminal from one reading of the
    pattern: ``re``'s parser is interpreted Python, the slowest part of both."""
    items, flag_bits, divisors = _read(pattern, flags)
    return _converted(items, flag_bits, divisors), _lazy_repeat_then_delimiter(items)


def _converted(items: list[Any], flag_bits: int, divisors: dict[int, int]) -> Node:
    """``_convert`` of a whole pattern; past Python's recursion limit, a ``RegexError``."""
    try:
        return _convert(items, flag_bits, True, divisors)
    except RecursionError:
        raise RegexError(TOO_DEEP) from None


def ends_at_first_match(pattern: str, flags: str = "") -> bool:
    r"""Whether ``pattern`` (already accepted by ``parse``) ends with a lazy repeat
    followed by a fixed delimiter (``".*?"``, ``/\*(.|\n)*?\*/``): such a terminal
    ends at its first match, exactly as ``re.match`` ends it. Other lazy repeats
    (``a*?b+``) denote the same language as their greedy forms and are read so."""
    return _lazy_repeat_then_delimiter(_read(pattern, flags)[0])


def _read(pattern: str, flags: str) -> tuple[list[Any], int, dict[int, int]]:
    """``re``'s parse of ``pattern``: its top-level items, the flags in force, and
    the divisor of each ``divisible_by_D`` group, by group number."""
    flag_bits = 0
    for flag in flags:
        if flag not in "imsxua":
            raise RegexError(f"unknown regex flag {flag!r}")
        flag_bits |= _FLAG_BITS[flag]
    try:
        parsed = _sre.parse(pattern, flag_bits)
    except (re.error, ValueError, OverflowError) as exc:  # ValueError: flags such as "au"; OverflowError: a{4294967295}
        raise RegexError(f"invalid regex: {exc}") from None
    except RecursionError:
        raise RegexError(TOO_DEEP) from None
    divisors: dict[int, int] = {}
    for name, number in parsed.state.groupdict.items():
        named = _DIVISIBLE_NAME.fullmatch(name)
        if named is not None:
            divisor = int(named.group(1))
            if not 1 <= divisor <= MAX_DIVISOR:
                raise RegexError(f"group {name!r}: a divisor must be between 1 and {MAX_DIVISOR}")
            divisors[int(number)] = divisor
    return list(parsed.data), int(parsed.state.flags), divisors


def _lazy_repeat_then_delimiter(items: list[Any]) -> bool:
    """Whether ``items`` end with a lazy repeat and then fixed characters, or with
    a group (or alternation) each of whose alternatives does (``"..."|'...'``):
    the first match is then the shortest, where the delimiter first comes."""
    if items and _name(items[-1][0]) in ("SUBPATTERN", "BRANCH"):
        op, av = items[-1]
        if _name(op) == "SUBPATTERN":
            return _lazy_repeat_then_delimiter(list(av[3]))
        return all(_lazy_repeat_then_delimiter(list(branch)) for branch in av[1])
    last_lazy = max((i for i, (op, _) in enumerate(items) if _name(op) == "MIN_REPEAT"), default=-1)
    if last_lazy < 0 or last_lazy == len(items) - 1:
        return False
    return all(_name(op) in ("LITERAL", "IN") for op, _ in items[last_lazy + 1 :])


def _name(opcode: Any) -> str:
    """An sre opcode's name (``str(opcode)`` gives it too, through an interpreted ``__repr__``)."""
    name: str = opcode.name
    return name


# re's flags as plain ints: ``int & re.IGNORECASE`` runs RegexFlag's interpreted ``__rand__``
_IGNORECASE: Final = int(re.IGNORECASE)
_DOTALL: Final = int(re.DOTALL)
_ASCII: Final = int(re.ASCII)
_FLAG_BITS: Final = {
    "i": _IGNORECASE,
    "m": int(re.MULTILINE),
    "s": _DOTALL,
    "x": int(re.VERBOSE),
    "u": int(re.UNICODE),
    "a": _ASCII,
}


def _convert(items: list[Any], flags: int, last: bool, divisors: dict[int, int]) -> Node:
    """Convert a list of sre ``(opcode, argument)`` items; ``last``: nothing but the
    pattern's end follows them, so a lookahead among them sees the rest of the text.

    Recursive in the pattern's group nesting only: ``re``'s own (recursive,
    interpreted) parser has already bounded that depth by Python's recursion limit.
    """
    nodes: list[Node] = []
    for i, (op, av) in enumerate(items):
        if _name(op) in ("ASSERT", "ASSERT_NOT") and int(av[0]) == -1 and nodes:
            before = _lookbehind(concat(nodes), _convert(list(av[1]), flags, False, divisors), int(av[1].getwidth()[1]),
                                 _name(op) == "ASSERT")
            if before is not None:
                nodes = [before]
                continue
        if _name(op) in ("ASSERT", "ASSERT_NOT") and int(av[0]) == 1 and last:
            rest = _convert(items[i + 1 :], flags, True, divisors)
            started = concat(
                [_convert(list(av[1]), flags, False, divisors), repeat(chars(list(charset.ALL)), 0, UNBOUNDED)]
            )
            nodes.append(intersection([rest, started]) if _name(op) == "ASSERT" else difference(rest, started))
            break
        nodes.append(_convert_item(op, av, flags, last and i == len(items) - 1, divisors))
    return concat(nodes)


def _lookbehind(before: Node, behind: Node, width: int, positive: bool) -> Node | None:
    """``before`` kept to the texts that end (``positive``) or do not end with a
    text of ``behind``, ``width`` characters long: exact where every text of
    ``before`` is at least that long, so the lookbehind sees only the terminal's
    own text before it (``'''(?<!\\\\)``); None elsewhere."""
    if min_length(before) < width:
        return None
    ending = concat([repeat(chars(list(charset.ALL)), 0, UNBOUNDED), behind])
    return intersection([before, ending]) if positive else difference(before, ending)


def min_length(node: Node) -> int:
    """A lower bound on the characters of ``node``'s texts (exact but for
    intersections, where it is the longest of the parts' bounds)."""
    kind = node.kind
    if kind == EMPTY:
        return 0
    if kind == CHARS:
        return 1
    if kind == CONCAT:
        return sum(min_length(child) for child in node.children)
    if kind == ALT:
        return min(min_length(child) for child in node.children)
    if kind == REPEAT:
        return node.low * min_length(node.children[0])
    if kind == INTERSECT:
        return max(min_length(child) for child in node.children)
    return min_length(node.children[0])  # DIFFERENCE, DIVISIBLE, LAST_LINE_WIDTH: within their first child


def _convert_item(op: Any, av: Any, flags: int, last: bool, divisors: dict[int, int]) -> Node:
    ignore_case = bool(flags & _IGNORECASE)
    ascii_only = bool(flags & _ASCII)
    name = _name(op)
    if name == "LITERAL":
        return _char_node(int(av), ignore_case, ascii_only)
    if name == "NOT_LITERAL":
        positive = _case_closed([int(av), int(av)], ignore_case, ascii_only)
        return chars(charset.complement(positive))
    if name == "ANY":
        if flags & _DOTALL:
            return chars(list(charset.ALL))
        return chars(charset.complement([0x0A, 0x0A]))
    if name == "IN":
        return chars(_class_ranges(list(av), ignore_case, ascii_only))
    if name == "BRANCH":
        return alternation([_convert(list(branch), flags, last, divisors) for branch in av[1]])
    if name == "SUBPATTERN":
        group, add_flags, del_flags, body = av
        converted = _convert(list(body), (flags | int(add_flags)) & ~int(del_flags), last, divisors)
        divisor = divisors.get(int(group), 0) if group is not None else 0
        return divisible(converted, divisor) if divisor else converted
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, high, body = av
        high_bound = UNBOUNDED if high == _const.MAXREPEAT else int(high)
        if int(low) > MAX_REPEAT or high_bound > MAX_REPEAT:
            raise RegexError(f"repetition bound {max(int(low), high_bound)} exceeds the limit of {MAX_REPEAT}")
        return repeat(_convert(list(body), flags, False, divisors), int(low), high_bound)
    constructs = {
        "AT": "anchors (^, $, \\A, \\Z, \\b, \\B)",
        "ASSERT": "lookbehind assertions that may look before the pattern's own text (past the start of their "
                  "group), and lookaheads that the rest of the pattern does not follow to its end",
        "ASSERT_NOT": "negative lookbehind assertions that may look before the pattern's own text (past the start of "
                      "their group), and negative lookaheads that the rest of the pattern does not follow to its end",
        "GROUPREF": "backreferences",
        "GROUPREF_EXISTS": "conditional backreferences",
        "ATOMIC_GROUP": "atomic groups (?>...)",
        "POSSESSIVE_REPEAT": "possessive repeats (*+, ++, ?+)",
    }
    raise RegexError(f"{constructs.get(name, name)} cannot be compiled to a finite automaton")


def _char_node(code_point: int, ignore_case: bool, ascii_only: bool) -> Node:
    if charset.SURROGATE_LOW <= code_point <= charset.SURROGATE_HIGH:
        raise RegexError(f"the surrogate U+{code_point:04X} cannot occur in UTF-8 text")
    if not ignore_case:
        return chars([code_point, code_point])  # already normalized
    return chars(charset.ignore_case([code_point, code_point], ascii_only))


def _case_closed(ranges: list[int], ignore_case: bool, ascii_only: bool) -> list[int]:
    ranges = charset.normalize(ranges)
    return charset.ignore_case(ranges, ascii_only) if ignore_case else ranges


def _class_ranges(items: list[Any], ignore_case: bool, ascii_only: bool) -> list[int]:
    """The members of a ``[...]`` class (or an escape such as ``\\d``)."""
    negate = False
    ranges: list[int] = []
    for op, av in items:
        name = _name(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            ranges.extend((int(av), int(av)))
        elif name == "RANGE":
            ranges.extend((int(av[0]), int(av[1])))
        elif name == "CATEGORY":
            ranges.extend(_category(_name(av), ascii_only))
        else:
            raise RegexError(f"unsupported item {name} in a character class")
    positive = _case_closed(ranges, ignore_case, ascii_only)
    return charset.complement(positive) if negate else positive


def _category(name: str, ascii_only: bool) -> list[int]:
    base = name.replace("CATEGORY_", "").replace("NOT_", "").lower()
    if base not in ("digit", "word", "space"):
        raise RegexError(f"unsupported character category {name}")
    return category_ranges(base, "_NOT_" in name, ascii_only)


def category_ranges(base: str, negated: bool, ascii_only: bool) -> list[int]:
    """``\\d`` (``"digit"``), ``\\w`` (``"word"``) or ``\\s`` (``"space"``), or
    with ``negated`` their capitals, as ``re`` defines them."""
    members = charset.category(base, ascii_only)
    return charset.complement(members) if negated else members

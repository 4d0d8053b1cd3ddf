"""Terminal patterns in the regex syntax most grammars write, read without ``re``'s parser.

``regex.parse_terminal`` reads a pattern with ``re``'s own parser, which is
interpreted Python: about a fifth of building a median MaskBench grammar went
there, mostly to the long alternations of keys schema2grammar writes. This
reader takes the subset those grammars use (literal characters and escapes,
classes, ``.``, ``\\d \\w \\s`` and their negations, plain, named and ``(?:...)`` groups,
``|``, and greedy ``* + ? {m} {m,} {m,n} {,n}``), without flags, and builds the
same language as ``parse_terminal``: a test compares the two automata on every
terminal of the MaskBench grammars. Anything else (lazy or possessive repeats,
lookarounds, ``divisible_by_D`` groups, anchors, inline flags, surrogates, what ``re`` would
warn about or refuse) is left to ``parse_terminal``, with its errors.
"""

from __future__ import annotations

import re
from typing import Final

from structgen.engine import charset
from structgen.engine.regex import (
    MAX_REPEAT,
    UNBOUNDED,
    Node,
    alternation,
    category_ranges,
    chars,
    concat,
    parse_terminal,
    repeat,
)

MAX_NESTING: Final = 1_000
"""Groups nested deeper are left to ``re``'s parser (which bounds nesting by the
recursion limit, and says so): this reader recurses once per group too (a number
bound's pattern nests some 330 groups deep)."""

_ESCAPED: Final = {ord("a"): 7, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("v"): 11}
"""Escapes of control characters, as ``re`` reads them (``\\b`` only in a class)."""

_CATEGORIES: Final = {ord("d"): "digit", ord("w"): "word", ord("s"): "space"}

MAX_NAME: Final = 100
_NAMED_GROUP: Final = re.compile(r"\?P<([A-Za-z_][A-Za-z0-9_]{0,%d})>" % (MAX_NAME - 1))
"""A group name as the subset takes it (``re`` takes any identifier; longer or other names go to it)."""

_BACKSLASH: Final = ord("\\")
_NOT_IN_SUBSET: Final = -1  # a construct this reader leaves to ``re``
_CATEGORY: Final = -2  # a ``\d``-like escape in a class: its ranges are in ``_Reader.category``


def read_terminal(pattern: str, flags: str = "") -> tuple[Node, bool]:
    """What ``parse_terminal(pattern, flags)`` returns: the tree and whether the
    terminal ends at its first match (never, for a pattern without lazy repeats)."""
    if not flags:
        node = read_subset(pattern)
        if node is not None:
            return node, False
    return parse_terminal(pattern, flags)


def read_subset(pattern: str) -> Node | None:
    """The tree of ``pattern`` when it is in the subset, else None."""
    reader = _Reader(pattern)
    try:
        node = reader.alternatives(0)
    except RecursionError:  # nested past what the interpreter allows: re's parser says so
        return None
    if reader.failed or reader.at != len(reader.codes):  # a ``)`` with no group open
        return None
    return node


class _Reader:
    """A recursive descent over the pattern's code points; ``failed`` once it meets
    something outside the subset (every method then returns at once)."""

    def __init__(self, pattern: str) -> None:
        self.codes = [ord(character) for character in pattern]
        self.at = 0
        self.failed = False
        self.category: list[int] = []
        self.names: set[str] = set()  # of the named groups so far (re refuses a name twice)

    def _next(self) -> int:
        return self.codes[self.at] if self.at < len(self.codes) else -1

    def alternatives(self, depth: int) -> Node:
        branches = [self._sequence(depth)]
        while not self.failed and self._next() == ord("|"):
            self.at += 1
            branches.append(self._sequence(depth))
        return alternation(branches)

    def _sequence(self, depth: int) -> Node:
        items: list[Node] = []
        codes = self.codes
        while self.at < len(codes):  # entered only while nothing has failed
            code = codes[self.at]
            if code == ord("|") or code == ord(")"):
                break
            self.at += 1
            if code == _BACKSLASH:
                item = self._escape()
            elif code == ord("["):
                item = self._class()
            elif code == ord("("):
                item = self._group(depth)
            elif code == ord("."):
                item = chars(charset.complement([0x0A, 0x0A]))
            elif code in (ord("^"), ord("$"), ord("*"), ord("+"), ord("?"), ord("{")):
                self.failed = True  # an anchor, or a repeat of nothing (or ``{`` as a literal)
                break
            else:
                item = self._char(code)
            if not self.failed:
                item = self._repeated(item)
            if self.failed:
                break
            items.append(item)
        return concat(items)

    def _char(self, code: int) -> Node:
        if charset.SURROGATE_LOW <= code <= charset.SURROGATE_HIGH:
            self.failed = True  # re's reading says why it cannot be
        return chars([code, code])

    def _group(self, depth: int) -> Node:
        if depth >= MAX_NESTING:
            self.failed = True
            return chars([])
        if self._next() == ord("?"):
            if self.at + 1 < len(self.codes) and self.codes[self.at + 1] == ord(":"):
                self.at += 2
            elif not self._group_name():
                self.failed = True  # lookarounds, flags, comments, references
                return chars([])
        body = self.alternatives(depth + 1)
        if self._next() != ord(")"):
            self.failed = True
        self.at += 1
        return body

    def _group_name(self) -> bool:
        """Past ``?P<name>`` when it names a plain group: a new identifier, and not
        ``divisible_by_D``, which ``parse_terminal`` reads as a ``DIVISIBLE`` node."""
        match = _NAMED_GROUP.match("".join([chr(code) for code in self.codes[self.at : self.at + MAX_NAME + 4]]))
        if match is None or match.group(1).startswith("divisible_by") or match.group(1) in self.names:
            return False
        self.names.add(match.group(1))
        self.at += match.end()
        return True

    def _repeated(self, item: Node) -> Node:
        code = self._next()
        if code == ord("*"):
            low, high = 0, UNBOUNDED
        elif code == ord("+"):
            low, high = 1, UNBOUNDED
        elif code == ord("?"):
            low, high = 0, 1
        elif code == ord("{"):
            low, high = self._bounds()
            if self.failed:
                return item
        else:
            return item
        self.at += 1
        if self._next() in (ord("*"), ord("+"), ord("?"), ord("{")):
            self.failed = True  # lazy, possessive or a repeat repeated
        return repeat(item, low, high)

    def _bounds(self) -> tuple[int, int]:
        """``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}`` (left on its ``}``)."""
        self.at += 1
        low_digits = self._digits()
        low = int(low_digits) if low_digits else 0
        high = low
        if self._next() == ord(","):
            self.at += 1
            high_digits = self._digits()
            high = int(high_digits) if high_digits else UNBOUNDED
            if not low_digits and not high_digits:
                self.failed = True
        elif not low_digits:
            self.failed = True
        if self._next() != ord("}") or low > MAX_REPEAT or high > MAX_REPEAT or (high != UNBOUNDED and high < low):
            self.failed = True  # not a repeat to re, or one whose error re's reading words
        return low, high

    def _digits(self) -> str:
        start = self.at
        while ord("0") <= self._next() <= ord("9"):
            self.at += 1
        return "".join([chr(code) for code in self.codes[start : self.at]])

    def _escape(self) -> Node:
        code = self._escaped(False)
        if code == _CATEGORY:
            return chars(charset.normalize(self.category))
        if code == _NOT_IN_SUBSET:
            self.failed = True
            return chars([])
        return self._char(code)

    def _escaped(self, in_class: bool) -> int:
        """The code point of the escape after a backslash, ``_CATEGORY`` (its
        ranges in ``self.category``) or ``_NOT_IN_SUBSET``."""
        code = self._next()
        if code < 0:
            return _NOT_IN_SUBSET
        self.at += 1
        lower = code | 0x20
        if lower in _CATEGORIES:
            self.category = category_ranges(_CATEGORIES[lower], code != lower, False)
            return _CATEGORY
        if code in _ESCAPED:
            return _ESCAPED[code]
        if code == ord("b") and in_class:
            return 8
        if code == ord("x"):
            return self._hex(2)
        if code == ord("u"):
            return self._hex(4)
        if code == ord("U"):
            found = self._hex(8)
            return found if found <= charset.MAX_CODE_POINT else _NOT_IN_SUBSET
        if ord("0") <= code <= ord("9") or ord("a") <= lower <= ord("z"):
            return _NOT_IN_SUBSET  # octal, back references, anchors, names
        return code

    def _hex(self, count: int) -> int:
        if self.at + count > len(self.codes):
            return _NOT_IN_SUBSET
        value = 0
        for code in self.codes[self.at : self.at + count]:
            digit = _hex_digit(code)
            if digit < 0:
                return _NOT_IN_SUBSET
            value = value * 16 + digit
        self.at += count
        return value

    def _class(self) -> Node:
        """A ``[...]`` class, after its ``[``."""
        if self._next() == ord("["):
            self.failed = True  # re warns of nested sets to come
        negate = self._next() == ord("^")
        if negate:
            self.at += 1
        ranges: list[int] = []
        first = True
        while not self.failed:
            if self._next() == ord("]") and not first:
                self.at += 1
                break
            first = False
            code = self._class_member()
            ranged = self._next() == ord("-") and self.at + 1 < len(self.codes) and self.codes[self.at + 1] != ord("]")
            if code == _CATEGORY:
                if ranged:
                    self.failed = True  # a category cannot bound a range
                ranges.extend(self.category)
            elif code == _NOT_IN_SUBSET:
                self.failed = True
            elif ranged:
                self.at += 1
                if self._next() == ord("-"):
                    self.failed = True  # ``a--``: re warns of a set difference to come
                high = self._class_member()
                if high < code:  # also a category or an escape outside the subset
                    self.failed = True
                ranges.extend((code, high))
            else:
                ranges.extend((code, code))
        for code in ranges:
            if charset.SURROGATE_LOW <= code <= charset.SURROGATE_HIGH:
                self.failed = True  # re's reading says what becomes of them
        positive = charset.normalize(ranges)
        return chars(charset.complement(positive) if negate else positive)

    def _class_member(self) -> int:
        """The next member of a class: a code point, ``_CATEGORY`` or ``_NOT_IN_SUBSET``."""
        code = self._next()
        if code < 0:
            return _NOT_IN_SUBSET
        self.at += 1
        if code == _BACKSLASH:
            return self._escaped(True)
        if code in (ord("&"), ord("~"), ord("|"), ord("-")) and self._next() == code:
            return _NOT_IN_SUBSET  # doubled: re warns of set operations to come
        return code


def _hex_digit(code: int) -> int:
    if ord("0") <= code <= ord("9"):
        return code - ord("0")
    lower = code | 0x20
    if ord("a") <= lower <= ord("f"):
        return lower - ord("a") + 10
    return -1

"""ECMA-262 patterns (JSON Schema's ``pattern``) to regexes over a JSON string's text.

A pattern constrains the decoded string, the grammar reads its JSON spelling: each
character the pattern names is matched in every spelling ``spellings`` gives it
(``é`` and ``\\u00e9``, ``"`` and ``\\"``, ``/`` and ``\\/``; never ``\\u0041`` for
``A``), as are the free stretches an unanchored search allows on either side. ``\\d \\w
\\s .`` are ECMA's (ASCII digits and word characters; ECMA's white space and line
terminators). Anchors may stand anywhere (``anchored``: a ``^`` after what
matched nothing). Lookaheads at the start of a pattern anchored by ``^`` are a
conjunction (``conjuncts``): ``^(?=A)(?!B)R`` is ``^(?:R)``, ``^(?:A)`` and not
``^(?:B)``, each without lookaheads, whose automata the callers intersect. What no
finite automaton expresses here (other lookarounds, backreferences, word
boundaries) is ``Unsupported``. ``python_regex`` gives the same meaning to
Python's ``re`` over the decoded string, so that a validator checking values
agrees with the grammar.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from schema2grammar import spellings
from schema2grammar.spellings import CHAR

MAX_CODE = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
MAX_REPEAT = 10_000  # the engine's repetition bound
MAX_GROUP_DEPTH = 32
"""Groups nested in one another (MaskBench's deepest pattern nests 8): the parser,
and every walk of the tree after it, recurse once per level."""
ANY_SPELLING = CHAR  # what an unanchored pattern leaves free around its match

Ranges = list[tuple[int, int]]

_class_char = spellings.class_member  # a class member lark leaves one


@dataclass
class Node:
    """``set``: one character of ``ranges``; ``cat`` / ``alt``: ``children`` in
    sequence / as alternatives; ``rep``: ``children[0]`` ``low`` to ``high`` times
    (-1: unbounded); ``^`` / ``$``: an anchor; ``look``: a lookahead for
    ``children[0]``, positive where ``low`` is 1."""

    kind: str
    ranges: Ranges = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    low: int = 0
    high: int = 0

DIGITS: Ranges = [(0x30, 0x39)]
WORD: Ranges = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
SPACE: Ranges = [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
                 (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
LINE_TERMINATORS: Ranges = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
CONTROL_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B}


class Unsupported(ValueError):
    """A pattern that no regex over the JSON text expresses exactly (or that is not
    valid ECMA-262), with the reason."""


class InvalidPattern(Unsupported):
    """A pattern that is no regular expression at all (unbalanced groups, an
    unterminated class, nothing to repeat): a schema error, not an approximation."""


def parse(pattern: str) -> Node:
    """``pattern``'s tree (``Unsupported`` for what no finite automaton expresses)."""
    return _Parser(pattern).parse()


def conjuncts(pattern: str) -> list[tuple[bool, str]]:
    """``pattern`` as patterns without lookaheads that a string must match (True)
    or must not (False), the pattern's own rest first: ``[(True, pattern)]`` where
    it has none. Lookaheads are read only at the start of a pattern anchored by
    ``^`` (``^(?!(?:if|for)$)[a-z]+$``, ``^(?=.*[0-9])(?=.*[A-Z]).{8,}$``): there each
    tests the whole string from its start, so ``^(?=A)R`` holds where ``^(?:R)``
    and ``^(?:A)`` both do. Elsewhere they are ``Unsupported``."""
    tree = parse(pattern)
    if not _has_look(tree):
        return [(True, pattern)]
    leading = tree.children[1:] if tree.kind == "cat" and tree.children and tree.children[0].kind == "^" else []
    looks = 0
    while looks < len(leading) and leading[looks].kind == "look":
        looks += 1
    if not looks or any(_has_look(node) for node in leading[looks:]) \
            or any(_has_look(look.children[0]) for look in leading[:looks]):
        raise Unsupported("a lookaround other than at the start of a pattern anchored by ^")
    tests: list[tuple[bool, str]] = []
    at = 1
    for _ in range(looks):  # each lookahead's text, as the parser delimits it
        reader = _Parser(pattern)
        reader.at = at + 3
        reader.alternation()
        tests.append((pattern[at + 2] == "=", f"^(?:{pattern[at + 3:reader.at]})"))
        at = reader.at + 1
    return [(True, f"^(?:{pattern[at:]})"), *tests]


def _has_look(node: Node) -> bool:
    return node.kind == "look" or any(_has_look(child) for child in node.children)


def json_string_regex(pattern: str) -> str:
    """A regex for the text between the quotes of every JSON string (in each
    spelling ``spellings`` gives its characters) whose value the pattern matches
    somewhere."""
    out = [("" if start else ANY_SPELLING + "*") + _emit(middle, _emit_set) + ("" if end else ANY_SPELLING + "*")
           for start, middle, end in anchored(parse(pattern))]
    return "(?:" + "|".join(out) + ")"


MAX_ANCHORED = 64
"""Ways a pattern's anchors may combine (``anchored``): ``(^a|b)(c|d$)`` has four."""


def anchored(tree: Node) -> list[tuple[bool, Node, bool]]:
    """A search for ``tree`` as searches without anchors: (whether the match starts
    the string, the match with no anchor left, whether it ends the string), one
    per way through the anchors. A ``^`` holds where nothing was matched before
    it, a ``$`` where nothing follows (``a^b`` finds nothing; ``(^a|b)c`` is
    ``^ac`` or ``bc``). An anchor inside a repetition is ``Unsupported``, as are
    more than ``MAX_ANCHORED`` ways, and a pattern that can match nowhere."""
    if _has_look(tree):
        raise Unsupported("a lookaround other than at the start of a pattern anchored by ^")
    found = _ways(tree)
    if not found:
        raise Unsupported("the pattern's anchors let it match nowhere")
    return found


def _ways(node: Node) -> list[tuple[bool, Node, bool]]:
    if node.kind == "^" or node.kind == "$":
        return [(node.kind == "^", Node("cat"), node.kind == "$")]
    if not _has_anchor(node):
        return [(False, node, False)]
    if node.kind == "rep":
        raise Unsupported("an anchor inside a repetition")
    if node.kind == "alt":
        ways = [way for child in node.children for way in _ways(child)]
    else:
        ways = [(False, Node("cat"), False)]
        for child in node.children:
            ways = [joined for before in ways for after in _ways(child) if (joined := _joined(before, after))]
            if len(ways) > MAX_ANCHORED:
                raise Unsupported(f"the pattern's anchors combine in more than {MAX_ANCHORED} ways")
    if len(ways) > MAX_ANCHORED:
        raise Unsupported(f"the pattern's anchors combine in more than {MAX_ANCHORED} ways")
    return ways


def _joined(before: tuple[bool, Node, bool], after: tuple[bool, Node, bool]) -> tuple[bool, Node, bool] | None:
    """One way through ``before`` then ``after``: a ``^`` in ``after`` leaves only the
    empty match of ``before``, a ``$`` in ``before`` only the empty match of ``after``
    (None where there is none)."""
    start, first, end = before
    later_start, second, later_end = after
    if later_start:
        if not _nullable(first):
            return None
        first = Node("cat")
    if end:
        if not _nullable(second):
            return None
        second = Node("cat")
    return start or later_start, Node("cat", children=[first, second]), end or later_end


def _nullable(node: Node) -> bool:
    """Whether ``node`` (no anchor in it) matches the empty string."""
    if node.kind == "set":
        return False
    if node.kind == "cat":
        return all(_nullable(child) for child in node.children)
    if node.kind == "alt":
        return any(_nullable(child) for child in node.children)
    return node.low == 0 or _nullable(node.children[0])


def _has_anchor(node: Node) -> bool:
    return node.kind in ("^", "$") or any(_has_anchor(child) for child in node.children)


def python_regex(pattern: str) -> str:
    """A Python ``re`` pattern that ``re.search`` matches exactly where ECMA-262 finds
    ``pattern`` (with the ``u`` flag: code points) in a decoded string."""
    return _emit(parse(pattern), python_set, {"^": r"\A", "$": r"\Z"})


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` compiled as ``python_regex`` writes it; None where it is not read here."""
    try:
        return re.compile(python_regex(pattern))
    except (Unsupported, re.error, RecursionError):
        return None


def searches(pattern: str, text: str) -> bool | None:
    """Whether ECMA-262 finds ``pattern`` in ``text`` (None: the pattern is not read here)."""
    regex = compiled(pattern)
    return None if regex is None else regex.search(text) is not None


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.depth = 0  # groups open

    def parse(self) -> Node:
        node = self.alternation()
        if self.at < len(self.text):
            raise InvalidPattern(f"unbalanced ')' at {self.at}")
        return node

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.text[index] if index < len(self.text) else ""

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Node("alt", children=branches)

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            items.append(self.quantified(atom))
        return Node("cat", children=items)

    def quantified(self, atom: Node) -> Node:
        bounds = self.quantifier()
        if bounds is None:
            return atom
        if atom.kind in ("^", "$"):
            raise Unsupported("a repeated anchor")
        if self.peek() == "?":
            self.at += 1  # lazy: the same language
        low, high = bounds
        if low > MAX_REPEAT or high > MAX_REPEAT:
            raise Unsupported(f"a repetition bound above {MAX_REPEAT}")
        return Node("rep", children=[atom], low=low, high=high)

    def quantifier(self) -> tuple[int, int] | None:
        char = self.peek()
        if char in "*+?" and char:
            self.at += 1
            return {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[char]
        if char == "{":
            found = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.at)
            if found:  # otherwise a literal brace (ECMA Annex B)
                self.at = found.end()
                low = int(found.group(1))
                high = low if found.group(2) is None else int(found.group(3)) if found.group(3) else -1
                if high != -1 and high < low:
                    raise InvalidPattern("a repetition {m,n} with n < m")
                return low, high
        return None

    def atom(self) -> Node:
        char = self.peek()
        self.at += 1
        if char == "(":
            return self.group()
        if char == "[":
            return Node("set", self.char_class())
        if char == ".":
            return Node("set", _negate(LINE_TERMINATORS))
        if char in "^$":
            return Node(char)
        if char == "\\":
            return Node("set", self.escape(in_class=False))
        if char in "*+?":
            raise InvalidPattern(f"nothing to repeat at {self.at - 1}")
        return Node("set", [(ord(char), ord(char))])

    def group(self) -> Node:
        if self.text.startswith("?:", self.at):
            self.at += 2
        elif self.text.startswith(("?=", "?!"), self.at):
            positive = self.peek(1) == "="
            self.at += 2
            return Node("look", children=[self.group_body()], low=int(positive))
        elif self.text.startswith(("?<=", "?<!"), self.at):
            raise Unsupported("a lookbehind")
        elif self.text.startswith("?<", self.at):
            end = self.text.find(">", self.at)
            if end < 0:
                raise InvalidPattern("an unterminated group name")
            self.at = end + 1
        elif self.peek() == "?":
            raise InvalidPattern(f"an unknown group (?{self.peek(1)}")
        return self.group_body()

    def group_body(self) -> Node:
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise Unsupported(f"groups nested more than {MAX_GROUP_DEPTH} deep")
        node = self.alternation()
        self.depth -= 1
        if self.peek() != ")":
            raise InvalidPattern("an unterminated group")
        self.at += 1
        return node

    def char_class(self) -> Ranges:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        ranges: Ranges = []
        while self.peek() != "]":
            if not self.peek():
                raise InvalidPattern("an unterminated character class")
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                high = self.class_atom()
                if len(low) == 1 and len(high) == 1 and low[0][0] == low[0][1] and high[0][0] == high[0][1]:
                    if high[0][0] < low[0][0]:
                        raise InvalidPattern("a character range out of order")
                    ranges.append((low[0][0], high[0][0]))
                    continue
                ranges += low + [(0x2D, 0x2D)] + high  # a class escape beside '-': all literal (Annex B)
                continue
            ranges += low
        self.at += 1
        merged = normalize(ranges)
        return _negate(merged) if negated else merged

    def class_atom(self) -> Ranges:
        char = self.peek()
        self.at += 1
        if char == "\\":
            return self.escape(in_class=True)
        return [(ord(char), ord(char))]

    def escape(self, in_class: bool) -> Ranges:
        char = self.peek()
        self.at += 1
        if not char:
            raise InvalidPattern("a pattern ending in a backslash")
        sets = {"d": DIGITS, "w": WORD, "s": SPACE}
        if char.lower() in sets:
            ranges = sets[char.lower()]
            return _negate(ranges) if char.isupper() else ranges
        if char == "b":
            if in_class:
                return [(0x08, 0x08)]
            raise Unsupported("a word boundary \\b")
        if char == "B" and not in_class:
            raise Unsupported("a word boundary \\B")
        if char in CONTROL_ESCAPES:
            return _one(CONTROL_ESCAPES[char])
        if char == "0" and not self.peek().isdigit():
            return _one(0)
        if char.isdigit():
            raise Unsupported("a backreference" if not in_class else "an octal escape")
        if char == "c" and self.peek().isascii() and self.peek().isalpha():
            self.at += 1
            return _one(ord(self.text[self.at - 1]) % 32)
        if char == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", self.text[self.at:self.at + 2]):
            self.at += 2
            return _one(int(self.text[self.at - 2:self.at], 16))
        braced = re.compile(r"\{([0-9a-fA-F]{1,6})\}").match(self.text, self.at) if char == "u" else None
        if braced and int(braced.group(1), 16) <= MAX_CODE:  # \u{...}: a code point (the u flag)
            self.at = braced.end()
            return _one(int(braced.group(1), 16))
        if char == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.at:self.at + 4]):
            self.at += 4
            return _one(int(self.text[self.at - 4:self.at], 16))
        if char in "pP" and self.peek() == "{":
            raise Unsupported("a Unicode property escape")
        if char == "k" and self.peek() == "<":
            raise Unsupported("a named backreference")
        return _one(ord(char))  # an identity escape


def _one(code: int) -> Ranges:
    return [(code, code)]


def normalize(ranges: Ranges) -> Ranges:
    """``ranges`` sorted, with overlapping and adjacent ones merged (``spellings``')."""
    return spellings.normalize(ranges)


def _negate(ranges: Ranges) -> Ranges:
    return spellings.complement(spellings.normalize(ranges))


def _emit(node: Node, spell: Callable[[Ranges], str], anchors: dict[str, str] | None = None) -> str:
    """``node`` as a regex: ``spell`` writes a set, ``anchors`` the anchors (None:
    an anchor here cannot be written)."""
    if node.kind == "set":
        return spell(node.ranges)
    if node.kind == "cat":
        return "".join(_emit(child, spell, anchors) for child in node.children)
    if node.kind == "alt":
        return "(?:" + "|".join(_emit(child, spell, anchors) for child in node.children) + ")"
    if node.kind == "rep":
        upper = "" if node.high == -1 else str(node.high)
        return f"(?:{_emit(node.children[0], spell, anchors)}){{{node.low},{upper}}}"
    if anchors is None:
        raise Unsupported(f"an anchor {node.kind} inside the pattern" if node.kind != "look" else "a lookaround")
    if node.kind == "look":  # only Python's re reads it (python_regex)
        return ("(?=" if node.low else "(?!") + _emit(node.children[0], spell, anchors) + ")"
    return anchors[node.kind]


def python_set(ranges: Ranges) -> str:
    """One code point of ``ranges`` (surrogates included: a decoded JSON string may hold one)."""
    if not ranges:
        return "(?!)"
    return "[" + "".join(_class_char(a) if a == b else f"{_class_char(a)}-{_class_char(b)}" for a, b in ranges) + "]"


def _emit_set(ranges: Ranges) -> str:
    """One character of ``ranges``, in each spelling JSON text gives it (``spellings``)."""
    try:
        return spellings.spell_ranges(ranges)
    except ValueError:
        raise Unsupported("a character class that matches nothing") from None

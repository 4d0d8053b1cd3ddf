"""``uniqueItems`` checked while the text is written.

No grammar holds the items an array has seen, so where a schema wants an array
without repeats of endless values (``schema2grammar.unique_arrays``), the
matcher follows the text as JSON (``Scan``: where each byte falls, and the
values of the items written in checked arrays) and refuses a token whose bytes
complete an item equal to an earlier item of its array, or leave an item that
can only end as such a repeat. Values are compared as JSON Schema compares them:
numbers by value (``1``, ``1.0`` and ``10e-1`` are one), strings by their
characters (``"a"`` and ``"\\u0061"`` are one), objects whatever their key order.

A mask is the grammar's, less the tokens ``refused`` finds:

- a walk of the vocabulary trie from the current point, following only bytes
  that keep some checked array at risk (an item in progress that can still equal
  an earlier one, or a place between items): a token that completes a repeat
  there is refused with its whole subtree, and a token that ends inside an item
  that can still become a repeat is refused when no continuation the grammar
  allows avoids one (``avoidable``; a token the lexer takes as it took another
  token whose way out the engine accepted needs no engine of its own: ``_lexed``);
- elsewhere a repeat needs a whole new item inside one token after a comma
  (``,"a"``), which few tokens hold (``CommaTokens.new_item``): each of those the
  grammar allows is fed on its own (and, where an array's last value may be in
  use, each token with a comma: after it no item may begin).
"""

from __future__ import annotations

import itertools
import json
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from mypy_extensions import mypyc_attr

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import Lexer
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.json.prefixes import decoded, number_phase, number_prefix, some_begins
from structgen.json.syntax import CLOSED, ERROR, NUMBER_START, number_ended, number_next, string_next, string_run
from structgen.json.unique_strings import walk_string
from structgen.engine.vocab import TokenTrie

if TYPE_CHECKING:
    from schema2grammar.unique_arrays import UniqueArrays

VALUE, FIRST, MEMBER_FIRST, MEMBER, COLON, NEXT, END, STRING, KEY, NUMBER, LITERAL = range(11)
"""What comes next: a value, a value or ``]``, a key or ``}``, a key, ``:``, ``,`` or
a closing bracket, nothing; or the string, key, number or literal being written."""

WHITESPACE: Final = frozenset(b" \t\n\r")


@mypyc_attr(acyclic=True)  # holds no object that holds it: left untracked by the collector
class Literal:
    """``true``, ``false`` or ``null`` in a value built here: equal to itself only
    (Python's ``True == 1`` is not JSON's), so ``==`` on built values is JSON
    equality (numbers are ``Decimal``s, objects dicts, arrays tuples)."""

    __slots__ = ("spelled",)

    def __init__(self, spelled: bytes) -> None:
        self.spelled = spelled


LITERALS: Final = {spelled[0]: (spelled, Literal(spelled)) for spelled in (b"true", b"false", b"null")}

MAX_SEARCH: Final = 2_000
"""Points one ``avoidable`` search visits; past it the item is taken to have a
way out (items mostly diverge at their next byte: the largest search on the 96
MaskBench schemas with ``uniqueItems`` visits 65)."""

BYTE_ORDER: Final = list(dict.fromkeys(b"xq0Z ~_-.9KJ" + bytes(range(0x20, 256)) + bytes(range(0x20))))
"""The order ``avoidable`` tries bytes in: inside a free string or key, one of the
first few usually leaves every earlier item behind; control bytes, which JSON
takes only as whitespace between values, last."""

_BETWEEN: Final = {  # the bytes ``step`` takes besides whitespace, in each mode outside a scalar
    VALUE: b'"{[-0123456789tfn', FIRST: b'"{[-0123456789tfn]', MEMBER_FIRST: b'"}', MEMBER: b'"',
    COLON: b":", NEXT: b",]}", END: b"",
}
MODE_BYTES: Final = tuple(frozenset(_BETWEEN[mode]) | WHITESPACE if mode in _BETWEEN else frozenset(range(256))
                          for mode in range(LITERAL + 1))
"""Per mode, every byte ``step`` may take (a superset): the walk and ``avoidable``
try no other, so a byte that is no JSON there costs nothing."""

MODE_ORDER: Final = tuple([byte for byte in BYTE_ORDER if byte in taken] for taken in MODE_BYTES)
"""``BYTE_ORDER`` per mode, less the bytes ``step`` never takes there."""

SURROGATE: Final = re.compile("[" + chr(0xD800) + "-" + chr(0xDFFF) + "]")
"""A character no unescaped UTF-8 spells (``unique_strings`` compares bytes)."""

MAX_MEMO: Final = 100_000
"""Search verdicts and allowed bytes one matcher remembers (``SearchMemo``)."""

NEW_ITEM: Final = re.compile(rb',(?:[\s\S]*"[\s\S]*"|[\s\S]*[0-9][^0-9.eE+\-]|[\s\S]*[{\[][\s\S]*[}\]]'
                             rb'|[\s\S]*(?:true|false|null))')
"""Tokens that may hold a whole new item after a comma (a string, a number and
what ends it, a bracketed value, a literal): the only way a token repeats an
item where the walk does not go."""


@mypyc_attr(acyclic=True)  # holds no object that holds it: left untracked by the collector
class Frame:
    """An open object or array: its formula node, whether its items must not
    repeat (``checked``: the canonical values ``seen``, and the ``values`` for
    comparing an item in progress), whether its own value is wanted (``tracked``:
    inside an item of a checked array; then ``parts`` holds what is written)."""

    __slots__ = ("is_object", "node", "checked", "room", "seen", "values", "tracked", "parts", "count", "key")

    def __init__(self, is_object: bool, node: int, checked: bool, room: int | None, seen: frozenset[Any],
                 values: tuple[Any, ...], tracked: bool, parts: tuple[Any, ...], count: int, key: str | None) -> None:
        self.is_object = is_object
        self.node = node
        self.checked = checked
        self.room = room  # how many values the items take (None: endless)
        self.seen = seen
        self.values = values
        self.tracked = tracked
        self.parts = parts
        self.count = count
        self.key = key

    def after(self, value: Any, canonical: Any) -> Frame:
        """This frame with one more member or item."""
        parts = self.parts
        if self.tracked:
            parts = parts + ((self.key, value),) if self.is_object else parts + (value,)
        seen, values = self.seen, self.values
        if self.checked:
            seen, values = seen | {canonical}, values + (value,)
        return Frame(self.is_object, self.node, self.checked, self.room, seen, values, self.tracked, parts,
                     self.count + 1, None)

    def keyed(self, key: str) -> Frame:
        return Frame(self.is_object, self.node, self.checked, self.room, self.seen, self.values, self.tracked,
                     self.parts, self.count, key)


@mypyc_attr(acyclic=True)  # holds no object that holds it: left untracked by the collector
class Scan:
    """One point of the text as JSON (immutable: a step makes a new one)."""

    __slots__ = ("mode", "frames", "node", "raw", "lex")

    def __init__(self, mode: int, frames: tuple[Frame, ...], node: int, raw: bytes, lex: int) -> None:
        self.mode = mode
        self.frames = frames
        self.node = node  # the formula of the value to come or in progress
        self.raw = raw  # the string (kept where its value is wanted), key, number or literal so far
        self.lex = lex  # the string's or number's state in ``structgen.json.syntax`` (0 elsewhere)


DUP: Final = Scan(END, (), 0, b"", 0)
"""The step that completes an item equal to an earlier one of its array."""


class UniqueItems:
    """The checks of one grammar: ``start``, ``feed`` and ``refused``."""

    def __init__(self, arrays: UniqueArrays) -> None:
        self.formulas = arrays.formulas
        self.root = arrays.root
        self._candidates_cache: dict[tuple[int, int], tuple[tuple[Frame, ...], Candidates]] = {}
        self._frames_keys: dict[int, tuple[tuple[Frame, ...], int]] = {}
        self._frames_numbers: dict[tuple[Any, ...], int] = {}  # (id(values) stays taken while a memo's Scan holds them)
        self._numbers = itertools.count()  # the numbers _scan_key gives containers
        self._left_by: tuple[Scan | None, bytes, bool] = (None, b"", False)  # _leaves_by's last scan and verdict
        # both as compiled in, settable (tests/json_layer/test_unique_items.py, tests/json_layer/test_unique_strings.py):
        self.max_search = MAX_SEARCH
        self.by_characters = True  # inside strings the walk of unique_strings; False: Scan byte by byte (slower, the same)

    # -- following the text

    def start(self) -> Scan:
        return Scan(VALUE, (), self.root, b"", 0)

    def feed(self, scan: Scan, data: bytes) -> Scan | None:
        """The point after ``data``: ``DUP`` at a repeat, None where it is no JSON."""
        for byte in data:
            following = self.step(scan, byte)
            if following is None or following is DUP:
                return following
            scan = following
        return scan

    def step(self, scan: Scan, byte: int) -> Scan | None:
        mode = scan.mode
        if mode == STRING or mode == KEY:
            return self._string_byte(scan, byte)
        if mode == NUMBER:
            following = number_next(scan.lex, byte)
            if following != ERROR:
                return Scan(NUMBER, scan.frames, scan.node, scan.raw + bytes([byte]), following)
            if not number_ended(scan.lex):
                return None
            ended = self._finish(scan.frames, Decimal(scan.raw.decode()))
            return ended if ended is None or ended is DUP else self.step(ended, byte)
        if mode == LITERAL:
            spelled, value = LITERALS[scan.raw[0]]
            raw = scan.raw + bytes([byte])
            if not spelled.startswith(raw):
                return None
            return self._finish(scan.frames, value) if raw == spelled else Scan(LITERAL, scan.frames, scan.node, raw, 0)
        if byte in WHITESPACE:
            return scan
        frames = scan.frames
        if mode == VALUE or mode == FIRST:
            if mode == FIRST and byte == ord("]"):
                return self._close(frames)
            return self._start(scan, byte)
        if mode == MEMBER_FIRST or mode == MEMBER:
            if mode == MEMBER_FIRST and byte == ord("}"):
                return self._close(frames)
            return Scan(KEY, frames, scan.node, b"", 0) if byte == ord('"') else None
        if mode == COLON:
            if byte != ord(":"):
                return None
            frame = frames[-1]
            assert frame.key is not None
            return Scan(VALUE, frames, self.formulas.child(frame.node, frame.key), b"", 0)
        if mode == NEXT:
            frame = frames[-1]
            if byte == ord(","):
                if frame.is_object:
                    return Scan(MEMBER, frames, frame.node, b"", 0)
                return Scan(VALUE, frames, self.formulas.item(frame.node, frame.count), b"", 0)
            if byte == (ord("}") if frame.is_object else ord("]")):
                return self._close(frames)
        return None

    def _start(self, scan: Scan, byte: int) -> Scan | None:
        frames, node = scan.frames, scan.node
        tracked = bool(frames) and (frames[-1].tracked or frames[-1].checked)
        if byte == ord("{") or byte == ord("["):
            is_object = byte == ord("{")
            checked = not is_object and self.formulas.checked(node)
            room = self.formulas.room(self.formulas.item(node, 0)) if checked else None
            frame = Frame(is_object, node, checked, room, frozenset(), (), tracked, (), 0, None)
            if is_object:
                return Scan(MEMBER_FIRST, frames + (frame,), node, b"", 0)
            return Scan(FIRST, frames + (frame,), self.formulas.item(node, 0), b"", 0)
        if byte == ord('"'):
            return Scan(STRING, frames, node, b"", 0)
        if byte == ord("-") or 0x30 <= byte <= 0x39:
            return Scan(NUMBER, frames, node, bytes([byte]), number_next(NUMBER_START, byte))
        if byte in LITERALS:
            return Scan(LITERAL, frames, node, bytes([byte]), 0)
        return None

    def _string_byte(self, scan: Scan, byte: int) -> Scan | None:
        following = string_next(scan.lex, byte)
        if following == ERROR:
            return None
        frames = scan.frames
        kept = scan.mode == KEY or (bool(frames) and (frames[-1].tracked or frames[-1].checked))
        if following == CLOSED:
            if not kept:
                return self._finish(frames, None)
            try:
                text = json.loads(b'"' + scan.raw + b'"')
            except ValueError:
                return None
            if scan.mode == KEY:
                return Scan(COLON, frames[:-1] + (frames[-1].keyed(text),), scan.node, b"", 0)
            return self._finish(frames, text)
        return Scan(scan.mode, frames, scan.node, scan.raw + bytes([byte]) if kept else b"", following)

    def _close(self, frames: tuple[Frame, ...]) -> Scan | None:
        frame = frames[-1]
        value: Any = None
        if frame.tracked:
            value = dict(frame.parts) if frame.is_object else tuple(frame.parts)
        return self._finish(frames[:-1], value)

    def _finish(self, frames: tuple[Frame, ...], value: Any) -> Scan | None:
        """After a whole value (``value`` is wanted only inside a checked array's item)."""
        if not frames:
            return Scan(END, frames, 0, b"", 0)
        frame = frames[-1]
        canonical = None
        if frame.checked:
            canonical = _canonical(value)
            if canonical in frame.seen:
                return DUP
        return Scan(NEXT, frames[:-1] + (frame.after(value, canonical),), frame.node, b"", 0)

    # -- at risk

    def at_risk(self, scan: Scan) -> bool:
        """Whether some checked array with items could still get a repeat from here
        (between its items, or an item in progress that can still equal one)."""
        frames = scan.frames
        for level, frame in enumerate(frames):
            if frame.checked and frame.values:
                if level == len(frames) - 1 and scan.mode in (VALUE, NEXT):
                    return True
                if self._may_repeat(scan, level):
                    return True
        return False

    def may_end_as_repeat(self, scan: Scan) -> bool:
        """Whether some item in progress can still become one of its array's earlier
        items, or an array whose items' values have all been used is between items
        (the grammar may want one more)."""
        frames = scan.frames
        for level, frame in enumerate(frames):
            if not frame.checked:
                continue
            if frame.values and self._may_repeat(scan, level):
                return True
            if frame.room is not None and len(frame.seen) >= frame.room and level == len(frames) - 1 \
                    and scan.mode in (VALUE, NEXT):
                return True
        return False

    def _may_repeat(self, scan: Scan, level: int) -> bool:
        """Whether the item in progress of the checked array at ``level`` can still
        equal one of its earlier items."""
        frames = scan.frames
        mode = scan.mode
        if len(frames) == level + 1:  # a scalar item, or none in progress
            return mode in (STRING, NUMBER, LITERAL) and _begins(scan, self._candidates(frames, level))
        found = self._candidates(frames, level)
        last = frames[-1]
        if mode in ((NEXT, MEMBER, MEMBER_FIRST) if last.is_object else (NEXT, FIRST)):
            return found.alive  # between members or items: as long as some earlier item agrees so far
        if mode == KEY:
            started = decoded(scan.raw)
            return started is not None and some_begins(started, found.keys)
        return _begins(scan, found)

    def _candidates(self, frames: tuple[Frame, ...], level: int) -> Candidates:
        """What the earlier items of the array at ``level`` hold where the innermost
        open container stands, for the items whose parts written so far agree: the
        values that may come there, and an object's names not yet written (the same
        for every point inside one container: remembered)."""
        key = (id(frames), level)
        found = self._candidates_cache.get(key)
        if found is not None and found[0] is frames:
            return found[1]
        targets: list[Any] = list(frames[level].values)
        last = len(frames) - 1
        for depth in range(level + 1, len(frames)):
            frame = frames[depth]
            kind = dict if frame.is_object else tuple
            if frame.is_object:
                targets = [t for t in targets if isinstance(t, kind) and frame.count <= len(t)
                           and all(k in t and t[k] == v for k, v in frame.parts)]
            else:
                targets = [t for t in targets if isinstance(t, kind) and frame.count <= len(t)
                           and all(t[i] == v for i, v in enumerate(frame.parts))]
            if depth < last:  # down to the value in progress, at the key or position
                targets = _at(frame, targets)
        if level == last:
            candidates = Candidates(True, targets, ())
        elif frames[last].is_object:
            written = {k for k, _ in frames[last].parts}
            names = sorted({k for t in targets for k in t if k not in written})
            values = _at(frames[last], targets) if frames[last].key is not None else []
            candidates = Candidates(bool(targets), values, tuple(names))
        else:
            candidates = Candidates(bool(targets), _at(frames[last], targets), ())
        if len(self._candidates_cache) > 64:
            self._candidates_cache.clear()
        self._candidates_cache[key] = (frames, candidates)
        return candidates

    # -- masks

    def refused(self, scan: Scan, engine: EngineMatcher, allowed: bytes, memo: SearchMemo) -> list[int]:
        """The tokens the grammar allows (``allowed``, a bitmask row) that repeat an
        item, or lead where every end repeats one."""
        checked = [frame for frame in scan.frames if frame.checked]
        nearly_full = any(frame.room is not None and len(frame.seen) + 1 >= frame.room for frame in checked)
        if not nearly_full and not any(frame.values for frame in checked):
            return []
        compiled = engine.compiled
        refused: set[int] = set()
        to_check: list[tuple[int, Scan]] = []
        if self.at_risk(scan):
            self._walk(scan, compiled.trie, refused, to_check)
        commas = comma_tokens(compiled.vocab)
        ids = commas.every if nearly_full else commas.new_item  # after the last value, no comma
        for token in ids:
            if token in refused or not allowed[token >> 3] >> (token & 7) & 1:
                continue
            after = self.feed(scan, compiled.vocab[token])
            if after is DUP:
                refused.add(token)
            elif after is not None and self.may_end_as_repeat(after):
                to_check.append((token, after))
        lexer, lexer_state = compiled.lexer, engine.state_key()[0]
        taken: dict[bytes, set[tuple[Any, ...]]] = {}  # ways out, each with the lexer's ends (_lexed) it was taken from
        last = b""  # the last way out taken
        for token, after in to_check:
            if token in refused or not allowed[token >> 3] >> (token & 7) & 1:
                continue
            spelled = compiled.vocab[token]
            if last and _lexed(lexer, lexer_state, spelled, last[0]) in taken[last] and self._leaves_by(after, last):
                continue  # the engine goes on from a configuration that took the way out: judged without it
            probe = engine.fork()
            if not probe.accept_token(token):
                continue
            if not self.avoidable(probe, after, memo):
                refused.add(token)
                continue
            way_out = memo.ways_out.get(self._scan_key(after))
            if way_out and self._gets_out_by(probe, after, way_out):
                taken.setdefault(way_out, set()).add(_lexed(lexer, lexer_state, spelled, way_out[0]))
                last = way_out
        return sorted(refused)

    def _walk(self, scan: Scan, trie: TokenTrie, refused: set[int], to_check: list[tuple[int, Scan]]) -> None:
        """The trie walk of the module docstring, from ``scan``."""
        node_byte, subtree_end, first_token, token_ids = trie.node_byte, trie.subtree_end, trie.first_token, trie.token_ids
        todo: list[tuple[int, Scan]] = []
        self._descend(trie.roots(), scan, trie, todo, to_check)
        asked: Scan | None = None  # the last scan ``may_end_as_repeat`` was asked of (whitespace keeps the scan)
        ends = False
        while todo:
            node, before = todo.pop()
            after = self.step(before, node_byte[node])
            if after is None:
                continue
            if after is DUP:
                refused.update(token_ids[first_token[node]:first_token[subtree_end[node]]])
                continue
            if first_token[node] < first_token[node + 1]:
                if after is not asked:
                    asked, ends = after, self.may_end_as_repeat(after)
                if ends:
                    to_check.extend((token, after) for token in token_ids[first_token[node]:first_token[node + 1]])
            if after is before or self.at_risk(after):
                children = []
                child = node + 1
                while child < subtree_end[node]:
                    children.append(child)
                    child = subtree_end[child]
                self._descend(children, after, trie, todo, to_check)

    def _descend(self, children: list[int], scan: Scan, trie: TokenTrie, todo: list[tuple[int, Scan]],
                 to_check: list[tuple[int, Scan]]) -> None:
        """Walk on below ``scan`` into ``children``: inside a string, by characters
        (``unique_strings``: ``Scan`` again where the string may end), else to ``todo``."""
        inside = self._string_point(scan)
        if inside is None:
            node_byte, taken = trie.node_byte, MODE_BYTES[scan.mode]
            todo.extend((child, scan) for child in children if node_byte[child] in taken)
            return
        targets, written, pending = inside
        found = walk_string(trie, children, targets, written, pending)
        mode, frames, node, raw = scan.mode, scan.frames, scan.node, scan.raw
        lex = scan.lex
        for child, path in found.handoffs:
            todo.append((child, Scan(mode, frames, node, raw + path, string_run(lex, path))))
        first_token, token_ids = trie.first_token, trie.token_ids
        for child, path in found.risky:
            after = Scan(mode, frames, node, raw + path, string_run(lex, path))
            to_check.extend((token, after) for token in token_ids[first_token[child]:first_token[child + 1]])

    def _string_point(self, scan: Scan) -> tuple[list[str], int, bytes] | None:
        """Inside a string or key whose value is kept: the earlier strings it can
        still become (of every checked array it is in), how many characters are
        written and the bytes of one begun; None elsewhere, and where ``Scan``
        must decode (a ``\\u`` escape begun, an earlier string with a lone surrogate)."""
        frames = scan.frames
        if scan.mode not in (STRING, KEY) or not frames or not self.by_characters:
            return None
        if scan.mode == STRING and not (frames[-1].tracked or frames[-1].checked):
            return None  # not kept: no repeat can begin here
        started = decoded(scan.raw)
        if started is None or started[1][:2] == b"\\u":
            return None
        text, pending = started
        targets: list[str] = []
        for level, frame in enumerate(frames):
            if frame.checked and frame.values:
                found = self._candidates(frames, level)
                if scan.mode == STRING:
                    targets.extend(found.strings)
                elif level < len(frames) - 1:
                    targets.extend(found.keys)
        least = len(text) + 1 if pending else len(text)  # a character begun: only a longer string takes it
        targets = [target for target in targets if len(target) >= least and target.startswith(text)]
        if any(SURROGATE.search(target) for target in targets):
            return None
        return targets, len(text), pending

    def avoidable(self, engine: EngineMatcher, scan: Scan, memo: SearchMemo) -> bool:
        """Whether some continuation the grammar allows (``engine`` is at ``scan``)
        leaves every item in progress unable to repeat an earlier one: first the
        bytes that got out last time from a point of the JSON text like this one
        (``SearchMemo.ways_out``: the same point after other whitespace, mostly),
        else a search over bytes, each point once (``max_search`` at most), that
        tries every byte at a point for a way out before it forks the engine to
        go on, and whitespace (the point of the text as it is) last. Its verdicts
        are kept in ``memo``: where it gets out, for every point on the way;
        where it cannot, for every point it saw."""
        scan_key = self._scan_key(scan)
        start = (engine.state_key(), scan_key)
        known = memo.verdicts.get(start)
        if known is not None:
            return known[0]
        way_out = memo.ways_out.get(scan_key)
        if way_out is not None and self._gets_out_by(engine, scan, way_out):
            memo.remember(start, True, scan)
            return True
        points: list[tuple[EngineMatcher, Scan, int, tuple[Any, ...], bytes]] = [(engine, scan, -1, start, b"")]
        seen = {start}
        todo = [0]
        while todo:
            index = todo.pop()
            here, at, _, _, path = points[index]
            viable = memo.viable(here)
            spaced: list[int] = []  # whitespace, which leaves the point of the text as it is
            onward: list[tuple[int, Scan]] = []
            for byte in MODE_ORDER[at.mode]:  # first a byte that gets out at once (kept for next time) ...
                following = self.step(at, byte)
                if following is None or following is DUP or not _allows(here, viable, byte):
                    continue
                if following is at:
                    spaced.append(byte)
                elif not self.may_end_as_repeat(following):
                    way_out = path + bytes([byte])
                    memo.ways_out[scan_key] = way_out if scan.mode in (STRING, KEY, NUMBER, LITERAL) \
                        else way_out.lstrip(b" \t\n\r")  # what whitespace is left may differ next time
                    _got_out(points, index, memo)
                    return True
                else:
                    onward.append((byte, following))
            for byte in spaced:  # ... else the points they lead to (searched from the last pushed: whitespace's last)
                if self._search_on(points, index, byte, at, memo, seen, todo):
                    return True
            for byte, following in onward:
                if self._search_on(points, index, byte, following, memo, seen, todo):
                    return True
        for _, at, _, key, _ in points:
            memo.remember(key, False, at)
        return False

    def _search_on(self, points: list[tuple[EngineMatcher, Scan, int, tuple[Any, ...], bytes]], index: int, byte: int,
                   following: Scan, memo: SearchMemo, seen: set[tuple[Any, ...]], todo: list[int]) -> bool:
        """``avoidable``'s search goes on by ``byte`` from ``points[index]`` (to
        ``following``, which can still end as a repeat): True, the search over,
        where that point is known to get out or the search passes ``max_search``
        (taken as a way out); else the point joins ``todo`` unless seen or known."""
        here, _, _, _, path = points[index]
        probe = here.fork()
        probe.accept_bytes(bytes([byte]))
        key = (probe.state_key(), self._scan_key(following))
        known = memo.verdicts.get(key)
        if known is None and key not in seen:
            seen.add(key)
            points.append((probe, following, index, key, path + bytes([byte])))
            todo.append(len(points) - 1)
        if known is not None and known[0] or len(points) > self.max_search:
            _got_out(points, index, memo)
            return True
        return False

    def _gets_out_by(self, engine: EngineMatcher, scan: Scan, way_out: bytes) -> bool:
        """Whether the grammar takes ``way_out`` at the engine's point, after which
        no item in progress can repeat an earlier one."""
        return self._leaves_by(scan, way_out) and engine.fork().accept_bytes(way_out)

    def _leaves_by(self, scan: Scan, way_out: bytes) -> bool:
        """Whether after ``way_out`` from ``scan`` no item in progress can repeat an
        earlier one (the last scan asked of is remembered: whitespace keeps it)."""
        left = self._left_by  # (read once: matchers of one grammar may run in several threads)
        if left[0] is not scan or left[1] != way_out:
            after = self.feed(scan, way_out)
            left = (scan, way_out, after is not None and after is not DUP and not self.may_end_as_repeat(after))
            self._left_by = left
        return left[2]

    def _scan_key(self, scan: Scan) -> tuple[Any, ...]:
        """Equal for two points of the JSON text that go on alike: mode, what is
        written of the value in progress (a number by what of it still matters),
        and each open container's place, count, key and values, as a number given
        once per distinct containers (so a memo lookup hashes no item's parts;
        never given again, so a key cleared away matches nothing later)."""
        raw = number_phase(scan.raw) if scan.mode == NUMBER else scan.raw
        frames = scan.frames
        known = self._frames_keys.get(id(frames))
        if known is None or known[0] is not frames:
            key = tuple((f.is_object, f.node, f.count, f.key, id(f.values),
                         tuple((k, _canonical(v)) for k, v in f.parts) if f.is_object else tuple(map(_canonical, f.parts)))
                        for f in frames)
            number = self._frames_numbers.get(key)
            if number is None:
                if len(self._frames_numbers) > MAX_MEMO:
                    self._frames_numbers.clear()
                number = self._frames_numbers.setdefault(key, next(self._numbers))  # (atomic: threads may share it)
            if len(self._frames_keys) > 64:
                self._frames_keys.clear()
            known = self._frames_keys[id(frames)] = (frames, number)
        return (scan.mode, raw, scan.lex, scan.node, known[1])


class SearchMemo:
    """What ``avoidable`` found, for a matcher and its forks (their stacks share
    node ids, which the keys hold): verdicts by point, the bytes the grammar
    allows by engine state. Emptied past ``MAX_MEMO``."""

    def __init__(self) -> None:
        self.verdicts: dict[tuple[Any, ...], tuple[bool, Scan]] = {}  # the Scan keeps the ids in the key alive
        self.bytes: dict[tuple[int, ...], bytearray] = {}
        self.ways_out: dict[tuple[Any, ...], bytes] = {}  # by ``_scan_key``: the bytes that got out from there

    def remember(self, key: tuple[Any, ...], verdict: bool, scan: Scan) -> None:
        if len(self.verdicts) > MAX_MEMO:
            self.verdicts.clear()
            self.ways_out.clear()
        self.verdicts[key] = (verdict, scan)

    def viable(self, engine: EngineMatcher) -> bytearray:
        """Per byte, whether the grammar allows it next at the engine's point: 0 not
        asked yet, 1 yes, 2 no (asked one at a time: a search mostly stops at the first)."""
        key = engine.state_key()
        found = self.bytes.get(key)
        if found is None:
            if len(self.bytes) > MAX_MEMO:
                self.bytes.clear()
            found = self.bytes[key] = bytearray(256)
        return found


def _got_out(points: list[tuple[EngineMatcher, Scan, int, tuple[Any, ...], bytes]], index: int, memo: SearchMemo) -> None:
    """``avoidable`` got out from ``points[index]``: so did every point on the way there."""
    while index >= 0:
        memo.remember(points[index][3], True, points[index][1])
        index = points[index][2]


def _lexed(lexer: Lexer, state: int, spelled: bytes, byte: int) -> tuple[Any, ...]:
    """What the lexer makes of ``spelled`` and one ``byte`` more from ``state``:
    the lexemes they end, in order, and the state after ``byte``. Two tokens equal
    here, from one engine, leave it in one configuration after ``byte`` (the stack
    tops are fed the same lexemes), so the bytes after it go on alike from both:
    ``refused`` judges a token by a way out another was seen to take so,
    without the engine."""
    ended: list[tuple[int, ...]] = []
    for each in spelled + bytes([byte]):
        state, finished = lexer.step(state, each)
        if state == DEAD:
            return ()
        if finished:
            ended.append(tuple(finished))
    return (state, tuple(ended))


def _allows(engine: EngineMatcher, viable: bytearray, byte: int) -> bool:
    known = viable[byte]
    if not known:
        known = viable[byte] = 1 if engine.viable_byte(byte) else 2
    return known == 1


class CommaTokens:
    """The tokens of one vocabulary that hold a comma (ids, sorted): all of them,
    and those that may hold a whole new item after it (``NEW_ITEM``)."""

    def __init__(self, vocab: list[bytes]) -> None:
        self.vocab = vocab  # kept: its id keys the cache
        self.every = [i for i, spelled in enumerate(vocab) if b"," in spelled]
        self.new_item = [i for i in self.every if NEW_ITEM.search(vocab[i])]


_COMMA_TOKENS: dict[int, CommaTokens] = {}


def comma_tokens(vocab: list[bytes]) -> CommaTokens:
    """The vocabulary's ``CommaTokens``, found once (``structgen.compile`` finds
    them with the grammar, so no mask waits for them)."""
    found = _COMMA_TOKENS.get(id(vocab))
    if found is None or found.vocab is not vocab:
        found = _COMMA_TOKENS[id(vocab)] = CommaTokens(vocab)
    return found


def _canonical(value: Any) -> Any:
    """A built value as a hashable one, equal for equal values (objects whatever
    their key order)."""
    if isinstance(value, tuple):
        return tuple(_canonical(item) for item in value)
    if isinstance(value, dict):
        return frozenset((key, _canonical(item)) for key, item in value.items())
    return value


@mypyc_attr(acyclic=True)  # holds no object that holds it: left untracked by the collector
class Candidates:
    """Earlier items' values that an item in progress may still become at one place:
    ``alive`` (some earlier item agrees so far), the values that may come there
    (strings sorted apart, for bisection) and an object's names not yet written."""

    __slots__ = ("alive", "strings", "others", "keys")

    def __init__(self, alive: bool, values: list[Any], keys: tuple[str, ...]) -> None:
        self.alive = alive
        self.strings = tuple(sorted(v for v in values if isinstance(v, str)))
        self.others = [v for v in values if not isinstance(v, str)]
        self.keys = keys


def _at(frame: Frame, targets: list[Any]) -> list[Any]:
    """The values of ``targets`` (containers like ``frame``) where its value in
    progress stands: at its key, or at its next position."""
    if frame.is_object:
        written = {k for k, _ in frame.parts}
        return [t[frame.key] for t in targets if frame.key in t and frame.key not in written]
    return [t[frame.count] for t in targets if frame.count < len(t)]


def _begins(scan: Scan, found: Candidates) -> bool:
    """Whether the scalar written so far (or none yet) can still become one of the values."""
    mode = scan.mode
    if mode == STRING:
        started = decoded(scan.raw)
        return started is not None and some_begins(started, found.strings)
    if mode == NUMBER:
        written = scan.raw.decode()
        return any(isinstance(v, Decimal) and number_prefix(written, v) for v in found.others)
    if mode == LITERAL:
        return any(v is LITERALS[scan.raw[0]][1] for v in found.others)  # (the bytes so far are its: a step checks)
    return bool(found.strings or found.others)  # nothing written yet

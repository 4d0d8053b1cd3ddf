"""Automata over decoded characters for ECMA-262 patterns, and back to regexes.

A pattern's search automaton (``search_nfa``, as ``ecma`` reads the pattern), the
subset construction over character classes every automaton agrees on, products of
automata, and state elimination to a regex over JSON spellings (``spellings``): what the
translator needs where one terminal must say what regexes cannot say directly
("matches none of these patterns", "matches this pattern in so many characters").
Every construction is bounded by the limits below and raises ``ecma.Unsupported``
past them; the translator then approximates and says so in the report.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from schema2grammar import ecma, spellings

MAX_NFA_STATES = 20_000
"""States of one pattern's automaton before determinization (repetition counts expand)."""

MAX_STATES = 2_000
"""States of one pattern's DFA, and of a product of automata."""

MAX_MEETING_STATES = 5_000
"""States of the product that tells whether one terminal's regexes meet
(``regexes_meet``): the engine's automaton of that terminal is about as big, and
a date-time within 255 characters needs 2,421; e-mails and URIs counted up to 255
need over 100,000 (a hostname 27,910), and stay apart."""

ALL: ecma.Ranges = [(0, ecma.SURROGATES[0] - 1), (ecma.SURROGATES[1] + 1, ecma.MAX_CODE)]
"""Every character a string may hold (lone surrogates cannot be written in UTF-8)."""


class NFA:
    """Thompson automaton: ``moves[s]`` (ranges, target), ``empty[s]`` targets on no input."""

    def __init__(self) -> None:
        self.moves: list[list[tuple[ecma.Ranges, int]]] = []
        self.empty: list[list[int]] = []
        self.free: list[int] = []  # states after a whole match: every string that gets there matches

    def state(self) -> int:
        if len(self.moves) >= MAX_NFA_STATES:
            raise ecma.Unsupported(f"a pattern needs more than {MAX_NFA_STATES} automaton states")
        self.moves.append([])
        self.empty.append([])
        return len(self.moves) - 1


def search_nfa(tree: ecma.Node) -> NFA:
    """Strings in which ``tree`` matches somewhere: each branch free on a side it does
    not anchor (the same reading as ``ecma.json_string_regex``)."""
    nfa = NFA()
    start, end = nfa.state(), nfa.state()
    for anchored_start, middle, anchored_end in ecma.anchored(tree):
        at = nfa.state()
        nfa.empty[start].append(at)
        if not anchored_start:
            nfa.moves[at].append((ALL, at))
        at = _add(nfa, middle, at)
        if not anchored_end:
            tail = nfa.state()
            nfa.empty[at].append(tail)
            nfa.moves[tail].append((ALL, tail))
            nfa.free.append(tail)
            at = tail
        nfa.empty[at].append(end)
    nfa.empty.append([])  # the accepting state is the last one
    nfa.moves.append([])
    nfa.empty[end].append(len(nfa.moves) - 1)
    return nfa


def _add(nfa: NFA, node: ecma.Node, at: int) -> int:
    """``node``'s automaton from state ``at``; returns its end state."""
    if node.kind == "set":
        end = nfa.state()
        if node.ranges:
            nfa.moves[at].append((node.ranges, end))
        return end
    if node.kind == "cat":
        for child in node.children:
            at = _add(nfa, child, at)
        return at
    if node.kind == "alt":
        end = nfa.state()
        for child in node.children:
            begin = nfa.state()
            nfa.empty[at].append(begin)
            nfa.empty[_add(nfa, child, begin)].append(end)
        return end
    if node.kind == "rep":
        child = node.children[0]
        for _ in range(node.low):
            at = _add(nfa, child, at)
        if node.high == -1:
            hub = nfa.state()
            nfa.empty[at].append(hub)
            nfa.empty[_add(nfa, child, hub)].append(hub)
            return hub
        end = nfa.state()
        nfa.empty[at].append(end)
        for _ in range(node.high - node.low):
            at = _add(nfa, child, at)
            nfa.empty[at].append(end)
        return end
    raise ecma.Unsupported(f"an anchor {node.kind} left inside the pattern")  # ecma.anchored lifts them all


def _closure(nfa: NFA, states: set[int]) -> set[int]:
    """``states`` and every state their empty moves reach (``states`` grows)."""
    work = list(states)
    while work:
        for target in nfa.empty[work.pop()]:
            if target not in states:
                states.add(target)
                work.append(target)
    return states


def matches(nfa: NFA, text: str) -> bool:
    """Whether ``nfa`` accepts ``text`` (a name judged one by one, without classes)."""
    current = _closure(nfa, {0})
    for char in text:
        code = ord(char)
        current = _closure(nfa, {target for s in current for ranges, target in nfa.moves[s]
                                 if any(low <= code <= high for low, high in ranges)})
        if not current:
            return False
    return len(nfa.moves) - 1 in current


def lengths_dfa(low: int, high: int | None, classes: Classes) -> DFA:
    """Strings of ``low`` to ``high`` characters (None: no upper bound): a counter
    of the characters read, then a dead state (past ``high``, or on a surrogate)."""
    top = low if high is None else high  # unbounded: from ``low`` on, one state
    if top + 2 > MAX_STATES:
        raise ecma.Unsupported(f"lengths above {MAX_STATES - 2} characters are not counted here")
    chars = classes.of(ALL)
    dead = top + 1
    table = [[(min(s + 1, top) if high is None else s + 1 if s < high else dead) if chars >> c & 1 else dead
              for c in range(classes.count)] for s in range(top + 1)]
    table.append([dead] * classes.count)
    return DFA(table, [low <= s <= top for s in range(top + 1)] + [False])


def cut_points(range_lists: list[ecma.Ranges]) -> list[int]:
    """The first character of every class: where some range starts or stops."""
    cuts = {low for low, _ in ALL} | {high + 1 for _, high in ALL}
    for ranges in range_lists:
        for low, high in ranges:
            cuts.add(low)
            cuts.add(high + 1)
    return sorted(cuts)


class Classes:
    """Characters that every automaton treats alike, as consecutive intervals;
    the surrogates' interval is left out of every set."""

    def __init__(self, cuts: list[int]) -> None:
        self.cuts = cuts
        self.count = len(cuts) - 1  # class i: cuts[i] .. cuts[i+1]-1
        self._cache: dict[tuple[tuple[int, int], ...], int] = {}

    def of(self, ranges: ecma.Ranges) -> int:
        """The classes inside ``ranges``, as a bit set."""
        key = tuple(ranges)
        found = self._cache.get(key)
        if found is None:
            found = 0
            for low, high in ranges:
                for i in range(bisect.bisect_left(self.cuts, low), bisect.bisect_left(self.cuts, high + 1)):
                    found |= 1 << i
            self._cache[key] = found
        return found

    def ranges(self, members: int) -> ecma.Ranges:
        out: ecma.Ranges = []
        for i in range(self.count):
            if members >> i & 1:
                low, high = self.cuts[i], self.cuts[i + 1] - 1
                if out and out[-1][1] + 1 == low:
                    out[-1] = (out[-1][0], high)
                else:
                    out.append((low, high))
        return out


@dataclass
class DFA:
    """``next[s][c]``: the state after class ``c`` (total: a dead state where nothing
    goes on); state 0 starts."""

    next: list[list[int]]
    accepting: list[bool]


def determinize(nfa: NFA, classes: Classes) -> DFA:
    """The subset construction over ``classes``, total (the empty set is a dead
    state); past a whole match of a search, one free state: the rest is anything."""
    start, step = _subsets(nfa, classes)
    table, order = explore(start, step, classes.count, "a pattern needs")
    final = len(nfa.moves) - 1
    return DFA(table, [final in states for states in order])


def _subsets(nfa: NFA, classes: Classes) -> tuple[frozenset[int], Callable[[frozenset[int], int], frozenset[int]]]:
    """The subset construction's start and step (``determinize``), to explore."""
    labelled = [[(classes.of(ranges), target) for ranges, target in moves] for moves in nfa.moves]

    def closure(states: set[int]) -> frozenset[int]:
        return frozenset(_closure(nfa, states))

    free = closure({nfa.free[0]}) if nfa.free else frozenset()

    def step(current: frozenset[int], c: int) -> frozenset[int]:
        bit = 1 << c
        target = closure({t for s in current for members, t in labelled[s] if members & bit})
        if free and not free.isdisjoint(nfa.free) and not target.isdisjoint(nfa.free):
            return free  # past a whole match of a search, what else the pattern could match changes nothing
        return target

    return closure({0}), step


State = TypeVar("State", bound=Hashable)


def explore(start: State, step: Callable[[State, int], State], classes: int, what: str,
            limit: int | None = None) -> tuple[list[list[int]], list[State]]:
    """The states reachable from ``start`` (``step``: the next one on a class),
    numbered breadth first: the table of their moves, and the states in order;
    ``Unsupported`` past ``limit`` of them (None: ``MAX_STATES``)."""
    most = MAX_STATES if limit is None else limit
    number = {start: 0}
    order = [start]
    table: list[list[int]] = []
    for current in order:
        row = []
        for c in range(classes):
            target = step(current, c)
            index = number.get(target)
            if index is None:
                if len(order) >= most:
                    raise ecma.Unsupported(f"{what} more than {most} automaton states")
                index = number[target] = len(order)
                order.append(target)
            row.append(index)
        table.append(row)
    return table, order


def product(automata: list[DFA], classes: Classes) -> tuple[DFA, list[int]]:
    """The automata run together, and per state which of them accept (bit i: automaton i)."""
    table, order = explore(
        (0,) * len(automata),
        lambda current, c: tuple(automaton.next[s][c] for automaton, s in zip(automata, current)),
        classes.count,
        "these patterns together need",
    )
    signatures = [sum(1 << i for i, (automaton, s) in enumerate(zip(automata, states)) if automaton.accepting[s])
                  for states in order]
    return DFA(table, [False] * len(order)), signatures


def regexes_meet(regexes: tuple[str, ...]) -> bool:
    """Whether some text matches every one of ``regexes`` whole (regexes the
    translator writes for one terminal: over the JSON text, ``ecma``'s syntax), by
    the product of their automata, built only where none of them is stuck;
    ``Unsupported`` past ``MAX_MEETING_STATES`` states of it."""
    found = _meet(regexes, MAX_MEETING_STATES)
    if isinstance(found, str):
        raise ecma.Unsupported(found)
    return found


@functools.lru_cache(maxsize=256)
def _meet(regexes: tuple[str, ...], limit: int) -> bool | str:
    """``regexes_meet``, remembered: a verdict, or why there is none (a product
    past the limit takes about a second to find so: each one once)."""
    try:
        nfas = [search_nfa(ecma.parse(f"^(?:{_ecma_syntax(regex)})$")) for regex in regexes]
        classes = Classes(cut_points([ranges for nfa in nfas for moves in nfa.moves for ranges, _ in moves]))
        subsets = [_subsets(nfa, classes) for nfa in nfas]
        dead: tuple[frozenset[int], ...] = tuple(frozenset() for _ in nfas)  # one state once any is stuck: the product stays small

        def step(current: tuple[frozenset[int], ...], c: int) -> tuple[frozenset[int], ...]:
            following = tuple(moves(states, c) for (_, moves), states in zip(subsets, current))
            return dead if not all(following) else following

        _, order = explore(tuple(start for start, _ in subsets), step, classes.count, "these regexes together need", limit)
    except ecma.Unsupported as exc:
        return str(exc)
    finals = [len(nfa.moves) - 1 for nfa in nfas]
    return any(all(final in states for final, states in zip(finals, current)) for current in order)


_LONG_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\U([0-9a-fA-F]{8})")
"""Python's ``\\UXXXXXXXX`` (not preceded by an escaped backslash), which ECMA-262 does
not spell."""


def _ecma_syntax(regex: str) -> str:
    """A regex the translator wrote for the engine (Python's syntax) in ``ecma``'s:
    ``\\U0010ffff`` as the character itself or ``\\uffff``."""
    def spelled(match: re.Match[str]) -> str:
        code = int(match.group(2), 16)
        return match.group(1) + (chr(code) if code > 0xFFFF else f"\\u{code:04x}")

    return _LONG_ESCAPE.sub(spelled, regex)


def _search_dfa(tree: ecma.Node) -> tuple[DFA, Classes, list[bool]]:
    """The DFA of the pattern ``tree`` (ECMA-262 search) over its character
    classes, and its live states (``_useful``)."""
    nfa = search_nfa(tree)
    classes = Classes(cut_points([ranges for moves in nfa.moves for ranges, _ in moves]))
    dfa = determinize(nfa, classes)
    return dfa, classes, _useful(dfa, dfa.accepting)


def lengths_found(tree: ecma.Node, low: int, high: int | None) -> bool:
    """Whether the pattern ``tree`` finds (ECMA-262 search) some text of ``low`` to
    ``high`` characters (None: no upper bound): its DFA run beside a counter of the
    characters read, which the lexer's automaton of the two together grows with.
    More than ``MAX_MEETING_STATES`` states of that product is ``Unsupported``, as
    for other regexes one terminal intersects (``regexes_meet``)."""
    dfa, classes, live = _search_dfa(tree)
    cap = low if high is None else high  # past ``low`` unbounded, the count no longer matters

    def step(current: tuple[int, int], c: int) -> tuple[int, int]:
        state, count = current
        if state < 0 or not live[dfa.next[state][c]] or high is not None and count == high:
            return -1, -1  # one dead state: no text of the pattern goes on so, or too long
        return dfa.next[state][c], min(count + 1, cap)

    _, order = explore((0, 0), step, classes.count, "the pattern counting its characters needs", MAX_MEETING_STATES)
    return any(state >= 0 and dfa.accepting[state] and count >= low for state, count in order)


def closing_distance(tree: ecma.Node, low: int) -> tuple[int, int] | None:
    """A length ``K`` and the most characters ``D`` that a text of at least ``K``
    (and ``low``) characters, which the pattern ``tree`` can still find (ECMA-262
    search), needs before it is found: ``K`` is where counting them stops
    changing anything (the shortest match, or ``low``). A maximum of ``K + D`` or
    more is then exact counted outside the automaton, where a mask refuses a token
    that leaves fewer characters than the text's distance to its end (``D`` = 0:
    once ``K`` long, every text that can still end well can end now; a pattern of
    words has ``D`` = 1: after a space, one more character). None where nothing
    is found, or the count passes ``MAX_MEETING_STATES`` states."""
    dfa, classes, live = _search_dfa(tree)
    shortest = _shortest(dfa, live)
    if shortest is None:
        return None
    cap = max(shortest, low)  # past it the count changes nothing here

    def step(current: tuple[int, int], c: int) -> tuple[int, int]:
        state, count = current
        if state < 0 or not live[dfa.next[state][c]]:
            return -1, -1  # one dead state: no text of the pattern goes on so
        return dfa.next[state][c], min(count + 1, cap)

    try:
        table, order = explore((0, 0), step, classes.count, "the pattern counting its characters needs",
                               MAX_MEETING_STATES)
    except ecma.Unsupported:
        return None
    ends = [state >= 0 and dfa.accepting[state] and count >= low for state, count in order]
    distance = _distances(table, ends)
    late = [distance[i] for i in range(len(order)) if order[i][0] >= 0 and order[i][1] == cap and distance[i] >= 0]
    return (cap, max(late)) if late else None


def _distances(table: list[list[int]], ends: list[bool]) -> list[int]:
    """Per state, the fewest moves to one of ``ends`` (-1: none reachable)."""
    into: list[list[int]] = [[] for _ in table]
    for source, row in enumerate(table):
        for target in set(row):
            into[target].append(source)
    distance = [0 if end else -1 for end in ends]
    order = [state for state, end in enumerate(ends) if end]
    for state in order:
        for source in into[state]:
            if distance[source] < 0:
                distance[source] = distance[state] + 1
                order.append(source)
    return distance


def _shortest(dfa: DFA, live: list[bool]) -> int | None:
    """The fewest characters of a text the DFA accepts (None: it accepts none)."""
    if not live[0]:
        return None
    depth = {0: 0}
    order = [0]
    for state in order:
        if dfa.accepting[state]:
            return depth[state]
        for target in dfa.next[state]:
            if live[target] and target not in depth:
                depth[target] = depth[state] + 1
                order.append(target)
    return None


# -- back to a regex


def to_regex(dfa: DFA, accepting: list[bool], classes: Classes, max_work: int) -> str | None:
    """The language of ``dfa`` with ``accepting`` as a regex over JSON spellings
    (None: empty), by state elimination, farthest state first; ``Unsupported``
    once the regexes written on the way add up to more than ``max_work`` characters.
    Written twice, with escape hubs (``_escape_hubs``) and without, the shorter
    kept: a hub writes the escapes once for the states that share it (a trie of
    names), but where it lies on a cycle (a search's way back to its start) the
    ways through it are written again."""
    dfa, accepting = _minimized(dfa, accepting)
    useful = _useful(dfa, accepting)
    if not useful[0]:
        return None
    moves: list[tuple[int, int, ecma.Ranges, str | None]] = []  # (source, target, characters, their escapes)
    for s, row in enumerate(dfa.next):
        if not useful[s]:
            continue
        by_target: dict[int, int] = {}
        for c, t in enumerate(row):
            if useful[t]:
                by_target[t] = by_target.get(t, 0) | 1 << c
        moves += [(s, t, ranges, spellings.escapes(ranges)) for t, members in by_target.items()
                  if (ranges := classes.ranges(members & classes.of(ALL)))]
    hubs = _escape_hubs(moves)
    if not hubs:
        return _eliminated(dfa, accepting, useful, moves, {}, max_work)
    found: list[str | None] = []
    failure: ecma.Unsupported | None = None
    for tried in (hubs, {}):
        try:
            found.append(_eliminated(dfa, accepting, useful, moves, tried, max_work))
        except ecma.Unsupported as exc:
            failure = exc
    if not found:
        assert failure is not None
        raise failure
    return min(found, key=lambda regex: len(regex or ""))


def _eliminated(dfa: DFA, accepting: list[bool], useful: list[bool], moves: list[tuple[int, int, ecma.Ranges, str | None]],
                hubs: dict[tuple[int, str | None], int], max_work: int) -> str | None:
    """``to_regex``'s state elimination over the DFA's ``moves``, with the given
    escape hubs (``_escape_hubs``: their states numbered below the start's and the final's)."""
    start, final = -1, -2
    edges: dict[int, dict[int, str]] = {}  # source -> target -> regex
    into: dict[int, set[int]] = {}
    for s in range(len(dfa.next)):
        if useful[s] and accepting[s]:
            _join(edges, into, s, final, "")
    for s, t, ranges, escaped in moves:
        hub = hubs.get((t, escaped))
        if hub is None:
            _join(edges, into, s, t, _spell(ranges))
            continue
        raw = spellings.raw(ranges)
        if raw is not None:
            _join(edges, into, s, t, raw)
        _join(edges, into, s, hub, "")
    for (t, escapes), hub in hubs.items():
        _join(edges, into, hub, t, str(escapes))
    _join(edges, into, start, 0, "")
    size = 0
    for state in _elimination_order(dfa, useful) + sorted(hubs.values(), reverse=True):
        outgoing = edges.pop(state, {})
        loop = outgoing.pop(state, None)
        into.get(state, set()).discard(state)
        middle = "" if loop is None else f"(?:{loop})*"
        for source in into.pop(state, set()):
            head = edges[source].pop(state)
            for target, tail in outgoing.items():
                joined = head + middle + tail
                size += len(joined)
                if size > max_work:
                    raise ecma.Unsupported(f"turning the automaton into a regex writes more than {max_work} characters")
                _join(edges, into, source, target, joined)
        for target in outgoing:
            into[target].discard(state)
    return edges.get(start, {}).get(final)


MIN_HUB_ESCAPES = 64
"""Characters of an escape regex (``spellings.escapes``) from which several states
moving to one state on it share a hub (``_escape_hubs``)."""


def _escape_hubs(moves: list[tuple[int, int, ecma.Ranges, str | None]]) -> dict[tuple[int, str | None], int]:
    """A state of its own (a hub: -3 down, below ``to_regex``'s start and final) for each target and long
    escape regex that two states or more move on: each such state moves to the hub
    on nothing, the hub to the target on the escapes. Eliminated last, a hub joins
    the ways to it before the escapes are written: the names other than a few
    declared ones spell "any escape" once, not once per trie node (every escape
    of a character but printable ASCII is taken, ``spellings``, so most sets of
    characters share the long regex of nearly all escapes)."""
    sources: dict[tuple[int, str | None], int] = {}
    for _, t, _, escaped in moves:
        if escaped is not None and len(escaped) >= MIN_HUB_ESCAPES:
            sources[t, escaped] = sources.get((t, escaped), 0) + 1
    shared = [key for key, count in sources.items() if count >= 2]
    return {key: -3 - i for i, key in enumerate(shared)}


def _spell(ranges: ecma.Ranges) -> str:
    """One character of ``ranges`` in each spelling JSON text gives it (``spellings``)."""
    return spellings.spell_ranges(ranges)


def _join(edges: dict[int, dict[int, str]], into: dict[int, set[int]], source: int, target: int, regex: str) -> None:
    """Add ``regex`` as an alternative on the edge ``source`` -> ``target``."""
    out = edges.setdefault(source, {})
    old = out.get(target)
    if old is None:
        out[target] = _group(regex)
    elif old == "" or regex == "":
        out[target] = f"(?:{old or regex})?"
    elif old != regex:
        out[target] = f"(?:{old}|{regex})"
    into.setdefault(target, set()).add(source)


def _group(regex: str) -> str:
    """``regex`` safe to concatenate: a top-level alternation is wrapped."""
    depth = 0
    escaped = False
    in_class = False
    for char in regex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return f"(?:{regex})"
    return regex


def _minimized(dfa: DFA, accepting: list[bool]) -> tuple[DFA, list[bool]]:
    """The minimal DFA for the same language (Moore's partition refinement): equal
    states are merged, so the regex is written once per distinct future."""
    block = [int(a) for a in accepting]
    count = len(set(block))
    while True:
        number: dict[tuple[int, ...], int] = {}
        refined = [number.setdefault((block[s], *[block[t] for t in row]), len(number)) for s, row in enumerate(dfa.next)]
        if len(number) == count:
            break
        block, count = refined, len(number)
    # renumber so that the start's block is 0
    order = {block[0]: 0}
    for b in block:
        order.setdefault(b, len(order))
    table: list[list[int]] = [[] for _ in order]
    final = [False] * len(order)
    for s, row in enumerate(dfa.next):
        b = order[block[s]]
        if not table[b]:
            table[b] = [order[block[t]] for t in row]
            final[b] = accepting[s]
    return DFA(table, final), final


def _elimination_order(dfa: DFA, useful: list[bool]) -> list[int]:
    """Farthest from the start first: a state's ways on are merged into its
    predecessor's before that one goes, so common prefixes are written once (a
    trie of declared names comes out factored, its shared tail last)."""
    depth = [-1] * len(dfa.next)
    depth[0] = 0
    order = [0]
    for s in order:
        for t in dfa.next[s]:
            if useful[t] and depth[t] < 0:
                depth[t] = depth[s] + 1
                order.append(t)
    return order[::-1]


def count_strings(dfa: DFA, accepting: list[bool], classes: Classes, cap: int) -> int:
    """How many strings ``dfa`` accepts, or ``cap`` when that many or more (a loop
    on a path to an accepting state makes them endless)."""
    useful = _useful(dfa, accepting)
    if not useful[0]:
        return 0
    sizes = [classes.cuts[c + 1] - classes.cuts[c] for c in range(classes.count)]
    ways: dict[int, int] = {}
    on_path: set[int] = set()
    work = [(0, False)]
    while work:  # depth first, each state's count once its successors' are known
        state, done = work.pop()
        if done:
            on_path.discard(state)
            total = int(accepting[state])
            for c, target in enumerate(dfa.next[state]):
                if useful[target]:
                    total = min(cap, total + sizes[c] * ways[target])
            ways[state] = total
            continue
        if state in ways:
            continue
        on_path.add(state)
        work.append((state, True))
        for target in set(dfa.next[state]):
            if useful[target]:
                if target in on_path:
                    return cap  # a loop: endless
                if target not in ways:
                    work.append((target, False))
    return ways[0]


def _useful(dfa: DFA, accepting: list[bool]) -> list[bool]:
    """States reached from the start that can still reach an accepting state."""
    reached = [False] * len(dfa.next)
    reached[0] = True
    work = [0]
    while work:
        for t in dfa.next[work.pop()]:
            if not reached[t]:
                reached[t] = True
                work.append(t)
    distance = _distances(dfa.next, accepting)
    return [reached[s] and distance[s] >= 0 for s in range(len(distance))]

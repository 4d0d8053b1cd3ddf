"""Regex trees to minimal deterministic automata over bytes.

One automaton can recognise several patterns at once (a lexer's terminals): each
state lists the patterns whose text ends there. Each pattern is built on its own:
Thompson's NFA over UTF-8 byte ranges (an intersection inside it is the product of
its operands' automata, spliced in), the subset construction, removal of states
from which the pattern cannot be completed (so a walk stops at the first byte that
rules it out), and Hopcroft's partition refinement to its minimal automaton; the
patterns' automata then run side by side (their product), which is minimal too.
Every step is iterative, and the state counts are bounded by explicit limits.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, pop, vec
from mypy_extensions import i32, i64

from structgen.engine import charset
from structgen.engine.deadline import check_deadline
from structgen.engine.minimize import DEAD as DEAD  # re-exported: what every automaton here writes for "no move"
from structgen.engine.minimize import Part, minimize, minimize_acyclic, trim
from structgen.engine.line_widths import line_width
from structgen.engine.remainders import remainders
from structgen.engine.regex import (
    ALT,
    CHARS,
    CONCAT,
    DIFFERENCE,
    DIVISIBLE,
    EMPTY,
    INTERSECT,
    LAST_LINE_WIDTH,
    REPEAT,
    UNBOUNDED,
    Node,
    RegexError,
)

MAX_NFA_STATES: Final = 1_000_000
MAX_DFA_STATES: Final = 50_000


class AutomatonLimitError(RegexError):
    """An automaton grew past an explicit limit (``MAX_NFA_STATES``/``MAX_DFA_STATES``)."""


class ByteDFA:
    """A deterministic automaton over bytes; state 0 is the start, and no
    transition leads back to it (it stands for "nothing read yet").

    ``table[state * 256 + byte]`` is the next state or ``DEAD``; every state can
    still reach an accepting one. ``accepts[state]`` lists (sorted) the indices of
    the patterns whose text ends in ``state``.
    """

    table: Final[tuple[int, ...]]
    accepts: Final[list[tuple[int, ...]]]
    pattern_states: Final[list[int] | None]

    def __init__(
        self, table: tuple[int, ...], accepts: list[tuple[int, ...]], pattern_states: list[int] | None = None
    ) -> None:
        """``table``: a tuple of ints, which the cyclic collector does not scan;
        ``pattern_states``: each pattern's own minimal automaton's state count,
        where ``build_dfa`` made this one (``views`` tells long patterns by it)."""
        self.table = table
        self.accepts = accepts
        self.pattern_states = pattern_states

    @property
    def state_count(self) -> int:
        return len(self.accepts)

    def run(self, data: bytes, state: int = 0) -> int:
        """The state after ``data`` from ``state``, or ``DEAD``."""
        table = self.table
        for byte in data:
            state = table[state * 256 + byte]
            if state == DEAD:
                return DEAD
        return state

    def matches(self, data: bytes, pattern: int = 0) -> bool:
        """Whether all of ``data`` is a text of ``pattern``."""
        state = self.run(data)
        return state != DEAD and pattern in self.accepts[state]


class _Nfa:
    """Thompson NFA of one pattern: per state, epsilon targets and byte-range edges
    ``(lo, hi, target)``; state 0 is the start, state 1 the one accepting state."""

    def __init__(self) -> None:
        self.epsilon: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        # (end state, byte ranges of a character's last bytes) -> the state reading them into it
        self.tails: dict[tuple[int, ...], int] = {}
        # (end state, a class's code-point ranges) -> its first-byte edges into the tails
        self.lead_edges: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}

    def new_state(self) -> int:
        if len(self.epsilon) >= MAX_NFA_STATES:
            raise AutomatonLimitError(
                f"the automaton needs more than {MAX_NFA_STATES} NFA states (large repetition counts?)"
            )
        self.epsilon.append([])
        self.edges.append([])
        return len(self.epsilon) - 1


_ACCEPTING: Final = 1
"""The NFA state where a pattern's text ends."""


class _Task:
    """Build ``node`` between NFA states ``start`` and ``end`` (a work-list item)."""

    def __init__(self, node: Node, start: int, end: int) -> None:
        self.node = node
        self.start = start
        self.end = end


def _build_nfa(node: Node, max_states: int) -> _Nfa:
    nfa = _Nfa()
    start = nfa.new_state()
    end = nfa.new_state()
    _build_pattern(nfa, [_Task(node, start, end)], max_states)
    return nfa


def _build_pattern(nfa: _Nfa, tasks: list[_Task], max_states: int) -> None:
    """Run the work list of one pattern to the end.

    The tail of a concatenation is built once per (tail, state it leads to): a
    state that reads node ``n`` and then goes on into state ``f`` is shared by every
    concatenation that ends that way. Patterns such as "any string but these keys"
    repeat one loop at the end of every branch; without the sharing each branch's
    copy is a different NFA state, and the subset construction multiplies the
    automaton by their number before minimization merges them again."""
    keys = _node_keys(tasks[0].node) if tasks else {}
    tails: dict[tuple[int, int], int] = {}  # (node key, following state) -> state that reads the node into it
    while tasks:
        task = tasks.pop()
        node, start, end = task.node, task.start, task.end
        kind = node.kind
        if kind == EMPTY:
            nfa.epsilon[start].append(end)
        elif kind == CHARS:
            _add_chars(nfa, node.ranges, start, end)
        elif kind == CONCAT:
            children = node.children
            following = end
            for i in range(len(children) - 1, 0, -1):
                child = children[i]
                tail = (keys[id(child)], following)
                state = tails.get(tail, -1)
                if state < 0:
                    state = nfa.new_state()
                    tails[tail] = state
                    tasks.append(_Task(child, state, following))
                following = state
            tasks.append(_Task(children[0], start, following))
        elif kind == ALT:
            for child in node.children:
                tasks.append(_Task(child, start, end))
        elif kind == REPEAT:
            _add_repeat(nfa, tasks, node, start, end)
        elif kind == INTERSECT or kind == DIFFERENCE:
            _add_part(nfa, _intersection(node.children, max_states, kind == DIFFERENCE), start, end)
        elif kind == DIVISIBLE:
            _add_part(nfa, _divisible(node, max_states), start, end)
        elif kind == LAST_LINE_WIDTH:
            _add_part(nfa, _last_line_width(node, max_states), start, end)
        else:
            raise RegexError(f"unknown regex node kind {kind}")


Shape = tuple[int, int, int, tuple[int, ...], tuple[int, ...]]
"""A regex node's kind, bounds, ranges and its children's numbers."""


def _node_keys(root: Node, interned: dict[Shape, int] | None = None) -> dict[int, int]:
    """A number per node of ``root``'s tree (by ``id``), equal for equal subtrees
    (and for equal subtrees of other trees numbered with the same ``interned``)."""
    keys: dict[int, int] = {}
    if interned is None:
        interned = {}
    pending: list[tuple[Node, bool]] = [(root, False)]
    while pending:
        node, expanded = pending.pop()
        if id(node) in keys:
            continue
        if not expanded:
            pending.append((node, True))
            for child in node.children:
                if id(child) not in keys:
                    pending.append((child, False))
            continue
        shape = (node.kind, node.low, node.high, tuple(node.ranges), tuple([keys[id(c)] for c in node.children]))
        keys[id(node)] = interned.setdefault(shape, len(interned))
    return keys


def _add_chars(nfa: _Nfa, ranges: tuple[int, ...], start: int, end: int) -> None:
    """Edges spelling each character of ``ranges`` in UTF-8, from ``start`` to ``end``.

    Sequences share the states of equal tails (``E1-EC 80-BF 80-BF`` and
    ``EE-EF 80-BF 80-BF`` one ``80-BF 80-BF`` path), within a class and across the
    classes that lead to the same state (the branches of an alternation): the
    language is the same, and the subset construction no longer tells apart states
    that differ only by which lead byte was read, which for wide classes under
    counters multiplied the automaton before minimization. The lead edges of a
    class into a state are made once and copied to every start that reads it."""
    key = (end, *ranges)
    edges = nfa.lead_edges.get(key)
    if edges is None:
        edges = _lead_edges(nfa, ranges, end)
        nfa.lead_edges[key] = edges
    nfa.edges[start].extend(edges)


def _lead_edges(nfa: _Nfa, ranges: tuple[int, ...], end: int) -> list[tuple[int, int, int]]:
    """The first-byte edges of ``ranges``' characters, into the states that read
    the rest of each character to ``end`` (made as needed)."""
    edges: list[tuple[int, int, int]] = []
    for i in range(0, len(ranges), 2):
        for sequence in charset.utf8_sequences(ranges[i], ranges[i + 1]):
            following = end
            for k in range(len(sequence) - 2, 0, -2):
                tail = (end, *sequence[k:])
                state = nfa.tails.get(tail, -1)
                if state < 0:
                    state = nfa.new_state()
                    nfa.edges[state].append((sequence[k], sequence[k + 1], following))
                    nfa.tails[tail] = state
                following = state
            edges.append((sequence[0], sequence[1], following))
    return edges


def _add_repeat(nfa: _Nfa, tasks: list[_Task], node: Node, start: int, end: int) -> None:
    child = node.children[0]
    current = start
    for _ in range(node.low):
        following = nfa.new_state()
        tasks.append(_Task(child, current, following))
        current = following
    if node.high == UNBOUNDED:
        loop = nfa.new_state()
        nfa.epsilon[current].append(loop)
        body_end = nfa.new_state()
        tasks.append(_Task(child, loop, body_end))
        nfa.epsilon[body_end].append(loop)
        nfa.epsilon[loop].append(end)
        return
    for _ in range(node.high - node.low):
        following = nfa.new_state()
        nfa.epsilon[current].append(end)
        tasks.append(_Task(child, current, following))
        current = following
    nfa.epsilon[current].append(end)


def _intersection(nodes: tuple[Node, ...], max_states: int, subtract_last: bool = False) -> Part:
    """The automaton of the texts of every pattern of ``nodes``: the subset
    construction of their NFAs side by side, a state accepting where all of them
    do, trimmed (minimizing is left to the pattern the intersection is part of).
    With ``subtract_last``, the texts of the last pattern are taken out instead:
    where it has no move its set is empty and the others go on, and a state
    accepts only where it does not.

    Side by side, only the pairs of states some text reaches are built: a length
    bound (``"(?:char){0,255}"``, thousands of states on its own for every escape and
    UTF-8 sequence) costs little beside a pattern that has few of them."""
    return _side_by_side([_build_nfa(node, max_states) for node in nodes], max_states, subtract_last)


def _divisible(node: Node, max_states: int) -> Part:
    """The texts of a ``DIVISIBLE`` node's body whose digits before any ``e``/``E``
    make a multiple of its divisor: the body side by side with ``remainders.remainders``."""
    counter = _Nfa()
    _add_part(counter, remainders(node.low), counter.new_state(), counter.new_state())
    return _side_by_side([_build_nfa(node.children[0], max_states), counter], max_states, False)


def _last_line_width(node: Node, max_states: int) -> Part:
    """The texts of a ``LAST_LINE_WIDTH`` node's body whose last line is its
    width: the body side by side with ``line_widths.line_width``."""
    counter = _Nfa()
    width, at_least = (node.low, False) if node.low >= 0 else (-node.low - 1, True)
    _add_part(counter, line_width(width, node.high, at_least), counter.new_state(), counter.new_state())
    return _side_by_side([_build_nfa(node.children[0], max_states), counter], max_states, False)


def _side_by_side(nfas: list[_Nfa], max_states: int, subtract_last: bool) -> Part:
    """``_intersection`` of automata already built."""
    subtracted = len(nfas) - 1 if subtract_last else -1
    bound_set: set[int] = set()
    for nfa in nfas:
        bound_set.update(_edge_bounds(nfa))
    bounds = sorted(bound_set)
    classes = len(bounds) - 1
    class_of = _classes_of_bytes(bounds)
    class_edges = [
        [[(class_of[lo], class_of[hi], target) for lo, hi, target in edges] for edges in nfa.edges] for nfa in nfas
    ]
    closures: list[dict[tuple[int, ...], tuple[int, ...]]] = [{} for _ in nfas]  # per NFA: targets -> closure
    targets: list[list[list[int]]] = [[[] for _ in range(classes)] for _ in nfas]  # refilled for each state
    start = tuple([_closure(nfa, [0]) for nfa in nfas])
    index_of: dict[tuple[tuple[int, ...], ...], int] = {start: 0}
    order = [start]
    table: list[int] = []
    position = 0
    while position < len(order):
        current = order[position]
        position += 1
        if position & 255 == 0:
            check_deadline()
        for k in range(len(nfas)):
            moved_on = targets[k]
            for state in current[k]:
                for lo, hi, target in class_edges[k][state]:
                    for c in range(lo, hi + 1):
                        moved_on[c].append(target)
        for c in range(classes):
            following: list[tuple[int, ...]] = []
            for k, nfa in enumerate(nfas):
                moved = tuple(targets[k][c])
                if not moved:
                    if k == subtracted:
                        following.append(())  # the subtracted pattern matches no text that goes on so
                        continue
                    break
                closed = closures[k].get(moved)
                if closed is None:
                    closed = _closure(nfa, list(moved))
                    closures[k][moved] = closed
                following.append(closed)
            if len(following) < len(nfas):
                table.append(DEAD)
                continue
            key = tuple(following)
            known = index_of.get(key, DEAD)
            if known == DEAD:
                if len(order) >= max_states:
                    raise AutomatonLimitError(f"the automaton needs more than {max_states} DFA states")
                known = len(order)
                index_of[key] = known
                order.append(key)
            table.append(known)
        for moved_on in targets:
            for bucket in moved_on:
                bucket.clear()
    accepting = [all((_ACCEPTING in subset) != (k == subtracted) for k, subset in enumerate(state)) for state in order]
    table, accepting = trim(table, classes, accepting)
    return Part(table, classes, class_of, accepting)


def _add_part(nfa: _Nfa, part: Part, start: int, end: int) -> None:
    """``part``'s automaton between ``start`` and ``end``: a state per state, an edge
    per run of bytes that moves alike, and an empty move to ``end`` from each
    accepting state."""
    runs: list[tuple[int, int, int]] = []  # (first byte, last byte, class) of each run of one class
    for byte in range(256):
        c = part.class_of[byte]
        if runs and runs[-1][2] == c:
            runs[-1] = (runs[-1][0], byte, c)
        else:
            runs.append((byte, byte, c))
    states = [nfa.new_state() for _ in part.accepting]
    nfa.epsilon[start].append(states[0])
    for state, own in enumerate(states):
        row = state * part.classes
        for lo, hi, c in runs:
            target = part.table[row + c]
            if target != DEAD:
                nfa.edges[own].append((lo, hi, states[target]))
        if part.accepting[state]:
            nfa.epsilon[own].append(end)


def _edge_bounds(nfa: _Nfa) -> list[int]:
    """0, 256, and every byte where some edge's range starts or ends after: the
    alphabet's classes for the subset construction."""
    bounds = {0, 256}
    for edges in nfa.edges:
        for lo, hi, _ in edges:
            bounds.add(lo)
            bounds.add(hi + 1)
    return sorted(bounds)


def _closure(nfa: _Nfa, states: list[int]) -> tuple[int, ...]:
    seen = set(states)
    pending = list(states)
    while pending:
        state = pending.pop()
        for target in nfa.epsilon[state]:
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return tuple(sorted(seen))


class PatternCache:
    """Each pattern's own minimal automaton (``_pattern_dfa``), by the pattern's
    shape and whether it stops at its first match. A lexer keeps the cache its
    automaton was built with, so that the automaton of some of its terminals (a
    view, ``views``) is only their product: the subset construction of a long
    string, most of such a build, is not done again inside a step. Grammars may
    share one (``structgen.pattern_caches``): most terminals of JSON Schema
    grammars recur."""

    def __init__(self) -> None:
        self._shapes: dict[Shape, int] = {}
        self._parts: dict[tuple[int, bool], Part] = {}
        self.entries = 0  # the size of what is held: the parts' table entries and the shapes

    def __len__(self) -> int:
        """The patterns' automata held."""
        return len(self._parts)

    def part(self, node: Node, stop: bool, max_states: int) -> Part:
        shapes = len(self._shapes)
        key = (self._shape(node), stop)
        found = self._parts.get(key)
        if found is None:
            found = _pattern_dfa(node, stop, max_states)
            self._parts[key] = found
            self.entries += len(found.table)
        self.entries += len(self._shapes) - shapes
        return found

    def _shape(self, root: Node) -> int:
        """A number for ``root``'s tree, equal for equal trees in every call (the
        ids ``_node_keys`` goes by hold for one call only: they are reused after a
        tree is freed)."""
        return _node_keys(root, self._shapes)[id(root)]


def build_dfa(
    nodes: list[Node],
    max_states: int = MAX_DFA_STATES,
    shortest: list[bool] | None = None,
    cache: PatternCache | None = None,
) -> ByteDFA:
    """The minimal byte automaton recognising every pattern of ``nodes`` at once.

    A pattern marked in ``shortest`` stops at its first match: once it has
    matched, it cannot be extended (``".*?"`` ends at the first closing quote, as
    Python's ``re.match`` ends it, instead of at the last one on the line).
    More than ``max_states`` states (of one pattern's subset construction, or of
    the whole automaton) is an ``AutomatonLimitError``.

    Each pattern gets its own minimal automaton first, and the whole one is their
    product. That product is already minimal: its states hold one state per
    pattern still possible, two of them accept the same texts only if every
    pattern's part does, and a minimal automaton has no two such states. Built over
    all patterns at once, the subset construction made several times as many states
    (one per way the patterns' NFA states combine) for Hopcroft to merge again.
    States are numbered in the order a breadth-first walk over the bytes meets
    them, as minimizing the automaton of all patterns at once numbered them.
    """
    table, accepts, pattern_states = _automaton(nodes, max_states, shortest, 0, cache)
    return ByteDFA(tuple(table), [tuple(labels) for labels in accepts], pattern_states)


def build_region(
    nodes: list[Node], shift: int, max_states: int, shortest: list[bool] | None, cache: PatternCache | None
) -> tuple[tuple[int, ...], list[list[int]]]:
    """``build_dfa``'s table and accepts with every target numbered ``shift``
    higher: states to join after ``shift`` others (``Lexer.joined``) as they are,
    without a pass over the table to renumber it."""
    table, accepts, _ = _automaton(nodes, max_states, shortest, shift, cache)
    return tuple(table), accepts


def _automaton(
    nodes: list[Node], max_states: int, shortest: list[bool] | None, shift: int, cache: PatternCache | None
) -> tuple[list[int], list[list[int]], list[int]]:
    """``build_dfa``'s table and accepts, every target but ``DEAD`` numbered ``shift``
    higher (where a gap spliced in front will put it), and each pattern's own
    state count (past the gap)."""
    gap = _shared_gap(nodes)
    if gap is not None:
        chain = 1 if gap.high == UNBOUNDED else gap.high
        table, accepts, pattern_states = _automaton(gap.rests, max_states, shortest, shift + chain, cache)
        if _can_splice(gap, table, accepts):
            table, accepts = _splice_gap(gap, chain, shift, table, accepts, max_states)
            return table, accepts, pattern_states
    stops = [shortest is not None and shortest[i] for i in range(len(nodes))]
    if cache is None:
        parts = [_pattern_dfa(node, stops[i], max_states) for i, node in enumerate(nodes)]
    else:
        parts = [cache.part(node, stops[i], max_states) for i, node in enumerate(nodes)]
    table, accepts = _product(parts, max_states, shift)
    return table, accepts, [len(part.accepting) for part in parts]


def _pattern_dfa(node: Node, stop: bool, max_states: int) -> Part:
    """The minimal automaton of one pattern (ending at its first match if ``stop``)."""
    direct = _byte_chain(node)
    if direct is not None:
        return direct
    if node.kind in (INTERSECT, DIFFERENCE, LAST_LINE_WIDTH, DIVISIBLE) and not stop:
        # deterministic and trimmed already: a subset construction again was a fifth of
        # Python's lexer, whose newline is a pattern per width (a body beside a counter)
        part = (_last_line_width(node, max_states) if node.kind == LAST_LINE_WIDTH else _divisible(node, max_states)
                if node.kind == DIVISIBLE else _intersection(node.children, max_states, node.kind == DIFFERENCE))
        table, accepting, class_of = list(part.table), list(part.accepting), list(part.class_of)
        acyclic = minimize_acyclic(table, part.classes, accepting, class_of)
        return acyclic if acyclic is not None else minimize(table, part.classes, accepting, class_of)
    nfa = _build_nfa(node, max_states)
    bounds = _edge_bounds(nfa)  # bytes between two bounds move alike in every state
    classes = len(bounds) - 1
    class_of = _classes_of_bytes(bounds)
    table, accepting = _determinize(nfa, classes, class_of, stop, max_states)
    table, accepting = trim(table, classes, accepting)
    acyclic = minimize_acyclic(table, classes, accepting, class_of)
    return acyclic if acyclic is not None else minimize(table, classes, accepting, class_of)


def _byte_chain(node: Node) -> Part | None:
    """The minimal automaton of a pattern that is a sequence of sets of single-byte
    characters (a keyword, a key in quotes, a punctuation mark), written down
    directly; None for any other pattern. Its states are the positions in the
    sequence, all needed: from each, the texts left have a length of their own."""
    steps: list[Node] = []
    pending = [node]
    while pending:
        item = pending.pop()
        if item.kind == CONCAT:
            pending.extend(reversed(item.children))
        elif item.kind == CHARS and item.ranges and item.ranges[-1] < 0x80:
            steps.append(item)
        else:
            return None
    bound_set = {0, 256}
    for step in steps:
        for i in range(0, len(step.ranges), 2):
            bound_set.add(step.ranges[i])
            bound_set.add(step.ranges[i + 1] + 1)
    bounds = sorted(bound_set)
    classes = len(bounds) - 1
    class_of = _classes_of_bytes(bounds)
    table = [DEAD] * ((len(steps) + 1) * classes)
    for position, step in enumerate(steps):
        for i in range(0, len(step.ranges), 2):
            for c in range(class_of[step.ranges[i]], class_of[step.ranges[i + 1]] + 1):
                table[position * classes + c] = position + 1
    return Part(table, classes, class_of, [False] * len(steps) + [True])


def _classes_of_bytes(bounds: list[int]) -> list[int]:
    """Per byte, the class it falls in: class ``c`` is ``bounds[c] .. bounds[c + 1] - 1``."""
    class_of = [0] * 256
    for c in range(len(bounds) - 1):
        for byte in range(bounds[c], bounds[c + 1]):
            class_of[byte] = c
    return class_of


def _determinize(
    nfa: _Nfa, classes: int, class_of: list[int], stop: bool, max_states: int
) -> tuple[list[int], list[bool]]:
    """The subset construction over byte classes: ``classes`` targets per state, and
    per state whether the pattern's text ends there."""
    class_edges: list[list[tuple[int, int, int]]] = [
        [(class_of[lo], class_of[hi], target) for lo, hi, target in edges] for edges in nfa.edges
    ]
    start = _closure(nfa, [0])
    index_of: dict[tuple[int, ...], int] = {start: 0}
    subsets: list[tuple[int, ...]] = [start]
    state_of_targets: dict[tuple[int, ...], int] = {}  # NFA states a class moves to -> the DFA state
    targets: list[list[int]] = [[] for _ in range(classes)]  # per class, refilled for each subset
    table: list[int] = []
    position = 0
    while position < len(subsets):
        subset = subsets[position]
        position += 1
        if position & 255 == 0:
            check_deadline()  # a compile under a time limit stops here (engine/deadline.py)
        for state in subset:
            for lo, hi, target in class_edges[state]:
                for c in range(lo, hi + 1):
                    targets[c].append(target)
        previous: list[int] = []
        known = DEAD
        for c in range(classes):
            moved = targets[c]
            if moved != previous:  # neighbouring classes mostly move alike
                key = tuple(moved)
                known = state_of_targets.get(key, DEAD)
                if known == DEAD:
                    known = _subset_state(nfa, moved, stop, index_of, subsets, max_states)
                    state_of_targets[key] = known
                previous = moved
            table.append(known)
        for moved in targets:
            moved.clear()
    return table, [_ACCEPTING in subset for subset in subsets]


def _subset_state(
    nfa: _Nfa, moved: list[int], stop: bool, index_of: dict[tuple[int, ...], int], subsets: list[tuple[int, ...]],
    max_states: int,
) -> int:
    """The DFA state of the closure of ``moved`` (new if unseen), or ``DEAD`` for none;
    a pattern that stops at its first match keeps only its accepting state."""
    if not moved:
        return DEAD
    following = _closure(nfa, moved)
    if stop and _ACCEPTING in following:
        following = (_ACCEPTING,)
    known = index_of.get(following, DEAD)
    if known == DEAD:
        if len(subsets) >= max_states:
            raise AutomatonLimitError(f"the automaton needs more than {max_states} DFA states")
        known = len(subsets)
        index_of[following] = known
        subsets.append(following)
    return known


def _product(parts: list[Part], max_states: int, shift: int) -> tuple[list[int], list[list[int]]]:
    """The automaton running every part at once: a state is the parts' states (one
    per pattern still possible), and it accepts the patterns of its accepting ones.

    The bytes are walked in ``cuts``, the classes every part agrees on; the parts'
    states are numbered one after another, and ``moves`` holds their targets on
    each cut side by side. Targets in the table are numbered ``shift`` higher."""
    cuts = _common_cuts(parts)
    width = i64(len(cuts) - 1)
    moves = vec[i32]()
    label: list[int] = []  # per part state: its pattern if it accepts, else -1
    start: list[int] = []
    for index, part in enumerate(parts):
        base = len(label)
        start.append(base)
        columns = [part.class_of[cuts[c]] for c in range(width)]
        for state in range(len(part.accepting)):
            row = state * part.classes
            for column in columns:
                target = part.table[row + column]
                moves = append(moves, i32(DEAD if target == DEAD else target + base))
            label.append(index if part.accepting[state] else -1)
    states = _ProductStates(len(label), max_states)
    states.add(tuple(start))
    table: list[int] = []
    position = 0
    while position < len(states.subsets):
        subset = states.subsets[position]
        position += 1
        if position & 255 == 0:
            check_deadline()
        alone = len(subset) == 1  # one pattern left, as in most states: no tuples to build
        row = i64(subset[0]) * width if alone else 0
        previous: list[int] = []
        known = DEAD
        run_known = DEAD  # the row is written in runs of bytes with one target
        run_start = 0
        for c in range(width):
            if alone:
                target = i64(moves[row + c])
                known = DEAD if target == DEAD else states.alone(target) + shift
            else:
                moved: list[int] = []
                for state in subset:
                    target = i64(moves[i64(state) * width + c])
                    if target != DEAD:
                        moved.append(target)
                if not moved:
                    known = DEAD
                elif moved != previous:
                    known = states.of(tuple(moved)) + shift
                previous = moved
            if known != run_known:
                table.extend([run_known] * (cuts[c] - run_start))
                run_known = known
                run_start = cuts[c]
        table.extend([run_known] * (256 - run_start))
    accepts = [[label[state] for state in subset if label[state] >= 0] for subset in states.subsets]
    return table, accepts


class _ProductStates:
    """The product's states so far: tuples of part states, numbered as met."""

    def __init__(self, part_states: int, max_states: int) -> None:
        self.subsets: list[tuple[int, ...]] = []
        self.index_of: dict[tuple[int, ...], int] = {}
        self.single = vec[i32]([i32(DEAD) for _ in range(part_states)])  # per part state: the product state of it alone
        self.max_states = max_states

    def of(self, subset: tuple[int, ...]) -> int:
        known = self.index_of.get(subset, DEAD)
        return known if known != DEAD else self.add(subset)

    def alone(self, part_state: i64) -> int:
        known = int(self.single[part_state])
        return known if known != DEAD else self.add((int(part_state),))

    def add(self, subset: tuple[int, ...]) -> int:
        if len(self.subsets) >= self.max_states:
            raise AutomatonLimitError(f"the automaton needs more than {self.max_states} DFA states")
        known = len(self.subsets)
        self.index_of[subset] = known
        self.subsets.append(subset)
        if len(subset) == 1:
            self.single[subset[0]] = i32(known)
        return known


def _common_cuts(parts: list[Part]) -> list[int]:
    """0, 256, and every byte whose class differs from the byte before's in some part."""
    cut_set = {0, 256}
    for part in parts:
        class_of = part.class_of
        for byte in range(1, 256):
            if class_of[byte] != class_of[byte - 1]:
                cut_set.add(byte)
    return sorted(cut_set)


class _Gap:
    """A run of one set of single-byte characters that every pattern starts with:
    ``low``..``high`` (``UNBOUNDED``) times, then the pattern's ``rests``."""

    def __init__(self, byte_set: list[bool], high: int, rests: list[Node]) -> None:
        self.byte_set = byte_set
        self.high = high
        self.rests = rests


def _shared_gap(nodes: list[Node]) -> _Gap | None:
    """The optional run every pattern starts with (the whitespace a JSON Schema
    grammar allows before each token), if they share one.

    Built into the patterns, the run is one NFA chain per pattern, and the subset
    construction steps every chain in parallel; spliced in front of the
    automaton of the rests (``_splice_gap``), it costs one state per repetition."""
    first: Node | None = None
    rests: list[Node] = []
    for node in nodes:
        if node.kind != CONCAT or len(node.children) < 2:
            return None
        run = node.children[0]
        if run.kind != REPEAT or run.low != 0 or run.high == 0 or run.children[0].kind != CHARS:
            return None
        ranges = run.children[0].ranges
        if not ranges or ranges[-1] >= 0x80:  # single-byte characters only
            return None
        if first is None:
            first = run
        elif run.high != first.high or ranges != first.children[0].ranges:
            return None
        rests.append(Node(CONCAT, [], list(node.children[1:])) if len(node.children) > 2 else node.children[1])
    if first is None:
        return None
    byte_set = [False] * 256
    ranges = first.children[0].ranges
    for i in range(0, len(ranges), 2):
        for byte in range(ranges[i], ranges[i + 1] + 1):
            byte_set[byte] = True
    return _Gap(byte_set, first.high, rests)


def _can_splice(gap: _Gap, table: list[int], accepts: list[list[int]]) -> bool:
    """Whether the gap's run can go in front of the rests' automaton: no rest can
    itself start with a byte of the run, or be empty (the run would then not be
    where a pattern's text starts)."""
    for byte in range(256):
        if gap.byte_set[byte] and table[byte] != DEAD:
            return False
    return not accepts[0]


def _splice_gap(
    gap: _Gap, chain: int, shift: int, table: list[int], accepts: list[list[int]], max_states: int
) -> tuple[list[int], list[list[int]]]:
    """The rests' automaton (``table``, its targets already ``chain`` higher) with
    ``gap``'s run in front: ``chain`` states after the start that move as the start
    does on every other byte. Targets are numbered ``shift`` higher."""
    if len(accepts) + chain > max_states:
        raise AutomatonLimitError(f"the automaton needs more than {max_states} DFA states")
    run_bytes = [byte for byte in range(256) if gap.byte_set[byte]]
    rows: list[int] = []
    for state in range(chain + 1):  # the start, then the run's states 1..chain
        following = state + 1 if state < chain else (chain if gap.high == UNBOUNDED else DEAD)
        row = table[:256]
        for byte in run_bytes:
            row[byte] = DEAD if following == DEAD else following + shift
        rows.extend(row)
    table[:256] = rows
    return table, [[] for _ in range(chain + 1)] + accepts[1:]

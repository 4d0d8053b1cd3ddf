"""Regex trees to minimal deterministic automata over bytes.

One automaton can recognise several patterns at once (a lexer's terminals): each
state lists the patterns whose text ends there. Construction is Thompson's NFA
over UTF-8 byte ranges, the subset construction, removal of states from which no
pattern can be completed (so a walk stops at the first byte that rules out every
pattern), and Hopcroft's partition refinement to the minimal automaton. Every step
is iterative, and the state counts are bounded by explicit limits.
"""

from __future__ import annotations

from typing import Final

from structgen.engine import charset
from structgen.engine.deadline import check_deadline
from structgen.engine.regex import ALT, CHARS, CONCAT, EMPTY, REPEAT, UNBOUNDED, Node, RegexError
DEAD: Final = -1
"""Transition-table entry for "no transition" (the automaton rejects)."""

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
    accepts: Final[list[list[int]]]

    def __init__(self, table: list[int], accepts: list[list[int]]) -> None:
        self.table = tuple(table)  # a tuple of ints: the cyclic collector stops scanning it
        self.accepts = accepts

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
    """Thompson NFA: per state, epsilon targets and byte-range edges ``(lo, hi, target)``."""

    def __init__(self) -> None:
        self.epsilon: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.accept_of: list[int] = []  # pattern index accepted in the state, or -1
        self.owner: list[int] = []  # pattern index the state was built for (-1: the shared start)
        self.building = -1  # the pattern new states belong to

    def new_state(self) -> int:
        if len(self.epsilon) >= MAX_NFA_STATES:
            raise AutomatonLimitError(
                f"the automaton needs more than {MAX_NFA_STATES} NFA states (large repetition counts?)"
            )
        self.epsilon.append([])
        self.edges.append([])
        self.accept_of.append(-1)
        self.owner.append(self.building)
        return len(self.epsilon) - 1


class _Task:
    """Build ``node`` between NFA states ``start`` and ``end`` (a work-list item)."""

    def __init__(self, node: Node, start: int, end: int) -> None:
        self.node = node
        self.start = start
        self.end = end


def _build_nfa(nodes: list[Node]) -> _Nfa:
    nfa = _Nfa()
    start = nfa.new_state()
    tasks: list[_Task] = []
    for index, node in enumerate(nodes):
        nfa.building = index
        end = nfa.new_state()
        nfa.accept_of[end] = index
        tasks.append(_Task(node, start, end))
        _build_pattern(nfa, tasks)
    return nfa


def _build_pattern(nfa: _Nfa, tasks: list[_Task]) -> None:
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
        else:
            raise RegexError(f"unknown regex node kind {kind}")


def _node_keys(root: Node) -> dict[int, int]:
    """A number per node of ``root``'s tree (by ``id``), equal for equal subtrees."""
    keys: dict[int, int] = {}
    interned: dict[tuple[int, int, int, tuple[int, ...], tuple[int, ...]], int] = {}
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


def _add_chars(nfa: _Nfa, ranges: list[int], start: int, end: int) -> None:
    """Edges spelling each character of ``ranges`` in UTF-8, from ``start`` to ``end``.

    Sequences share the states of equal tails (``E1-EC 80-BF 80-BF`` and
    ``EE-EF 80-BF 80-BF`` one ``80-BF 80-BF`` path): the language is the same, and
    the subset construction no longer tells apart states that differ only by which
    lead byte was read, which for wide classes under counters multiplied the
    automaton before minimization."""
    tails: dict[tuple[int, ...], int] = {}  # remaining byte ranges -> the state that reads them to ``end``
    for i in range(0, len(ranges), 2):
        for sequence in charset.utf8_sequences(ranges[i], ranges[i + 1]):
            following = end
            for k in range(len(sequence) - 2, 0, -2):
                key = tuple(sequence[k:])
                state = tails.get(key, -1)
                if state < 0:
                    state = nfa.new_state()
                    nfa.edges[state].append((sequence[k], sequence[k + 1], following))
                    tails[key] = state
                following = state
            nfa.edges[start].append((sequence[0], sequence[1], following))


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


def _stop_matched(nfa: _Nfa, subset: tuple[int, ...], shortest: list[bool]) -> tuple[int, ...]:
    """``subset`` without the states of shortest-match patterns that have matched
    (their accepting state is kept, so they still end here)."""
    matched = {nfa.accept_of[s] for s in subset if nfa.accept_of[s] >= 0 and shortest[nfa.accept_of[s]]}
    if not matched:
        return subset
    return tuple(s for s in subset if nfa.owner[s] not in matched or nfa.accept_of[s] >= 0)


def build_dfa(nodes: list[Node], max_states: int = MAX_DFA_STATES, shortest: list[bool] | None = None) -> ByteDFA:
    """The minimal byte automaton recognising every pattern of ``nodes`` at once.

    A pattern marked in ``shortest`` stops at its first match: once it has
    matched, it cannot be extended (``".*?"`` ends at the first closing quote, as
    Python's ``re.match`` ends it, instead of at the last one on the line).
    More than ``max_states`` subset states is an ``AutomatonLimitError``.
    """
    gap = _shared_gap(nodes)
    if gap is not None:
        spliced = _splice_gap(gap, build_dfa(gap.rests, max_states, shortest), max_states)
        if spliced is not None:
            return spliced
    nfa = _build_nfa(nodes)
    stops = shortest if shortest is not None and any(shortest) else None
    start = _closure(nfa, [0])
    index_of: dict[tuple[int, ...], int] = {start: 0}
    subsets: list[tuple[int, ...]] = [start]
    bounds = _edge_bounds(nfa)  # bytes between two bounds move alike in every state
    classes = len(bounds) - 1
    class_of = [0] * 256
    for c in range(classes):
        for byte in range(bounds[c], bounds[c + 1]):
            class_of[byte] = c
    table: list[int] = []  # per state, the target of each byte class
    position = 0
    while position < len(subsets):
        subset = subsets[position]
        position += 1
        if position & 255 == 0:
            check_deadline()  # a compile under a time limit stops here (engine/deadline.py)
        targets: list[list[int]] = [[] for _ in range(classes)]
        for state in subset:
            for lo, hi, target in nfa.edges[state]:
                for c in range(class_of[lo], class_of[hi] + 1):
                    targets[c].append(target)
        seen_targets: dict[tuple[int, ...], int] = {}  # classes of one range share targets
        for c in range(classes):
            if not targets[c]:
                table.append(DEAD)
                continue
            key = tuple(targets[c])
            known = seen_targets.get(key, DEAD)
            if known == DEAD:
                following = _closure(nfa, targets[c])
                if stops is not None:
                    following = _stop_matched(nfa, following, stops)
                known = index_of.get(following, DEAD)
                if known == DEAD:
                    if len(subsets) >= max_states:
                        raise AutomatonLimitError(f"the automaton needs more than {max_states} DFA states")
                    known = len(subsets)
                    index_of[following] = known
                    subsets.append(following)
                seen_targets[key] = known
            table.append(known)
    accepts = [sorted({nfa.accept_of[s] for s in subset if nfa.accept_of[s] >= 0}) for subset in subsets]
    table, accepts = _trim(table, classes, accepts)
    return _minimize(table, classes, accepts, class_of)


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
        rests.append(Node(CONCAT, [], node.children[1:]) if len(node.children) > 2 else node.children[1])
    if first is None:
        return None
    byte_set = [False] * 256
    ranges = first.children[0].ranges
    for i in range(0, len(ranges), 2):
        for byte in range(ranges[i], ranges[i + 1] + 1):
            byte_set[byte] = True
    return _Gap(byte_set, first.high, rests)


def _splice_gap(gap: _Gap, rests: ByteDFA, max_states: int) -> ByteDFA | None:
    """``rests`` with ``gap``'s run in front: a chain of states after the start
    that moves as the start does on every other byte. None when a rest could
    itself start with a byte of the run, or be empty (the run would then not be
    where a pattern's text starts)."""
    table = rests.table
    for byte in range(256):
        if gap.byte_set[byte] and table[byte] != DEAD:
            return None
    if rests.accepts[0]:
        return None
    chain = 1 if gap.high == UNBOUNDED else gap.high
    count = rests.state_count + chain
    if count > max_states:
        raise AutomatonLimitError(f"the automaton needs more than {max_states} DFA states")
    shifted = [DEAD if target == DEAD else target + chain for target in table]
    run_bytes = [byte for byte in range(256) if gap.byte_set[byte]]
    new_table: list[int] = []
    for state in range(chain + 1):  # the start, then the run's states 1..chain
        following = state + 1 if state < chain else (chain if gap.high == UNBOUNDED else DEAD)
        row = shifted[:256]
        for byte in run_bytes:
            row[byte] = following
        new_table.extend(row)
    new_table.extend(shifted[256:])
    accepts: list[list[int]] = [[] for _ in range(chain + 1)] + rests.accepts[1:]
    return ByteDFA(new_table, accepts)


def can_reach(table: list[int], width: int, targets: list[bool]) -> list[bool]:
    """For each state of ``table`` (``width`` targets per state), whether some
    state marked in ``targets`` is reachable from it (itself included): a
    backward search over the transitions."""
    count = len(targets)
    predecessors: list[list[int]] = [[] for _ in range(count)]
    for state in range(count):
        row = state * width
        for column in range(width):
            target = table[row + column]
            if target != DEAD:
                predecessors[target].append(state)
    marked = list(targets)
    pending = [state for state in range(count) if marked[state]]
    while pending:
        state = pending.pop()
        for previous in predecessors[state]:
            if not marked[previous]:
                marked[previous] = True
                pending.append(previous)
    return marked


def _trim(table: list[int], classes: int, accepts: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop states that cannot reach an accepting state, renumbering the rest
    (``table``: ``classes`` targets per state).

    The start state stays state 0 even when it is useless (then it has no moves).
    """
    count = len(accepts)
    useful = can_reach(table, classes, [bool(labels) for labels in accepts])
    useful[0] = True
    if all(useful):  # the usual case: nothing to drop, nothing to renumber
        return table, accepts
    renumber = [DEAD] * count
    kept = 0
    for state in range(count):
        if useful[state]:
            renumber[state] = kept
            kept += 1
    new_table: list[int] = []
    new_accepts: list[list[int]] = []
    for state in range(count):
        if useful[state]:
            for c in range(classes):
                target = table[state * classes + c]
                new_table.append(DEAD if target == DEAD else renumber[target])
            new_accepts.append(accepts[state])
    return new_table, new_accepts


def _minimize(table: list[int], classes: int, accepts: list[list[int]], class_of: list[int]) -> ByteDFA:
    """Hopcroft's partition refinement, O(k n log n) for k byte classes, on flat
    arrays: each block is a contiguous run of ``elements``, and the states a
    splitter reaches are moved to the front of their block, so a split is a cut.

    ``table`` has ``classes`` targets per state, ``class_of`` maps bytes to
    classes. A sink state (index ``count``) stands for ``DEAD`` so every state has
    a move on every class; its block is dropped again at the end. The start state's
    block becomes state 0.
    """
    count = len(accepts)
    table, classes, class_of = _merged_classes(table, classes, count, class_of)
    sink = count
    size = count + 1
    moves = [sink] * (size * classes)  # table with the sink for DEAD, and the sink's own row
    for i in range(count * classes):
        if table[i] != DEAD:
            moves[i] = table[i]
    # predecessors on class c of state t: sources[starts[c * size + t] : starts[c * size + t + 1]]
    starts = [0] * (classes * size + 1)
    for state in range(size):
        row = state * classes
        for c in range(classes):
            starts[c * size + moves[row + c] + 1] += 1
    for i in range(1, len(starts)):
        starts[i] += starts[i - 1]
    sources = [0] * starts[-1]
    filled = starts[:]
    for state in range(size):
        row = state * classes
        for c in range(classes):
            key = c * size + moves[row + c]
            sources[filled[key]] = state
            filled[key] += 1

    # The start state keeps a block of its own: for a lexer, state 0 means "no lexeme
    # started", which a state inside a lexeme must never be merged into (even when
    # what remains of its language is the same). No transition enters state 0.
    block_of_label: dict[tuple[int, ...], int] = {(-1,): 0}
    block_of = [0] * size
    for state in range(count):
        label = (-1,) if state == 0 else tuple(accepts[state])
        block_of[state] = block_of_label.setdefault(label, len(block_of_label))
    block_of[sink] = len(block_of_label)  # the sink is alone
    blocks = len(block_of_label) + 1
    first = [0] * (blocks + 1)
    for state in range(size):
        first[block_of[state] + 1] += 1
    for b in range(blocks):
        first[b + 1] += first[b]
    end = first[1:]
    first = first[:blocks]
    marked_end = first[:]  # block b's states reached by the current splitter: elements[first[b]:marked_end[b]]
    elements = [0] * size
    location = [0] * size
    placed = first[:]
    for state in range(size):
        b = block_of[state]
        elements[placed[b]] = state
        location[state] = placed[b]
        placed[b] += 1

    # every block but the largest, on every class, to begin with
    largest = 0
    for b in range(blocks):
        if end[b] - first[b] > end[largest] - first[largest]:
            largest = b
    waiting: list[int] = []  # splitters, as block * classes + class
    in_waiting = [False] * (blocks * classes)
    for b in range(blocks):
        if b != largest:
            for c in range(classes):
                in_waiting[b * classes + c] = True
                waiting.append(b * classes + c)
    touched: list[int] = []
    rounds = 0
    while waiting:
        rounds += 1
        if rounds & 1023 == 0:
            check_deadline()
        splitter = waiting.pop()
        in_waiting[splitter] = False
        block = splitter // classes
        c = splitter % classes
        for target in elements[first[block]:end[block]]:
            key = c * size + target
            for i in range(starts[key], starts[key + 1]):
                state = sources[i]
                b = block_of[state]
                at = location[state]
                if at < marked_end[b]:
                    continue  # already reached
                if marked_end[b] == first[b]:
                    touched.append(b)
                swap = marked_end[b]
                other = elements[swap]
                elements[swap] = state
                location[state] = swap
                elements[at] = other
                location[other] = at
                marked_end[b] += 1
        for b in touched:
            cut = marked_end[b]
            if cut == end[b]:  # every state of the block reached: no split
                marked_end[b] = first[b]
                continue
            new_block = blocks
            blocks += 1
            first.append(first[b])
            end.append(cut)
            marked_end.append(first[b])
            for at in range(first[b], cut):
                block_of[elements[at]] = new_block
            first[b] = cut
            marked_end[b] = cut
            in_waiting.extend([False] * classes)
            smaller = new_block if cut - first[new_block] <= end[b] - cut else b
            for d in range(classes):
                added = new_block * classes + d if in_waiting[b * classes + d] else smaller * classes + d
                if not in_waiting[added]:
                    in_waiting[added] = True
                    waiting.append(added)
        touched.clear()

    number = [DEAD] * blocks  # block -> new state number, start first, sink dropped
    number[block_of[0]] = 0
    next_number = 1
    for state in range(count):
        if number[block_of[state]] == DEAD:
            number[block_of[state]] = next_number
            next_number += 1
    new_table = [DEAD] * (next_number * 256)
    new_accepts: list[list[int]] = [[] for _ in range(next_number)]
    written = [False] * next_number
    for state in range(count):
        row = number[block_of[state]]
        if written[row]:  # the states of one block move alike
            continue
        written[row] = True
        new_accepts[row] = accepts[state]
        for byte in range(256):
            target = table[state * classes + class_of[byte]]
            new_table[row * 256 + byte] = DEAD if target == DEAD else number[block_of[target]]
    return ByteDFA(new_table, new_accepts)


def _merged_classes(
    table: list[int], classes: int, count: int, class_of: list[int]
) -> tuple[list[int], int, list[int]]:
    """``table`` over fewer classes: those whose columns (targets from every state)
    are equal become one, which minimization then splits on once."""
    number: dict[tuple[int, ...], int] = {}
    merged_of = [0] * classes
    for c in range(classes):
        column = tuple([table[state * classes + c] for state in range(count)])
        merged_of[c] = number.setdefault(column, len(number))
    merged = len(number)
    if merged == classes:
        return table, classes, class_of
    kept = [0] * merged  # one original class per merged one
    for c in range(classes - 1, -1, -1):
        kept[merged_of[c]] = c
    new_table = [DEAD] * (count * merged)
    for state in range(count):
        for m in range(merged):
            new_table[state * merged + m] = table[state * classes + kept[m]]
    return new_table, merged, [merged_of[c] for c in class_of]

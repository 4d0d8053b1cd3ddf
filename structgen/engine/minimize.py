"""Minimal automata: trimming and Hopcroft's partition refinement.

A pattern's automaton, once determinized (``dfa``), loses the states from which
no accepting state is reached (so a walk stops at the first byte that rules the
text out), then is minimized: acyclic automata by merging equal suffixes in one
pass from the leaves, the others by Hopcroft's refinement over packed arrays.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, pop, vec
from mypy_extensions import i32, i64, mypyc_attr

from structgen.engine.deadline import check_deadline

DEAD: Final = -1
"""Transition-table entry for "no transition" (the automaton rejects)."""


@mypyc_attr(acyclic=True)  # holds tuples of ints only: untracked by the collector
class Part:
    """One pattern's minimal automaton over its own byte classes: state ``s`` moves
    on ``byte`` to ``table[s * classes + class_of[byte]]``, and the pattern's text
    ends in the states marked ``accepting``. State 0 is the start. Kept as tuples:
    parts live in a process-wide cache (``PatternCache``), and as lists every full
    collection walked them (Python's grammar: 650,000 ints)."""

    table: Final[tuple[int, ...]]
    classes: Final[int]
    class_of: Final[tuple[int, ...]]
    accepting: Final[tuple[bool, ...]]

    def __init__(self, table: list[int], classes: int, class_of: list[int], accepting: list[bool]) -> None:
        self.table = tuple(table)
        self.classes = classes
        self.class_of = tuple(class_of)
        self.accepting = tuple(accepting)


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


def trim(table: list[int], classes: int, accepting: list[bool]) -> tuple[list[int], list[bool]]:
    """Drop states that cannot reach an accepting state, renumbering the rest
    (``table``: ``classes`` targets per state).

    The start state stays state 0 even when it is useless (then it has no moves).
    """
    count = len(accepting)
    useful = can_reach(table, classes, accepting)
    useful[0] = True
    if all(useful):  # the usual case: nothing to drop, nothing to renumber
        return table, accepting
    renumber = [DEAD] * count
    kept = 0
    for state in range(count):
        if useful[state]:
            renumber[state] = kept
            kept += 1
    new_table: list[int] = []
    new_accepting: list[bool] = []
    for state in range(count):
        if useful[state]:
            for c in range(classes):
                target = table[state * classes + c]
                new_table.append(DEAD if target == DEAD else renumber[target])
            new_accepting.append(accepting[state])
    return new_table, new_accepting


def minimize(table: list[int], classes: int, accepting: list[bool], class_of: list[int]) -> Part:
    """Hopcroft's partition refinement, O(k n log n) for k byte classes, on flat
    arrays: each block is a contiguous run of ``elements``, and the states a
    splitter reaches are moved to the front of their block, so a split is a cut.

    ``table`` has ``classes`` targets per state, ``class_of`` maps bytes to
    classes. A sink state (index ``count``) stands for ``DEAD`` so every state has
    a move on every class; its block is dropped again at the end. The start state's
    block becomes state 0. The arrays are packed ``vec[i32]``: compiled, their reads
    and writes are inlined, where a ``list[int]`` read was a call and a box.
    """
    count = len(accepting)
    table, classes, class_of = merged_classes(table, classes, count, class_of)
    k = i64(classes)
    size = i64(count) + 1
    sink = i32(count)
    moves = vec[i32]([sink for _ in range(size * k)])  # table with the sink for DEAD, and the sink's own row
    for i in range(i64(count) * k):
        target = table[i]
        if target != DEAD:
            moves[i] = i32(target)
    # predecessors on class c of state t: sources[starts[c * size + t] : starts[c * size + t + 1]]
    starts = vec[i32]([i32(0) for _ in range(k * size + 1)])
    for i in range(size * k):
        key = (i % k) * size + i64(moves[i]) + 1
        starts[key] = starts[key] + 1
    for i in range(1, k * size + 1):
        starts[i] = starts[i] + starts[i - 1]
    sources = vec[i32]([i32(0) for _ in range(i64(starts[k * size]))])
    filled = vec[i32]([x for x in starts])
    for i in range(size * k):
        key = (i % k) * size + i64(moves[i])
        sources[i64(filled[key])] = i32(i // k)
        filled[key] = filled[key] + 1

    # The start state keeps a block of its own: for a lexer, state 0 means "no lexeme
    # started", which a state inside a lexeme must never be merged into (even when
    # what remains of its language is the same). No transition enters state 0.
    block_of_label: dict[int, int] = {-1: 0}
    block_of = vec[i32]([i32(0) for _ in range(size)])
    for state in range(count):
        label = -1 if state == 0 else int(accepting[state])
        block_of[state] = i32(block_of_label.setdefault(label, len(block_of_label)))
    blocks = i64(len(block_of_label)) + 1
    block_of[size - 1] = i32(blocks - 1)  # the sink is alone
    first = vec[i32]([i32(0) for _ in range(blocks + 1)])
    for state in range(size):
        b = i64(block_of[state]) + 1
        first[b] = first[b] + 1
    for b in range(blocks):
        first[b + 1] = first[b + 1] + first[b]
    end = vec[i32]([first[b + 1] for b in range(blocks)])
    first = vec[i32]([first[b] for b in range(blocks)])
    marked_end = vec[i32]([x for x in first])  # block b's states reached by the current splitter: elements[first[b]:marked_end[b]]
    elements = vec[i32]([i32(0) for _ in range(size)])
    location = vec[i32]([i32(0) for _ in range(size)])
    placed = vec[i32]([x for x in first])
    for state in range(size):
        b = i64(block_of[state])
        at = i64(placed[b])
        elements[at] = i32(state)
        location[state] = i32(at)
        placed[b] = placed[b] + 1

    # every block but the largest, on every class, to begin with
    largest = i64(0)
    for b in range(blocks):
        if end[b] - first[b] > end[largest] - first[largest]:
            largest = b
    waiting = vec[i32]()  # splitters, as block * classes + class
    in_waiting = vec[bool]([False for _ in range(blocks * k)])
    for b in range(blocks):
        if b != largest:
            for c in range(k):
                in_waiting[b * k + c] = True
                waiting = append(waiting, i32(b * k + c))
    touched = vec[i32]()
    rounds = 0
    while len(waiting) > 0:
        rounds += 1
        if rounds & 1023 == 0:
            check_deadline()
        waiting, popped = pop(waiting)
        splitter = i64(popped)
        in_waiting[splitter] = False
        block = splitter // k
        c = splitter % k
        members = vec[i32]([elements[at] for at in range(i64(first[block]), i64(end[block]))])  # moves below reorder elements
        for target in members:
            key = c * size + i64(target)
            for i in range(i64(starts[key]), i64(starts[key + 1])):
                state = i64(sources[i])
                b = i64(block_of[state])
                at = i64(location[state])
                swap = i64(marked_end[b])
                if at < swap:
                    continue  # already reached
                if swap == i64(first[b]):
                    touched = append(touched, i32(b))
                other = i64(elements[swap])
                elements[swap] = i32(state)
                location[state] = i32(swap)
                elements[at] = i32(other)
                location[other] = i32(at)
                marked_end[b] = i32(swap + 1)
        for split in touched:
            b = i64(split)
            cut = marked_end[b]
            if cut == end[b]:  # every state of the block reached: no split
                marked_end[b] = first[b]
                continue
            new_block = blocks
            blocks += 1
            first = append(first, first[b])
            end = append(end, cut)
            marked_end = append(marked_end, first[b])
            for at in range(i64(first[b]), i64(cut)):
                block_of[i64(elements[at])] = i32(new_block)
            first[b] = cut
            marked_end[b] = cut
            for _ in range(k):
                in_waiting = append(in_waiting, False)
            smaller = new_block if cut - first[new_block] <= end[b] - cut else b
            for d in range(k):
                added = new_block * k + d if in_waiting[b * k + d] else smaller * k + d
                if not in_waiting[added]:
                    in_waiting[added] = True
                    waiting = append(waiting, i32(added))
        touched = vec[i32]()

    blocks_of_states = [int(block_of[state]) for state in range(count)]  # the sink's block is never numbered
    return quotient(table, classes, accepting, class_of, blocks_of_states, int(blocks))


def minimize_acyclic(table: list[int], classes: int, accepting: list[bool], class_of: list[int]) -> Part | None:
    """The minimal automaton of an acyclic ``table`` (a literal, a keyword), or None
    if it has a cycle.

    Without cycles, states can be taken after all their targets, and two states are
    equivalent exactly when they agree on accepting and on their targets' classes:
    one pass with a dictionary, where Hopcroft's set-up alone cost more on these
    automata of a handful of states. States are numbered as ``minimize`` numbers them.
    """
    count = len(accepting)
    waiting_on = [0] * count  # targets (with repeats) not yet given a class
    predecessors: list[list[int]] = [[] for _ in range(count)]
    for state in range(count):
        for target in table[state * classes : (state + 1) * classes]:
            if target != DEAD:
                waiting_on[state] += 1
                predecessors[target].append(state)
    ready = [state for state in range(count) if waiting_on[state] == 0]
    class_of_state = [DEAD] * count
    signatures: dict[tuple[int, ...], int] = {}
    done = 0
    while ready:
        state = ready.pop()
        done += 1
        signature = [int(accepting[state])]
        for target in table[state * classes : (state + 1) * classes]:
            signature.append(DEAD if target == DEAD else class_of_state[target])
        class_of_state[state] = signatures.setdefault(tuple(signature), len(signatures))
        for previous in predecessors[state]:
            waiting_on[previous] -= 1
            if waiting_on[previous] == 0:
                ready.append(previous)
    if done < count:
        return None
    return quotient(table, classes, accepting, class_of, class_of_state, len(signatures))


def quotient(
    table: list[int], classes: int, accepting: list[bool], class_of: list[int], block_of: list[int], blocks: int
) -> Part:
    """``table`` with the states of each block merged into one, numbered in the order
    of their first states (the start's block first, as state 0 comes first)."""
    number = [DEAD] * blocks
    next_number = 0
    for state in range(len(accepting)):
        if number[block_of[state]] == DEAD:
            number[block_of[state]] = next_number
            next_number += 1
    new_table = [DEAD] * (next_number * classes)
    new_accepting = [False] * next_number
    written = [False] * next_number
    for state in range(len(accepting)):
        row = number[block_of[state]]
        if written[row]:  # the states of one block move alike
            continue
        written[row] = True
        new_accepting[row] = accepting[state]
        for c in range(classes):
            target = table[state * classes + c]
            new_table[row * classes + c] = DEAD if target == DEAD else number[block_of[target]]
    return Part(new_table, classes, class_of, new_accepting)


def merged_classes(
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

"""Partial stacks: a terminal sequence simulated on a stack of which only the top
is known (GreatGramma seed, Alg. 5; ``tables`` classifies token groups by it).

A partial stack is a tuple of LR states, bottom first, its bottom the known
context. LR actions read only the states they pop, so a sequence that goes
through without popping the known bottom goes through on every stack with that
top; a reduction that would pop it sets the ``below`` flag (the verdict then
depends on the real stack), as does passing the depth or work limits.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr

from structgen.engine.int_map import IntMap
from structgen.engine.lr import ACCEPT, CHAIN_SHIFT, CHAIN_STATE, LRTable

Stacks = tuple[tuple[int, ...], ...]
"""Partial stacks (LR states, bottom first). Tuples of ints: the collector stops
tracking them, which matters when hundreds of thousands are memoized."""


@mypyc_attr(acyclic=True)  # untracked: a dict of them is too, and full collections skip the memo
class Partial:
    """The partial stacks after a terminal sequence, and whether some branch needed
    a state under the known part (or hit a limit). A native object rather than a
    tuple: a dict holding tuples stays tracked by the collector until a full
    collection, and the memo's dicts (about 500,000 results for Go at 128k
    tokens) made each full collection inside a step take 11-24 ms."""

    stacks: Final[Stacks]
    below: Final[bool]

    def __init__(self, stacks: Stacks, below: bool) -> None:
        self.stacks = stacks
        self.below = below
        # terminal -> verdict from these stacks, shared by every Partial with them
        # (``Context.takes_on``), once a classification asks
        self.takes: dict[int, int] | None = None


class Context:
    """Simulation results from one known stack top (and, for an indentation-sensitive
    grammar, one view of the stack under it: ``MaskTables._context``'s key), memoized
    by sequence."""

    def __init__(self, states: list[int]) -> None:
        self.states = states
        self.verdicts = 0  # the verdicts its ``takes`` hold (``ContextMemo`` counts them)
        # sequence -> the partial stacks after it, as an index in ``results`` (a packed
        # map: a dict's boxed keys were most of the memo's bytes)
        self.after = IntMap()
        self.results: list[Partial] = []
        # partial stacks -> (terminal -> verdict): by the stacks, not the sequence, as
        # sequences that differ by ignored lexemes or reductions end on the same stacks
        # (Python at 128k tokens: 1,700 of 2,700 feeds are left, 2 µs each)
        self.takes: dict[Stacks, dict[int, int]] = {}
        # stacks -> their index in ``results``, one per below flag: most sequences from a
        # top end on stacks another already did (Go at 128k: 140,000 results, 36,000 distinct)
        self._partials: dict[Stacks, int] = {}
        self._partials_below: dict[Stacks, int] = {}

    def result(self, sequence: int) -> Partial | None:
        """The partial stacks memoized after ``sequence`` (None: not yet)."""
        index = self.after.get(sequence, -1)
        return self.results[index] if index >= 0 else None

    def remember(self, sequence: int, stacks: Stacks, below: bool) -> Partial:
        """Memoize the partial stacks after ``sequence``: one result per distinct
        stacks and flag, shared by every sequence ending on them."""
        partials = self._partials_below if below else self._partials
        index = partials.get(stacks, -1)
        if index < 0:
            index = len(self.results)
            self.results.append(Partial(stacks, below))
            partials[stacks] = index
        self.after.put(sequence, index)
        return self.results[index]

    def takes_on(self, partial: Partial) -> dict[int, int]:
        """The verdicts of terminals on ``partial``'s stacks, shared with every other
        ``Partial`` on them: the stacks are hashed once per sequence classified,
        not once per terminal asked."""
        takes = partial.takes
        if takes is None:
            takes = self.takes.get(partial.stacks)
            if takes is None:
                takes = {}
                self.takes[partial.stacks] = takes
            partial.takes = takes
        return takes


FORGET_SHARE: Final = 256
"""``ContextMemo`` forgets until this share of its limit (a 256th) is free."""


class ContextMemo:
    """The ``Context`` of each known stack top (a view and LR states), least
    recently used first, with the results they hold counted. Past ``limit``
    partial results, or as many verdicts, the least recently used contexts are
    forgotten until a 256th of the limit is free: a step pays for a slice of the
    memo, 0.2-0.9 ms, not for all of it (clearing Python's 200,000 results at once
    took one step 40-60 ms at 128k tokens)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.contexts: dict[tuple[int, ...], Context] = {}
        self.memoized = 0  # partial results the contexts hold (``Context.after``)
        self.verdicts = 0  # verdicts of terminals they hold (``Context.takes_on``)
        self.forgotten = 0  # contexts forgotten so far

    def context(self, view_id: int, states: list[int]) -> Context:
        """The context of ``states`` over a stack of view ``view_id``, made the most
        recently used (a new one when it was never made or was forgotten)."""
        key = tuple([view_id] + states)
        found = self.contexts.pop(key, None)
        if found is None:
            if self.memoized > self.limit or self.verdicts > self.limit:
                self._forget()
            found = Context(states)
        self.contexts[key] = found
        return found

    def _forget(self) -> None:
        """Drop the least recently used contexts until both counts are a
        ``FORGET_SHARE``-th under the limit: a memo, not a table, so forgetting
        costs time, never results."""
        keep = self.limit - self.limit // FORGET_SHARE
        for key in list(self.contexts):
            if self.memoized <= keep and self.verdicts <= keep:
                break
            context = self.contexts.pop(key)
            self.memoized -= len(context.after)
            self.verdicts -= context.verdicts
            self.forgotten += 1


class PartialStacks:
    """Feeds terminals to partial stacks of one LR table, within ``max_depth``
    states and ``max_work`` reductions. For an indentation-sensitive grammar,
    ``below_view`` is the view (``engine.indentation``) of the stack under the
    known states, set by the classification under way (empty: unknown)."""

    table: Final[LRTable]
    is_newline: Final[list[bool]]
    max_depth: Final[int]
    max_work: Final[int]

    def __init__(self, table: LRTable, is_newline: list[bool], max_depth: int, max_work: int) -> None:
        self.table = table
        self.is_newline = is_newline  # by terminal: a lexed newline
        self.max_depth = max_depth
        self.max_work = max_work
        self.below_view: tuple[int, ...] = ()

    def feed(self, stacks: Stacks, terminal: int, below: list[bool]) -> list[tuple[int, ...]]:
        """Shift ``terminal`` on partial stacks (tuples of LR states, bottom first)
        after the reductions it needs; a reduction that would pop the known bottom
        sets ``below[0]``. A lexed newline is what the view of each stack makes it
        (``_feed_newline``)."""
        if self.is_newline[terminal]:
            return self._feed_newline(stacks, terminal, below)
        if len(stacks) == 1:
            return self._feed_one(stacks[0], terminal, below)
        return self._feed_all(stacks, terminal, below)

    def _feed_newline(self, stacks: Stacks, terminal: int, below: list[bool]) -> list[tuple[int, ...]]:
        """``_feed`` for a lexed newline: on each partial stack, the terminals its
        view makes of it (``Indentation.after_newline``), the view being that of
        the stack under the known states (``below_view``) with the partial
        stack's own states on it. Under an unknown view, ``below[0]``."""
        indentation = self.table.indentation
        base = self.below_view
        if indentation is None or not base:
            below[0] = True
            return []
        width = indentation.lexed[terminal]
        out: list[tuple[int, ...]] = []
        for stack in stacks:
            view = base
            for state in stack:
                view = indentation.apply(view, state)
            made = indentation.after_newline(view, width)
            if made is None:
                continue
            current: list[tuple[int, ...]] = [stack]
            for real in made:
                current = self.feed(tuple(current), real, below)
                if not current:
                    break
            for found in current:
                if found not in out:
                    out.append(found)
        return out

    def _feed_one(self, stack: tuple[int, ...], terminal: int, below: list[bool]) -> list[tuple[int, ...]]:
        """``_feed`` on one stack while every state on the way has one action for
        ``terminal`` (an LALR grammar's usual case): no sets of stacks to keep."""
        table = self.table
        done = 0
        while True:
            actions = table.actions[stack[-1]].get(terminal)
            if actions is None:
                return []
            if len(actions) != 1:
                return self._feed_all((stack,), terminal, below)  # a conflict: every branch
            action = actions[0]
            if action == ACCEPT:
                return []
            if action & 1 == 0:
                return [stack + (action >> 1,)]
            rule = action >> 1
            keep = len(stack) - table.rule_length[rule]
            if keep < 1:
                below[0] = True
                return []
            if keep == len(stack) - 1:  # a unit rule: the reductions that follow it at once
                chain = table.unit_chain(stack[-2], stack[-1], terminal)
                stack = stack[:keep] + (chain & CHAIN_STATE,)
                done += chain >> CHAIN_SHIFT
            else:
                base = stack[:keep]
                stack = base + (table.gotos[base[-1]][table.rule_lhs[rule]],)
                done += 1
            if len(stack) > self.max_depth or done > self.max_work:
                below[0] = True  # as in _feed_all; a cycle of unit rules ends here too
                return []

    def _feed_all(self, stacks: Stacks, terminal: int, below: list[bool]) -> list[tuple[int, ...]]:
        """``_feed`` following every branch, each distinct stack once."""
        table = self.table
        work = list(stacks)
        seen: set[tuple[int, ...]] = set(stacks)
        shifted: list[tuple[int, ...]] = []
        shifted_seen: set[tuple[int, ...]] = set()
        done = 0
        while work:
            stack = work.pop()
            actions = table.actions[stack[-1]].get(terminal)
            if actions is None:
                continue
            for action in actions:
                if action == ACCEPT:
                    continue
                if action & 1 == 0:
                    pushed = stack + (action >> 1,)
                    if pushed not in shifted_seen:
                        shifted_seen.add(pushed)
                        shifted.append(pushed)
                    continue
                rule = action >> 1
                keep = len(stack) - table.rule_length[rule]
                if keep < 1:
                    below[0] = True
                    continue
                base = stack[:keep]
                reduced = base + (table.gotos[base[-1]][table.rule_lhs[rule]],)
                if len(reduced) > self.max_depth:
                    below[0] = True  # empty rules piling up (a cyclic grammar): leave it to the real stack
                    continue
                if reduced not in seen:
                    seen.add(reduced)
                    work.append(reduced)
                    done += 1
                    if done > self.max_work:
                        below[0] = True
                        return shifted
        return shifted

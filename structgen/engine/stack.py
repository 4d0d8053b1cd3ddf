"""The persistent parse stack: GLR over LALR tables, with O(1) fork and rollback.

A stack is a chain of immutable nodes, each holding an LR state and its parent;
pushing makes a new node that shares the whole tail, so keeping an old top is a
snapshot (rollback) and handing the same top to two parsers is a fork. After a
shift, the reductions that do not depend on the next terminal are made at once. Where the
table has a conflict, each action is followed and the parser holds a list of
tops. Nodes are hash-consed (one node per (state, parent)), so stacks that become
equal are one object and the list never holds duplicates.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr

from structgen.engine.lr import ACCEPT, LRTable

MAX_STEP_WORK: Final = 200_000
"""Default for the most reductions one terminal may take across all forks; past it
the grammar is too ambiguous to follow (``AmbiguityLimitError``)."""


class AmbiguityLimitError(ValueError):
    """Following every parse of an ambiguous grammar needed more reductions than allowed."""


@mypyc_attr(acyclic=True)  # parents only point down: no cycles, no GC header
class StackNode:
    """One stack entry: an LR state on top of ``parent`` (None at the bottom)."""

    state: Final[int]
    parent: Final[StackNode | None]
    uid: Final[int]

    def __init__(self, state: int, parent: StackNode | None, uid: int) -> None:
        self.state = state
        self.parent = parent
        self.uid = uid


class GLRParser:
    """Feeds terminals to sets of persistent stacks, following every conflict."""

    def __init__(self, table: LRTable, max_step_work: int = MAX_STEP_WORK) -> None:
        self.table = table
        self.max_step_work = max_step_work
        self._nodes: dict[tuple[int, int], StackNode] = {}
        self._work = 0  # reductions for the current terminal
        self._start = self._settle(self._node(0, None))

    def _node(self, state: int, parent: StackNode | None) -> StackNode:
        key = (state, parent.uid if parent is not None else -1)
        node = self._nodes.get(key)
        if node is None:
            node = StackNode(state, parent, len(self._nodes))
            self._nodes[key] = node
        return node

    def _settle(self, node: StackNode) -> StackNode:
        """``node`` after the reductions its state makes whatever comes next
        (``LRTable.default_reduce``); bounded, since an optimization needs no fixpoint."""
        default_reduce = self.table.default_reduce
        for _ in range(self.table.state_count):
            rule = default_reduce[node.state]
            if rule < 0:
                break
            node = self._reduce(node, rule)
        return node

    def _reduce(self, node: StackNode, rule: int) -> StackNode:
        """The stack after reducing by ``rule`` on top of ``node``; counts against
        ``max_step_work`` (``_work`` is reset per terminal)."""
        table = self.table
        base: StackNode | None = node
        for _ in range(table.rule_length[rule]):
            assert base is not None
            base = base.parent
        assert base is not None
        self._work += 1
        if self._work > self.max_step_work:
            raise AmbiguityLimitError(
                f"one terminal needed more than {self.max_step_work} reductions: the grammar "
                "is too ambiguous to follow every parse"
            )
        return self._node(table.gotos[base.state][table.rule_lhs[rule]], base)

    def initial(self) -> list[StackNode]:
        return [self._start]

    def feed(self, tops: list[StackNode], terminal: int) -> list[StackNode]:
        """The stacks after ``terminal`` is shifted (after all reductions it needs);
        empty when no stack can take it. ``tops`` is left untouched."""
        shifted: list[StackNode] = []
        self._reduce_then(tops, terminal, shifted)
        return shifted

    def feed_lexeme(self, tops: list[StackNode], alternatives: list[int], ignored: list[bool]) -> list[StackNode]:
        """The stacks after one lexeme: each of its equal-extent alternatives fed (an
        ``ignored`` terminal never reaches the parser: it leaves the stacks as they
        are), the results merged without duplicates."""
        if len(alternatives) == 1:
            terminal = alternatives[0]
            return tops if ignored[terminal] else self.feed(tops, terminal)
        merged: list[StackNode] = []
        seen: set[int] = set()
        for terminal in alternatives:
            following = tops if ignored[terminal] else self.feed(tops, terminal)
            for node in following:
                if node.uid not in seen:
                    seen.add(node.uid)
                    merged.append(node)
        return merged

    def accepts_end(self, tops: list[StackNode]) -> bool:
        """Whether the input so far is a complete sentence."""
        return self._reduce_then(tops, self.table.end, [])

    def _reduce_then(self, tops: list[StackNode], terminal: int, shifted: list[StackNode]) -> bool:
        """Apply every reduction on ``terminal`` to a fixpoint; collect the shifts
        into ``shifted`` and return whether some stack accepts."""
        table = self.table
        work = list(tops)
        seen = {node.uid for node in tops}
        shifted_seen: set[int] = set()
        accepted = False
        self._work = 0
        while work:
            node = work.pop()
            actions = table.actions[node.state].get(terminal)
            if actions is None:
                continue
            for action in actions:
                if action == ACCEPT:
                    accepted = True
                elif action & 1 == 0:
                    new = self._settle(self._node(action >> 1, node))
                    if new.uid not in shifted_seen:
                        shifted_seen.add(new.uid)
                        shifted.append(new)
                else:
                    new = self._reduce(node, action >> 1)
                    if new.uid not in seen:
                        seen.add(new.uid)
                        work.append(new)
        return accepted

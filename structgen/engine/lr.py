"""LALR(1) tables that keep every conflict, for a GLR parser.

Symbols are ints: terminals ``0 .. terminal_count - 1``, then ``END`` (the
end-of-input marker, ``terminal_count``), then nonterminals. Where an LALR(1)
parser generator would report a shift/reduce or reduce/reduce conflict, the table
keeps all the actions; ``stack.py`` follows each of them (GLR), so ambiguous and
non-LALR grammars parse instead of failing.

Lookaheads are computed as in the dragon book (Alg. 4.62-4.63): LR(1) closure of
each kernel item with a probe lookahead tells which lookaheads arise spontaneously
and which propagate, then propagation runs to a fixpoint. Lookahead and FIRST sets
are Python ints used as bitsets. Everything is iterative.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.deadline import check_deadline
from structgen.engine.indentation import Indentation

ACCEPT: Final = -1
"""The action taken on ``END`` once the start symbol is complete."""

MAX_LR_STATES: Final = 100_000

MAX_LR_WORK: Final = 5_000_000
"""Closure items the construction may visit, all phases together: its time and its
memory grow with them (about a second a million on two cores). An object of n
optional properties in declared order makes each of its 2n states close over the
properties still to come, some 7.5·n² items: 2,400 properties took 46 s and 5 GB
before this bound, and 800 (4.8 million) stay within it. The largest grammars
MaskBench and SynCode ship need 0.3 million (Kubernetes kb_1161, Github o9808)."""

CHECK_EVERY: Final = 64
"""States (or propagation steps, ×1024) between two deadline checks."""

MAX_UNIT_CHAINS: Final = 100_000
"""Unit-reduction chains ``LRTable.unit_chain`` remembers (a dictionary slot each);
past it they are forgotten: a memo, so forgetting costs time, never results."""

MAX_UNIT_CHAIN: Final = 64
"""Most unit reductions one ``unit_chain`` follows (a cyclic grammar's unit rules
go round forever); the caller goes on from where it stopped."""

CHAIN_SHIFT: Final = 20
"""``unit_chain``'s count sits above this many bits of state (``MAX_LR_STATES`` < 2**20)."""

CHAIN_STATE: Final = (1 << CHAIN_SHIFT) - 1


class GrammarTooLargeError(ValueError):
    """The LR automaton grew past ``MAX_LR_STATES`` states or ``MAX_LR_WORK`` items."""


class _Work:
    """Counts the closure items a construction visits, against ``MAX_LR_WORK``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.done = 0

    def add(self, items: int) -> None:
        self.done += items
        if self.done > self.limit:
            raise GrammarTooLargeError(
                f"the grammar's LR automaton needs more than {self.limit:,} closure items "
                "(a long chain of optional parts, say thousands of optional properties)"
            )


def shift_action(state: int) -> int:
    return state << 1


def reduce_action(rule: int) -> int:
    return (rule << 1) | 1


class LRTable:
    """Parse tables: per state, terminal -> actions and nonterminal -> state.

    ``actions[state][terminal]`` is a tuple of encoded actions: ``state << 1`` for a
    shift, ``(rule << 1) | 1`` for a reduction, ``ACCEPT``; more than one is a
    conflict. ``gotos[state][nonterminal]`` is the state after a reduction.
    Rule ``i`` has left side ``rule_lhs[i]`` and ``rule_length[i]`` symbols; the
    augmented start rule is the last one. State 0 is the start state.
    ``default_reduce[state]`` is the rule ``state`` reduces by on every terminal, or -1.
    """

    def __init__(
        self,
        terminal_count: int,
        actions: list[dict[int, tuple[int, ...]]],
        gotos: list[dict[int, int]],
        rule_lhs: list[int],
        rule_length: list[int],
    ) -> None:
        self.terminal_count = terminal_count
        self.end = terminal_count
        self.actions = actions
        self.gotos = gotos
        self.rule_lhs = rule_lhs
        self.rule_length = rule_length
        self.default_reduce: list[int] = [_default_reduction(row) for row in actions]
        self.work = 0  # the closure items its construction visited (``build_lalr``)
        # an indentation-sensitive grammar's (structgen.indenter): set once, before any parser reads the table
        self.indentation: Indentation | None = None
        self._chains: dict[int, int] = {}  # unit_chain's memo
        self.max_chains = MAX_UNIT_CHAINS

    @property
    def state_count(self) -> int:
        return len(self.actions)

    def unit_chain(self, below: int, top: int, terminal: int) -> int:
        """Where the unit reductions ``terminal`` makes in a row leave ``top`` over
        ``below`` (each replaces the top by its goto from ``below``, which stays):
        ``count << CHAIN_SHIFT | state``, ``count`` 0 unless ``top``'s one action on
        ``terminal`` reduces by a unit rule. An operand reduces through a level per
        precedence before most terminals (Python: about fifteen), each a stack
        slice and concatenation in the partial and trial stacks: here one lookup."""
        key = (below * len(self.actions) + top) * (self.end + 1) + terminal
        found = self._chains.get(key, -1)
        if found >= 0:
            return found
        state = top
        count = 0
        while count < MAX_UNIT_CHAIN:
            actions = self.actions[state].get(terminal)
            if actions is None or len(actions) != 1 or actions[0] == ACCEPT or actions[0] & 1 == 0:
                break
            rule = actions[0] >> 1
            if self.rule_length[rule] != 1:
                break
            state = self.gotos[below][self.rule_lhs[rule]]
            count += 1
        found = count << CHAIN_SHIFT | state
        if len(self._chains) >= self.max_chains:
            self._chains.clear()
        self._chains[key] = found
        return found

    def conflicts(self) -> int:
        """How many (state, terminal) cells hold more than one action (shift/reduce,
        reduce/reduce, or accept/reduce)."""
        return sum(1 for row in self.actions for acts in row.values() if len(acts) > 1)


def _default_reduction(row: dict[int, tuple[int, ...]]) -> int:
    """The rule a state reduces by whatever comes next, or -1.

    A state whose every action is the same reduction may reduce before seeing the
    next terminal (Bison's default reductions): an erroneous terminal is still
    never shifted, so the language is unchanged, and the stack top is then a state
    that says more about what may follow, which is what mask tables key on.
    """
    rule = -1
    for actions in row.values():
        if len(actions) != 1 or actions[0] == ACCEPT or actions[0] & 1 == 0:
            return -1
        if rule >= 0 and actions[0] >> 1 != rule:
            return -1
        rule = actions[0] >> 1
    return rule


class _Items:
    """LR(0) items numbered densely: item ``offset[rule] + dot``."""

    def __init__(self, rules_rhs: list[list[int]]) -> None:
        self.rule_of: list[int] = []
        self.dot_of: list[int] = []
        self.offset: list[int] = []
        for rule, rhs in enumerate(rules_rhs):
            self.offset.append(len(self.rule_of))
            for dot in range(len(rhs) + 1):
                self.rule_of.append(rule)
                self.dot_of.append(dot)


def build_lalr(
    terminal_count: int, rules: list[tuple[int, list[int]]], start: int, work_limit: int = MAX_LR_WORK
) -> LRTable:
    """LALR(1) tables for ``rules`` (``(lhs, rhs)`` with the symbol numbering above).

    ``start`` is the start nonterminal; an augmented rule ``S' -> start`` is added.
    Every phase checks the compile's deadline every ``CHECK_EVERY`` states, and the
    whole construction visits at most ``work_limit`` closure items
    (``GrammarTooLargeError`` past it); ``LRTable.work`` says how many it visited.
    """
    work = _Work(work_limit)
    end = terminal_count
    symbol_count = 1 + max([end, start, *[lhs for lhs, _ in rules], *[s for _, rhs in rules for s in rhs]])
    augmented = symbol_count
    symbol_count += 1
    rule_lhs = [lhs for lhs, _ in rules] + [augmented]
    rule_rhs = [list(rhs) for _, rhs in rules] + [[start]]
    rules_of: list[list[int]] = [[] for _ in range(symbol_count)]
    for rule, lhs in enumerate(rule_lhs):
        rules_of[lhs].append(rule)
    nullable, first = _nullable_and_first(end, rule_lhs, rule_rhs, symbol_count)
    items = _Items(rule_rhs)

    # LR(0) automaton over kernels
    start_kernel = (items.offset[len(rule_rhs) - 1],)
    kernels: list[tuple[int, ...]] = [start_kernel]
    state_of: dict[tuple[int, ...], int] = {start_kernel: 0}
    transitions: list[dict[int, int]] = []
    position = 0
    while position < len(kernels):
        if position % CHECK_EVERY == CHECK_EVERY - 1:
            check_deadline()  # a compile under a time limit stops here (engine/deadline.py)
        closure = _lr0_closure(kernels[position], items, rule_rhs, rules_of, end)
        work.add(len(closure))
        moves: dict[int, list[int]] = {}
        for item in closure:
            rule = items.rule_of[item]
            dot = items.dot_of[item]
            if dot < len(rule_rhs[rule]):
                moves.setdefault(rule_rhs[rule][dot], []).append(item + 1)
        row: dict[int, int] = {}
        for symbol, advanced in moves.items():
            kernel = tuple(sorted(set(advanced)))
            target = state_of.get(kernel, -1)
            if target < 0:
                if len(kernels) >= MAX_LR_STATES:
                    raise GrammarTooLargeError(f"the grammar needs more than {MAX_LR_STATES} LR states")
                target = len(kernels)
                state_of[kernel] = target
                kernels.append(kernel)
            row[symbol] = target
        transitions.append(row)
        position += 1

    # LALR(1) lookaheads of kernel items: spontaneous generation, then propagation
    probe_bit = 1 << (end + 1)  # a lookahead no real terminal has
    lookahead: dict[tuple[int, int], int] = {(0, start_kernel[0]): 1 << end}
    propagate: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for state, kernel in enumerate(kernels):
        if state % CHECK_EVERY == CHECK_EVERY - 1:
            check_deadline()
        for kernel_item in kernel:
            closure_la = _lr1_closure({kernel_item: probe_bit}, items, rule_rhs, rules_of, end, nullable, first)
            work.add(len(closure_la))
            for item, la in closure_la.items():
                rule = items.rule_of[item]
                dot = items.dot_of[item]
                if dot == len(rule_rhs[rule]):
                    continue
                successor = (transitions[state][rule_rhs[rule][dot]], item + 1)
                if la & probe_bit:
                    propagate.setdefault((state, kernel_item), []).append(successor)
                spontaneous = la & ~probe_bit
                if spontaneous:
                    lookahead[successor] = lookahead.get(successor, 0) | spontaneous
    pending = list(lookahead)
    steps = 0
    while pending:
        steps += 1
        if steps % (CHECK_EVERY * 1024) == 0:
            check_deadline()
        source = pending.pop()
        bits = lookahead.get(source, 0)
        for successor in propagate.get(source, []):
            old = lookahead.get(successor, 0)
            if old | bits != old:
                lookahead[successor] = old | bits
                pending.append(successor)

    # actions: shifts from the transitions, reductions from the LR(1) closure
    actions: list[dict[int, tuple[int, ...]]] = []
    gotos: list[dict[int, int]] = []
    accept_rule = len(rule_rhs) - 1
    for state, kernel in enumerate(kernels):
        if state % CHECK_EVERY == CHECK_EVERY - 1:
            check_deadline()
        row_actions: dict[int, list[int]] = {}
        row_gotos: dict[int, int] = {}
        for symbol, target in transitions[state].items():
            if symbol <= end:  # a terminal
                row_actions.setdefault(symbol, []).append(shift_action(target))
            else:
                row_gotos[symbol] = target
        seeds = {item: lookahead.get((state, item), 0) for item in kernel}
        closure_la = _lr1_closure(seeds, items, rule_rhs, rules_of, end, nullable, first)
        work.add(len(closure_la))
        for item, la in closure_la.items():
            rule = items.rule_of[item]
            if items.dot_of[item] != len(rule_rhs[rule]):
                continue
            for terminal in _bits(la):
                action = ACCEPT if rule == accept_rule else reduce_action(rule)
                cell = row_actions.setdefault(terminal, [])
                if action not in cell:
                    cell.append(action)
        # tuples, not lists: untracked by the collector after their first collection, and
        # the dicts of them after a full one (Python's table: 27,000 cells, half the
        # objects a full collection walked at 128k tokens, 25 ms a collection before)
        actions.append({terminal: tuple(cell) for terminal, cell in row_actions.items()})
        gotos.append(row_gotos)
    table = LRTable(terminal_count, actions, gotos, rule_lhs, [len(rhs) for rhs in rule_rhs])
    table.work = work.done
    return table


def _bits(value: int) -> list[int]:
    out: list[int] = []
    index = 0
    while value:
        if value & 1:
            out.append(index)
        value >>= 1
        index += 1
    return out


def _nullable_and_first(
    end: int, rule_lhs: list[int], rule_rhs: list[list[int]], symbol_count: int
) -> tuple[list[bool], list[int]]:
    nullable = [False] * symbol_count
    first = [0] * symbol_count
    for symbol in range(end + 1):
        first[symbol] = 1 << symbol
    changed = True
    while changed:
        changed = False
        for rule, lhs in enumerate(rule_lhs):
            bits = first[lhs]
            all_nullable = True
            for symbol in rule_rhs[rule]:
                bits |= first[symbol]
                if not nullable[symbol]:
                    all_nullable = False
                    break
            if bits != first[lhs]:
                first[lhs] = bits
                changed = True
            if all_nullable and not nullable[lhs]:
                nullable[lhs] = True
                changed = True
    return nullable, first


def _lr0_closure(
    kernel: tuple[int, ...], items: _Items, rule_rhs: list[list[int]], rules_of: list[list[int]], end: int
) -> list[int]:
    seen = set(kernel)
    out = list(kernel)
    position = 0
    while position < len(out):
        item = out[position]
        position += 1
        rule = items.rule_of[item]
        dot = items.dot_of[item]
        if dot < len(rule_rhs[rule]):
            symbol = rule_rhs[rule][dot]
            if symbol > end:
                for produced in rules_of[symbol]:
                    new_item = items.offset[produced]
                    if new_item not in seen:
                        seen.add(new_item)
                        out.append(new_item)
    return out


def _lr1_closure(
    seeds: dict[int, int],
    items: _Items,
    rule_rhs: list[list[int]],
    rules_of: list[list[int]],
    end: int,
    nullable: list[bool],
    first: list[int],
) -> dict[int, int]:
    """LR(1) closure with lookahead bitsets: item -> lookaheads, to a fixpoint."""
    closure = dict(seeds)
    pending = list(seeds)
    while pending:
        item = pending.pop()
        rule = items.rule_of[item]
        dot = items.dot_of[item]
        rhs = rule_rhs[rule]
        if dot >= len(rhs) or rhs[dot] <= end:
            continue
        # lookaheads of the produced items: FIRST(rest), plus ours if rest is nullable
        follow = 0
        rest_nullable = True
        for symbol in rhs[dot + 1 :]:
            follow |= first[symbol]
            if not nullable[symbol]:
                rest_nullable = False
                break
        if rest_nullable:
            follow |= closure[item]
        for produced in rules_of[rhs[dot]]:
            new_item = items.offset[produced]
            old = closure.get(new_item, 0)
            if old | follow != old:
                closure[new_item] = old | follow
                pending.append(new_item)
    return closure

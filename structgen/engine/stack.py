"""The persistent parse stack: GLR over LALR tables, with O(1) fork and rollback.

The stacks of all parses form one graph-structured stack (Tomita): each node holds
an LR state and its parents, the nodes under it. After each terminal the parses
whose tops are in the same state share one top node with several parents, so
the number of tops is at most the number of LR states and nested ambiguity
costs a few more parents, not twice the stacks at every level.

Nodes never change once a terminal has been fed: pushing makes new nodes on top
of old ones, so keeping an old list of tops is a snapshot (rollback) and handing
it to two parsers is a fork. Nodes are hash-consed (one node per state and
parents), so a stack that recurs is the same object, which is what lets masks be
remembered per configuration. After a shift, the reductions that do not depend
on the next terminal are made at once where the stack under them is a single path.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.indentation import BOTTOM, Indentation, View
from structgen.engine.lexer import START, Lexer
from structgen.engine.lr import ACCEPT, CHAIN_SHIFT, CHAIN_STATE, LRTable

MAX_STEP_WORK: Final = 200_000
"""Default for the most reduction paths one terminal may take across all parses;
past it the grammar is too ambiguous to follow (``AmbiguityLimitError``)."""


MAX_STACK_VIEWS: Final = 1_000_000
"""Stack views (``engine.indentation``) a parser remembers; past it they are forgotten."""

MAX_TRIAL_WORK: Final = 1_000
"""Default for the most steps (actions followed, nodes reached by a reduction) one
trial feed may take; past it the real stacks are fed instead (``Trial``)."""


class AmbiguityLimitError(ValueError):
    """Following every parse of an ambiguous grammar needed more work than allowed."""


class StackNode:
    """One node: an LR state on top of ``parents`` (none at the bottom).

    ``uid`` numbers the node within its parser (-1 while the node is being built).
    """

    state: Final[int]
    parents: list[StackNode]
    uid: int

    def __init__(self, state: int, parents: list[StackNode], uid: int) -> None:
        self.state = state
        self.parents = parents
        self.uid = uid

    def only_parent(self) -> StackNode | None:
        """The node under this one when there is exactly one, else None."""
        return self.parents[0] if len(self.parents) == 1 else None


class _Level:
    """The nodes of one position while a terminal's reductions run: at most one per
    LR state, all of them new and still changing (they gain parents). The tops it
    starts from are copied in, merged by state: they never change, and they may also
    stand under one another (hash-consing ignores positions), so a top is never
    itself a node of the level."""

    def __init__(self, tops: list[StackNode]) -> None:
        self.by_state: dict[int, StackNode] = {}
        self.parent_ids: dict[int, set[int]] = {}  # id() of each node here -> id()s of its parents
        self.order: list[StackNode] = []
        for top in tops:
            existing = self.by_state.get(top.state)
            if existing is None:
                self.add_fresh(StackNode(top.state, list(top.parents), -1))
                continue
            known = self.parent_ids[id(existing)]
            for parent in top.parents:
                if id(parent) not in known:
                    known.add(id(parent))
                    existing.parents.append(parent)

    def add_fresh(self, node: StackNode) -> None:
        self.by_state[node.state] = node
        self.parent_ids[id(node)] = {id(p) for p in node.parents}
        self.order.append(node)


class _Task:
    """Reductions to make from ``node``: along every path, or (``via``) only the
    paths whose first step goes down to ``via``."""

    def __init__(self, node: StackNode, via: StackNode | None) -> None:
        self.node = node
        self.via = via


class Trial:
    """A stack fed on trial: the real ``node`` with ``pushed`` LR states over it,
    not built as nodes. A mask asks of each dependent token group whether some
    stack takes its lexemes, and keeps none of those stacks: building and interning
    nodes for them was most of such a mask's cost. A trial is one parse: where
    the parse branches, each branch is a trial of its own."""

    node: Final[StackNode]
    pushed: Final[tuple[int, ...]]

    def __init__(self, node: StackNode, pushed: tuple[int, ...]) -> None:
        self.node = node
        self.pushed = pushed

    def top(self) -> int:
        """The LR state on top."""
        return self.pushed[-1] if self.pushed else self.node.state


class GLRParser:
    """Feeds terminals to graph-structured stacks, following every conflict."""

    def __init__(self, table: LRTable, max_step_work: int = MAX_STEP_WORK, max_trial_work: int = MAX_TRIAL_WORK) -> None:
        self.table = table
        self.max_step_work = max_step_work
        self.max_trial_work = max_trial_work
        self._nodes: dict[tuple[int, ...], StackNode] = {}
        self._next_uid = 0
        self._work = 0  # reduction paths for the current terminal
        self._start = self._settle(self._intern(StackNode(0, [], -1)))
        self.indentation: Indentation | None = table.indentation
        self._views: dict[int, View] = {}  # node uid -> its stack's view (indentation only)

    def initial(self) -> list[StackNode]:
        return [self._start]

    def start(self, lexer: Lexer, ignored: list[bool]) -> tuple[int, list[StackNode]]:
        """The lexer state and the tops where a text begins: the start, or for a
        text that begins a line (``Indentation.line_start``) after that newline,
        which is no byte of the text."""
        tops = self.initial()
        state = START
        indentation = self.indentation
        if indentation is not None:
            for byte in indentation.line_start:
                state, finished = lexer.step(state, byte)
                if finished:
                    tops = self.feed_lexeme(tops, finished, ignored)
        return state, tops

    def feed(self, tops: list[StackNode], terminal: int) -> list[StackNode]:
        """The tops after ``terminal`` is shifted (after all reductions it needs);
        empty when no parse can take it. ``tops`` is left untouched."""
        indentation = self.indentation
        if indentation is not None and terminal < len(indentation.lexed) and indentation.lexed[terminal] >= 0:
            return self._feed_newline(tops, indentation.lexed[terminal], indentation)
        if len(tops) == 1:
            single = self._feed_deterministic(tops[0], terminal)
            if single is not None:
                return single
        level = self._reduce_all(tops, terminal)
        actions = self.table.actions
        shifted: dict[int, list[StackNode]] = {}
        for node in level.order:
            for action in actions[node.state].get(terminal, _NO_ACTIONS):
                if action != ACCEPT and action & 1 == 0:
                    under = shifted.setdefault(action >> 1, [])
                    if node not in under:
                        under.append(node)
        if not shifted:
            return []
        final = self._finalize(level)
        settled = [
            self._settle(self._intern(StackNode(state, [final.get(id(p), p) for p in under], -1)))
            for state, under in shifted.items()
        ]
        return self._merge_by_state(settled)

    def takes(self, tops: list[StackNode], terminal: int) -> bool:
        """Whether some parse shifts ``terminal`` (``feed`` would return tops), found
        on trial (no node built) unless that is past ``max_trial_work``."""
        unsure = False
        for top in tops:
            known = self.trial_takes(Trial(top, ()), terminal, False)
            if known == 1:
                return True
            unsure = unsure or known < 0
        return unsure and bool(self.feed(tops, terminal))

    def trial_takes(self, trial: Trial, terminal: int, accepting: bool) -> int:
        """Whether some parse of ``trial`` shifts ``terminal`` (or, ``accepting``,
        accepts it): 1 or 0, or -1 past ``max_trial_work`` (then only ``feed`` can tell)."""
        return self._trial_run(trial, terminal, None, accepting)

    def trial_feed(self, trial: Trial, terminal: int, out: list[Trial]) -> bool:
        """Append to ``out`` the stacks after ``terminal`` is shifted on ``trial``,
        one per parse that takes it; False past ``max_trial_work``."""
        return self._trial_run(trial, terminal, out, False) >= 0

    def _trial_run(self, trial: Trial, terminal: int, out: list[Trial] | None, accepting: bool) -> int:
        """Every parse of ``trial`` on ``terminal``, each followed on its own (no
        graph: a branch is another trial). Without ``out``, 1 at the first shift (or
        accept); with it, each shifted stack is appended. 0 when none, -1 past
        ``max_trial_work`` steps (a cyclic or very ambiguous grammar)."""
        indentation = self.indentation
        if indentation is not None and terminal < len(indentation.lexed) and indentation.lexed[terminal] >= 0:
            return self._trial_newline(trial, indentation.lexed[terminal], out, indentation)
        table = self.table
        work: list[Trial] = [trial]
        found = 0
        steps = 0
        while work:
            current = work.pop()
            steps += 1
            if steps > self.max_trial_work:
                return -1
            node = current.node
            pushed = current.pushed
            actions = table.actions[current.top()].get(terminal, _NO_ACTIONS)
            if len(actions) == 1 and actions[0] & 1 == 1 and actions[0] != ACCEPT and pushed:
                if table.rule_length[actions[0] >> 1] == 1:  # a unit rule: the reductions that follow it at once
                    chain = table.unit_chain(pushed[-2] if len(pushed) > 1 else node.state, pushed[-1], terminal)
                    work.append(Trial(node, pushed[:-1] + (chain & CHAIN_STATE,)))
                    steps += chain >> CHAIN_SHIFT
                    continue
            for action in actions:
                if action == ACCEPT:
                    if accepting:
                        return 1
                elif action & 1 == 0:
                    if out is not None:
                        out.append(Trial(node, pushed + (action >> 1,)))
                        found = 1
                    elif not accepting:
                        return 1
                else:
                    rule = action >> 1
                    lhs = table.rule_lhs[rule]
                    kept = len(pushed) - table.rule_length[rule]
                    if kept >= 0:
                        rest = pushed[:kept]
                        work.append(Trial(node, rest + (table.gotos[rest[-1] if rest else node.state][lhs],)))
                    else:
                        ends = [node]
                        for _ in range(-kept):
                            ends = _parents_of(ends)
                        steps += len(ends)
                        for base in ends:
                            work.append(Trial(base, (table.gotos[base.state][lhs],)))
        return found

    def _feed_deterministic(self, node: StackNode, terminal: int) -> list[StackNode] | None:
        """``feed`` for one top while every step has one action and one path under
        it (plain LR parsing, the common case); None as soon as it does not."""
        table = self.table
        for _ in range(self.max_step_work):
            actions = table.actions[node.state].get(terminal)
            if actions is None:
                return []
            if len(actions) != 1 or actions[0] == ACCEPT:
                return None
            action = actions[0]
            if action & 1 == 0:
                return [self._settle(self._intern(StackNode(action >> 1, [node], -1)))]
            parent = node.only_parent()
            if parent is not None and table.rule_length[action >> 1] == 1:  # a unit rule: the chain it starts at once
                chain = table.unit_chain(parent.state, node.state, terminal)
                node = self._intern(StackNode(chain & CHAIN_STATE, [parent], -1))
                continue
            reduced = self._reduce_single_path(node, action >> 1)
            if reduced is None:
                return None
            node = reduced
        return None

    def feed_lexeme(self, tops: list[StackNode], alternatives: tuple[int, ...], ignored: list[bool]) -> list[StackNode]:
        """The tops after one lexeme: each of its equal-extent alternatives fed (an
        ``ignored`` terminal never reaches the parser: it leaves the stacks as they
        are), tops in the same state merged."""
        if len(alternatives) == 1:
            terminal = alternatives[0]
            return tops if ignored[terminal] else self.feed(tops, terminal)
        following: list[StackNode] = []
        for terminal in alternatives:
            following.extend(tops if ignored[terminal] else self.feed(tops, terminal))
        return self._merge_by_state(following)

    def view_of(self, node: StackNode) -> View:
        """The view (``engine.indentation``) of the stacks under ``node``;
        ``AmbiguityLimitError`` where two of its parses disagree on it."""
        view = self.known_view(node)
        if view is None:
            raise AmbiguityLimitError("two parses of the text disagree on its indentation: the grammar is too "
                                      "ambiguous to follow with an indenter")
        return view

    def known_view(self, node: StackNode) -> View | None:
        """``view_of``, None where parses disagree (or a cycle of empty rules
        stands under ``node``), remembered per node."""
        indentation = self.indentation
        assert indentation is not None
        memo = self._views
        known = memo.get(node.uid)
        if known is not None:
            return known
        if len(memo) > MAX_STACK_VIEWS:
            memo.clear()
        pending = [node]
        steps = 0
        while pending:
            current = pending[len(pending) - 1]
            if current.uid in memo:
                pending.pop()
                continue
            missing = [parent for parent in current.parents if parent.uid not in memo]
            if missing:
                steps += 1
                if steps > self.max_step_work:
                    return None
                pending.extend(missing)
                continue
            pending.pop()
            if not current.parents:
                view = indentation.apply(BOTTOM, current.state)
            else:
                view = indentation.apply(memo[current.parents[0].uid], current.state)
                for parent in current.parents:
                    if indentation.apply(memo[parent.uid], current.state) != view:
                        return None
            memo[current.uid] = view
        return memo[node.uid]

    def _feed_newline(self, tops: list[StackNode], width: int, indentation: Indentation) -> list[StackNode]:
        """``feed`` for a lexed newline of ``width``: on each top, what it stands
        for there (``Indentation.after_newline``)."""
        out: list[StackNode] = []
        for top in tops:
            made = indentation.after_newline(self.view_of(top), width)
            if made is None:
                continue
            current = [top]
            for terminal in made:
                current = self.feed(current, terminal)
                if not current:
                    break
            out.extend(current)
        return self._merge_by_state(out) if len(out) > 1 else out

    def _trial_newline(self, trial: Trial, width: int, out: list[Trial] | None, indentation: Indentation) -> int:
        """``_trial_run`` for a lexed newline of ``width``: 1 or 0, -1 where only
        the real stacks can tell."""
        view = self.known_view(trial.node)
        if view is None:
            return -1
        for state in trial.pushed:
            view = indentation.apply(view, state)
        made = indentation.after_newline(view, width)
        if made is None:
            return 0
        trials = [trial]
        for terminal in made:
            following: list[Trial] = []
            for current in trials:
                if self._trial_run(current, terminal, following, False) < 0:
                    return -1
            trials = following
            if not trials:
                return 0
        if out is not None:
            out.extend(trials)
        return 1

    def _merge_by_state(self, nodes: list[StackNode]) -> list[StackNode]:
        """One top per LR state: tops in the same state become one node over all
        their parents (settling can bring two shifts to one state)."""
        by_state: dict[int, list[StackNode]] = {}
        for node in nodes:
            same = by_state.setdefault(node.state, [])
            if node not in same:
                same.append(node)
        merged: list[StackNode] = []
        for state, same in by_state.items():
            merged.append(same[0] if len(same) == 1 else self._intern(StackNode(state, _parents_of(same), -1)))
        return merged

    def accepts_end(self, tops: list[StackNode]) -> bool:
        """Whether the input so far is a complete sentence (with the levels still
        open closed, for an indentation-sensitive grammar)."""
        indentation = self.indentation
        if indentation is not None:
            closed: list[StackNode] = []
            for top in tops:
                current = [top]
                for terminal in indentation.at_end(self.view_of(top)):
                    current = self.feed(current, terminal)
                closed.extend(current)
            if not closed:
                return False
            tops = self._merge_by_state(closed)
        unsure = False
        for top in tops:
            known = self.trial_takes(Trial(top, ()), self.table.end, True)
            if known == 1:
                return True
            unsure = unsure or known < 0
        if not unsure:
            return False
        level = self._reduce_all(tops, self.table.end)
        actions = self.table.actions
        end = self.table.end
        return any(ACCEPT in actions[node.state].get(end, _NO_ACTIONS) for node in level.order)

    def _reduce_all(self, tops: list[StackNode], terminal: int) -> _Level:
        """Every reduction on ``terminal``, to a fixpoint, into one level.

        A new node's reductions follow every path under it; when a node gains a
        parent, only the paths through that edge are new (and every path of the
        nodes of this level standing on it, which only empty rules make). Edges are
        only ever added, so this ends.
        """
        table = self.table
        level = _Level(tops)
        self._work = 0
        pending = [_Task(node, None) for node in level.order]
        while pending:
            task = pending.pop()
            node = task.node
            via = task.via
            for action in table.actions[node.state].get(terminal, _NO_ACTIONS):
                if action == ACCEPT or action & 1 == 0:
                    continue
                rule = action >> 1
                length = table.rule_length[rule]
                if via is None:
                    ends = self._path_ends(node, length)
                elif length == 0:
                    continue  # an empty reduction does not go through any edge
                else:
                    ends = self._path_ends(via, length - 1)
                lhs = table.rule_lhs[rule]
                for base in ends:
                    self._add_edge(level, table.gotos[base.state][lhs], base, pending)
        return level

    def _path_ends(self, node: StackNode, length: int) -> list[StackNode]:
        """The nodes ``length`` parent steps under ``node``, along every path."""
        ends = [node]
        for _ in range(length):
            ends = _parents_of(ends)
        self._work += max(1, len(ends))
        if self._work > self.max_step_work:
            raise AmbiguityLimitError(
                f"one terminal needed more than {self.max_step_work} reductions: the grammar "
                "is too ambiguous to follow every parse"
            )
        return ends

    def _add_edge(self, level: _Level, state: int, base: StackNode, pending: list[_Task]) -> None:
        """Put a node in ``state`` on ``base`` in this level: a new node, or one more
        parent for the level's node in that state."""
        existing = level.by_state.get(state)
        if existing is None:
            node = StackNode(state, [base], -1)
            level.add_fresh(node)
            pending.append(_Task(node, None))
            return
        known = level.parent_ids[id(existing)]
        if id(base) in known:
            return
        known.add(id(base))
        existing.parents.append(base)
        pending.append(_Task(existing, base))
        changed = existing
        self._requeue_above(level, changed, pending)

    def _requeue_above(self, level: _Level, changed: StackNode, pending: list[_Task]) -> None:
        """Queue every node of the level standing on ``changed``, directly or not:
        their paths through it have a new branch (only empty rules put a node of a
        level on another)."""
        marked = {id(changed)}
        grew = True
        while grew:
            grew = False
            for node in level.order:
                if id(node) not in marked and any(id(p) in marked for p in node.parents):
                    marked.add(id(node))
                    pending.append(_Task(node, None))
                    grew = True
        if any(id(p) in marked for p in changed.parents):
            pending.append(_Task(changed, None))  # it stands on itself: its own paths grew too

    def _finalize(self, level: _Level) -> dict[int, StackNode]:
        """Intern the level's new nodes, parents first: id() of each -> its node.
        Nodes on a cycle (a grammar whose empty rules loop) keep fresh ids."""
        final: dict[int, StackNode] = {}
        waiting = [node for node in level.order if id(node) in level.parent_ids]
        progress = True
        while waiting and progress:
            progress = False
            still: list[StackNode] = []
            for node in waiting:
                if any(id(p) in level.parent_ids and id(p) not in final for p in node.parents):
                    still.append(node)
                    continue
                node.parents = [final.get(id(p), p) for p in node.parents]
                final[id(node)] = self._intern(node)
                progress = True
            waiting = still
        for node in waiting:  # on a cycle: no canonical form, so not shared
            node.uid = self._next_uid
            self._next_uid += 1
            final[id(node)] = node
        for node in waiting:
            node.parents = [final.get(id(p), p) for p in node.parents]
        return final

    def _intern(self, node: StackNode) -> StackNode:
        """The canonical node with ``node``'s state and parents (``node`` itself if new)."""
        uids = sorted(parent.uid for parent in node.parents)
        key = (node.state, *uids)
        found = self._nodes.get(key)
        if found is None:
            node.uid = self._next_uid
            self._next_uid += 1
            self._nodes[key] = node
            found = node
        return found

    def _settle(self, node: StackNode) -> StackNode:
        """``node`` after the reductions its state makes whatever comes next
        (``LRTable.default_reduce``), while the stack under it is a single path;
        bounded, since an optimization needs no fixpoint."""
        table = self.table
        for _ in range(table.state_count):
            rule = table.default_reduce[node.state]
            if rule < 0:
                return node
            reduced = self._reduce_single_path(node, rule)
            if reduced is None:
                return node
            node = reduced
        return node

    def _reduce_single_path(self, node: StackNode, rule: int) -> StackNode | None:
        """The top after reducing by ``rule`` on ``node``, or None when the stack
        under it branches within the rule's length."""
        table = self.table
        base = node
        for _ in range(table.rule_length[rule]):
            below = base.only_parent()
            if below is None:
                return None
            base = below
        return self._intern(StackNode(table.gotos[base.state][table.rule_lhs[rule]], [base], -1))


def _parents_of(nodes: list[StackNode]) -> list[StackNode]:
    """Every parent of ``nodes``, once each, in order of first appearance."""
    parents: list[StackNode] = []
    seen: set[int] = set()
    for node in nodes:
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                parents.append(parent)
    return parents


_NO_ACTIONS: Final[tuple[int, ...]] = ()


"""Lexer views: the automaton of only the terminals a parser state takes next.

One automaton lexes every terminal at once, so inside a string its state holds a
part for every string-like terminal still possible: a key's prefix, each pattern,
each bounded string's count of characters. A schema with several of these
multiplies them (one MaskBench schema: 13,477 states, three 255-character strings
beside four patterns and a date), and each state's token groups cost a walk of
the vocabulary, on first use. But a mask is asked for a lexer state *and* an LR
state, which takes only some terminals: what a token does that matters there is
what it does in those terminals' own automaton (the view), whose states are few
and stand for many of the whole automaton's (after ``"Read`` in a title, only
the title's count is left).

A view may stand for a state only where it ends lexemes where the whole
automaton does. By maximal munch the whole automaton ends a lexeme where no
terminal at all can go on, the view where none of its own can. Where the view
fails outright (no lexeme of its terminals), the whole automaton may go on into a
lexeme that only other terminals can become: harmless, the parser takes none of
them. But where a state accepting one of the view's terminals is extended by a
byte into such a lexeme, the view would end a lexeme the whole automaton does not
(a view's integer up to 100 ends at ``100``, but ``1000`` is still a number).
Such states, and every state that can reach one, are *unsafe* for the view and
keep the whole automaton's groups. Elsewhere each token ends the same lexemes
from both, with the view's alternatives those of the whole automaton among the
view's terminals, and leaves a lexeme in progress that can become the same of
them; a parser that takes no other terminal tells the two apart in nothing. And
lexing in a view is a restriction of the whole automaton's (the same lexemes,
fewer alternatives): where a mask checks one stack top's dependent groups
against the other tops of a GLR stack too, a view can only refuse there what the
whole automaton's groups would refuse, and each top's own entry holds what it takes.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.dfa import DEAD, AutomatonLimitError, build_region
from structgen.engine.lexer import START, Lexer

LONG_PATTERN_STATES: Final = 256
"""A terminal whose own automaton has more states than this is *long* (a string
of some 30 characters at most, or more): it is what multiplies the whole
automaton's states. Every view takes in every short terminal, so views differ
only in the long terminals they take: the parser states that take different
keys (each its own set of short terminals) share one view and its groups, where
one view per set had each key position of a large object build its own
(about 60 ms each at 2,400 states, one schema's 14 views in one instance)."""

MAX_VIEW_STATES: Final = 20_000
"""The most states all of one lexer's views may have together (each joins a copy
of the lexer's table, ``Lexer.joined``); a view past it is not built, and the
whole automaton serves its terminals."""

MAX_VIEW_SHARE: Final = 0.75
"""A view is built only while it has at most this share of the whole automaton's
states. One about as big stands for one whole state per state of its own, so its
groups cost what the whole automaton's do, and building it is a step's wait for
nothing (one schema's view of every short terminal had all 2,412 of the whole
automaton's states: 0.3 s in a step). Yet a view of a little over half can be
what makes groups cheap: dropping a 32-character count leaves a date pattern's
states converging with the string body (MaskBench's ``Github_hard---o81135``,
908 of 1,640 states: steps over 0.32 ms 250 to 30)."""

MAX_VIEWS: Final = 64
"""The most sets of terminals one lexer tries to build a view for; past it the
whole automaton serves the new sets."""


class _View:
    """Where one view's automaton starts in the joined lexer, its state count, and
    which states of the whole automaton it may not stand for."""

    def __init__(self, offset: int, count: int, unsafe: list[bool]) -> None:
        self.offset = offset
        self.count = count
        self.unsafe = unsafe
        self.states: dict[int, int] = {}  # whole automaton's state -> its state in the joined lexer


class LexerViews:
    """The views of one lexer, built on first use, and ``lexer``: the whole
    automaton with every view's states after its own (``Lexer.joined``), so that
    groups, sequences and verdicts name view states as they name any other."""

    def __init__(self, whole: Lexer, reach_bits: tuple[int, ...]) -> None:
        """``whole`` keeps its ``patterns``; ``reach_bits``: per state of ``whole``,
        its reachable terminals as a bit set."""
        self.whole = whole
        self.lexer = whole
        self._reach_bits = reach_bits
        self._terminals = (1 << len(whole.patterns or [])) - 1  # every terminal, as a bit set (not END)
        self._views: dict[int, _View | None] = {}
        self._short = 0  # the terminals that are not long, as a bit set
        self.count_as_long(LONG_PATTERN_STATES)
        self._view_states = 0  # in all the views built
        self.max_view_states = MAX_VIEW_STATES
        self.max_view_share = MAX_VIEW_SHARE
        self.max_views = MAX_VIEWS
        # the whole automaton's edges, found once (_explore): a shortest path to
        # every state, and the states each one is entered from
        self._parent: list[int] = []
        self._byte: list[int] = []
        self._predecessors: list[list[int]] = []
        self._successors: list[list[int]] = []

    def count_as_long(self, states: int) -> None:
        """Count as long the terminals whose own automaton has more than ``states``
        states (``LONG_PATTERN_STATES``; before any view is built). With 0, every
        view drops every terminal it does not take, as much as a view can: what
        tests of the views' exactness want."""
        assert not self._views, "views are built already"
        self._short = 0
        sizes = self.whole.dfa.pattern_states
        if sizes is not None:
            for terminal in range(len(sizes)):
                if sizes[terminal] <= states:
                    self._short |= 1 << terminal

    def state_for(self, lexer_state: int, terminals: int) -> int:
        """The state whose groups stand for ``lexer_state``'s under a parser that
        takes no terminal outside ``terminals`` (a bit set) next: its state in
        their view, or ``lexer_state`` itself where no view may stand for it or
        none would drop anything."""
        if lexer_state == START:
            return lexer_state
        terminals &= self._terminals  # an LR state's actions on END name no view of their own
        terminals |= self._short  # views are told apart by their long terminals only
        if self._reach_bits[lexer_state] & ~terminals == 0:
            return lexer_state  # every terminal it can become is taken: the view is the same automaton
        view = self._view(terminals)
        if view is None or view.unsafe[lexer_state]:
            return lexer_state
        found = view.states.get(lexer_state, DEAD)
        if found == DEAD:
            path = self._path(lexer_state)
            seen_from = DEAD if path is None else self._run(view.offset, path)
            # DEAD: the lexeme can become none of the view's terminals (which the
            # tables' empty entries answer first), or no lexeme leads to the state
            found = lexer_state if seen_from == DEAD else seen_from
            view.states[lexer_state] = found
        return found

    def prepare(self, terminals: int) -> None:
        """Build now the view that ``state_for`` gives a parser taking no terminal
        outside ``terminals``, so that no step waits for its automaton."""
        terminals &= self._terminals
        terminals |= self._short
        if terminals != self._terminals | self._short:
            self._view(terminals)

    def regions(self) -> list[tuple[int, int]]:
        """The first state and the state count of each view built, in the joined lexer."""
        return [(view.offset, view.count) for view in self._views.values() if view is not None]

    def _view(self, terminals: int) -> _View | None:
        """The view of ``terminals``, built on first use (None: none is built)."""
        if terminals in self._views:
            return self._views[terminals]
        view = self._build(terminals) if len(self._views) < self.max_views else None
        self._views[terminals] = view
        return view

    def _build(self, terminals: int) -> _View | None:
        """The view of ``terminals``, its states joined after the lexer's; None past
        ``max_view_states`` in all or ``max_view_share`` of the whole automaton (a
        view that does not fit spends the states it was allowed: each try is an
        automaton built inside some step)."""
        patterns = self.whole.patterns
        shortest = self.whole.shortest
        assert patterns is not None
        chosen = [terminal for terminal in range(len(patterns)) if terminals >> terminal & 1]
        left = self.max_view_states - self._view_states
        if left <= 0:
            return None
        allowed = min(left, int(self.whole.dfa.state_count * self.max_view_share))
        offset = self.lexer.dfa.state_count
        try:
            table, accepts = build_region(  # numbered after the lexer's states: joined as it is
                [patterns[terminal] for terminal in chosen],
                offset,
                allowed,
                None if shortest is None else [shortest[terminal] for terminal in chosen],
                self.whole.pattern_cache,  # the patterns' own automata, built with the lexer's
            )
        except AutomatonLimitError:
            self._view_states += allowed
            return None
        self._view_states += len(accepts)
        for labels in accepts:  # each its own list: from indices among the chosen to terminals
            labels[:] = [chosen[i] for i in labels]
        self.lexer = self.lexer.joined(table, accepts)
        return _View(offset, len(accepts), self._unsafe(terminals))

    def _run(self, state: int, path: bytes) -> int:
        """Where ``path`` leads from ``state`` in the joined lexer (``DEAD`` if off)."""
        table = self.lexer.table
        for byte in path:
            state = table[state * 256 + byte]
            if state == DEAD:
                return DEAD
        return state

    def _unsafe(self, terminals: int) -> list[bool]:
        """Per state of the whole automaton, whether a lexeme from it can reach a
        state that accepts one of ``terminals`` and that a byte extends into a
        lexeme none of them can become."""
        self._explore()
        whole = self.whole
        reach = self._reach_bits
        unsafe = [False] * whole.dfa.state_count
        pending: list[int] = []
        for state in range(whole.dfa.state_count):
            accepted = 0
            for terminal in whole.accepts[state]:
                accepted |= 1 << terminal
            if accepted & terminals:
                for target in self._successors[state]:
                    if reach[target] & terminals == 0:
                        unsafe[state] = True
                        pending.append(state)
                        break
        while pending:
            state = pending.pop()
            for previous in self._predecessors[state]:
                if not unsafe[previous]:
                    unsafe[previous] = True
                    pending.append(previous)
        return unsafe

    def _path(self, lexer_state: int) -> bytes | None:
        """The bytes of a shortest lexeme that leads from ``START`` to ``lexer_state``
        (None if none does, which ``build_dfa``'s automata never have)."""
        self._explore()
        path: list[int] = []
        state = lexer_state
        while state != START:
            if self._parent[state] < 0:
                return None
            path.append(self._byte[state])
            state = self._parent[state]
        path.reverse()
        return bytes(path)

    def _explore(self) -> None:
        """The whole automaton's edges (each distinct target once) and a
        breadth-first tree of shortest paths from ``START``; every state is on it
        (``build_dfa`` keeps only states reachable from the start)."""
        if self._parent:
            return
        table = self.whole.table
        count = self.whole.dfa.state_count
        self._parent = [-1] * count
        self._byte = [0] * count
        self._predecessors = [[] for _ in range(count)]
        self._successors = [[] for _ in range(count)]
        seen = [False] * count
        seen[START] = True
        order = [START]
        position = 0
        while position < len(order):
            state = order[position]
            position += 1
            targets: list[int] = []
            last = DEAD
            for byte in range(256):
                target = table[state * 256 + byte]
                if target == DEAD or target == last:
                    continue  # rows are runs of equal targets: look each run up once
                last = target
                if target not in targets:
                    targets.append(target)
                    self._predecessors[target].append(state)
                if not seen[target]:
                    seen[target] = True
                    self._parent[target] = state
                    self._byte[target] = byte
                    order.append(target)
            self._successors[state] = targets

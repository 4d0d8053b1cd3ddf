"""The states of an object written in declared order, for the keywords that look at
the whole object: ``minProperties``/``maxProperties`` and ``dependentRequired``
(and the array form of ``dependencies``).

The members are decided one by one in declared order (written or skipped), then
extra properties repeat; the extras include *special* names, undeclared names
that take part in a dependency, each with a terminal of its own. A state is
``(position, written, owed, had, found)``: the member to decide next
(``len(members)`` for the extras), how many properties were written (capped where
more no longer matters), the names a written property needs that are still to
come, the names written that a property still to come may need, and which of the
object's *witnesses* (``shared.SOME``: some property a pattern finds holds a value
of a schema) a property written so far was (a bit each). A property a witness's
pattern finds is written as one of its *marks*, the bits of the witnesses its
value is. Only the reachable states
from which the object can still be closed are kept, so a rule is never a dead end;
none at all means no object satisfies the keywords.
"""

from __future__ import annotations

from typing import NamedTuple

MAX_OBJECT_STATES = 2_000
"""States (one grammar rule each) one object's counts and dependencies may take;
past it the translator drops what costs most and reports it approximated."""

MAX_UNORDERED_STATES = 512
"""States an object in any property order may take: which members were written is
part of the state (2**9 for nine optional members), and each state's rule has an
alternative per member left; past it the object keeps the declared order."""


class TooManyStates(Exception):
    """The object needs more than ``MAX_OBJECT_STATES`` states."""


class State(NamedTuple):
    """Hashed often: a tuple's hash is the fastest."""

    position: int
    written: int  # properties written so far, capped
    owed: frozenset[str]
    had: frozenset[str]
    found: int = 0  # the witnesses met, a bit each


class Move(NamedTuple):
    """One alternative of a state's rule: ``member``/``special`` write a property
    (``name``), ``extra`` an undeclared one of no dependency, ``skip`` leaves the
    member out, ``end`` closes the object (``target`` None); ``mark``: the
    witnesses the property's value is."""

    kind: str
    name: str | None
    target: State | None
    mark: int = 0


class ObjectStates:
    """``members``: (name, required) in declared order; ``specials``: undeclared
    names an extra property may have, each its own alternative; ``generic``:
    whether other extra properties may follow; ``low``/``high``: the property
    counts; ``needs``: name -> the names that must be present beside it;
    ``limit``: the most states (None: no limit). ``unordered``: members in any
    order, extras among them (``property_order="any"``): every state is then at
    the extras' position, and ``had`` keeps every member written. ``witnesses``:
    how many there are (the object ends once each is met); ``marks``: name -> the
    marks a member or special may be written with (absent: none, 0), and
    ``extra_marks`` those of the other extra properties."""

    def __init__(self, members: list[tuple[str, bool]], specials: list[str], generic: bool, low: int,
                 high: int | None, needs: dict[str, tuple[str, ...]], limit: int | None = MAX_OBJECT_STATES,
                 unordered: bool = False, witnesses: int = 0, marks: dict[str, tuple[int, ...]] | None = None,
                 extra_marks: tuple[int, ...] = (0,)) -> None:
        self.unordered = unordered
        self.members = members
        self.specials = specials
        self.generic = generic
        self.every_witness = (1 << witnesses) - 1
        self.marks = marks or {}
        self.extra_marks = extra_marks
        self.low = low
        self.high = high
        self.needs = {name: tuple(n for n in wanted if n != name) for name, wanted in needs.items()}
        self.extras_at = len(members)
        self.slot = {name: i for i, (name, _) in enumerate(members)} | {name: self.extras_at for name in specials}
        if unordered:  # any member may come at any point: all are where the extras are
            self.slot = {name: self.extras_at for name in self.slot}
        self.required = frozenset(name for name, needed in members if needed)
        self.cap = high if high is not None else max(low, 1)  # counts past it behave alike
        start = self.canonical(self.extras_at if unordered else 0, 0, frozenset(), frozenset(), 0)
        self.moves = self.live(self.reachable(start, limit)) if start is not None else {}
        self.start = start if start in self.moves else None

    # -- one step

    def canonical(self, position: int, written: int, owed: frozenset[str], had: frozenset[str],
                  found: int) -> State | None:
        """The state at ``position``, forgetting what no later choice depends on;
        None when a name still owed can no longer come."""
        if any(self.slot[name] < position for name in owed):
            return None
        if had and not self.unordered:
            had = frozenset(name for name in had if self.needed_later(name, position))
        return State(position, written, owed, had, found)

    def needed_later(self, name: str, position: int) -> bool:
        """Whether a property still to come at ``position`` may need ``name``."""
        return any(name in wanted and self.slot.get(source, -1) >= position
                   for source, wanted in self.needs.items())

    def write(self, name: str, state: State, mark: int) -> State | None:
        """The state after writing ``name`` with ``mark``; None when something it
        needs was left out."""
        if self.high is not None and state.written >= self.high:
            return None
        owed = set(state.owed - {name})
        for wanted in self.needs.get(name, ()):
            if wanted in state.had:
                continue
            slot = self.slot.get(wanted)
            if slot is None or slot < state.position:
                return None  # never allowed here, or decided already and absent
            owed.add(wanted)
        after = state.position + 1 if state.position < self.extras_at else state.position
        return self.canonical(after, min(state.written + 1, self.cap), frozenset(owed), state.had | {name},
                              state.found | mark)

    def step(self, state: State) -> list[Move]:
        """Every move out of ``state`` that keeps the state set's rules."""
        moves: list[Move] = []
        if state.position < self.extras_at:
            name, required = self.members[state.position]
            moves += self.writing("member", name, state)
            if not required and name not in state.owed:
                skipped = self.canonical(state.position + 1, state.written, state.owed, state.had, state.found)
                if skipped is not None:
                    moves.append(Move("skip", None, skipped))
            return moves
        if self.unordered:
            for name, _ in self.members:
                if name not in state.had:
                    moves += self.writing("member", name, state)
        if state.written >= self.low and not state.owed and (not self.unordered or self.required <= state.had) \
                and state.found == self.every_witness:
            moves.append(Move("end", None, None))
        if self.generic and (self.high is None or state.written < self.high):
            written = min(state.written + 1, self.cap)
            moves += [Move("extra", None, State(state.position, written, state.owed, state.had, state.found | mark), mark)
                      for mark in self.extra_marks]
        for name in self.specials:
            moves += self.writing("special", name, state)
        return moves

    def writing(self, kind: str, name: str, state: State) -> list[Move]:
        """The moves writing ``name``, one per mark it may have."""
        moves = []
        for mark in self.marks.get(name, (0,)):
            target = self.write(name, state, mark)
            if target is not None:
                moves.append(Move(kind, name, target, mark))
        return moves

    # -- the whole set

    def reachable(self, start: State, limit: int | None) -> dict[State, list[Move]]:
        moves: dict[State, list[Move]] = {}
        todo = [start]
        while todo:
            state = todo.pop()
            if state in moves:
                continue
            if limit is not None and len(moves) >= limit:
                raise TooManyStates(f"more than {limit} states")
            moves[state] = self.step(state)
            todo.extend(move.target for move in moves[state] if move.target is not None and move.target not in moves)
        return moves

    @staticmethod
    def live(moves: dict[State, list[Move]]) -> dict[State, list[Move]]:
        """The states from which the object can be closed, with their moves among them."""
        sources: dict[State, list[State]] = {}
        for state, out in moves.items():
            for move in out:
                if move.target is not None:
                    sources.setdefault(move.target, []).append(state)
        todo = [state for state, out in moves.items() if any(move.kind == "end" for move in out)]
        alive = set(todo)
        while todo:
            for source in sources.get(todo.pop(), ()):
                if source not in alive:
                    alive.add(source)
                    todo.append(source)
        return {state: [move for move in moves[state] if move.target is None or move.target in alive]
                for state in moves if state in alive}

"""``StepBound``: the most work one mask-and-accept step of a compiled grammar may do.

A step's mask reads the table entry of its (lexer state, stack top) pair, and the
dependent groups of that entry against the real stacks (docs/design.md §11). What
it may have to build first is bounded by the engine's limits, and by what the
compile left unbuilt: this class says both, for one grammar and vocabulary, as
built so far (a step that builds something lowers what is left for the next).

The units are the engine's own, so a bound means the same on any machine:

- a *walk* of the vocabulary trie (``trie_nodes`` nodes): a step builds token
  groups only while ``states_left`` > 0, those of its own lexer state (or the
  view state standing for it) and of the states they derive from: the start
  state's and one reference state's, a walk each at most, and a chain of at most
  ``shift_chain`` states renamed from one another (``walks``: 3); but where every
  state left is one a step builds alone (``alone_left``: a state deep in a lexeme
  that can end there, a number's digits, whose groups are the start's with the
  lexeme ended in front and one walk of the tokens going on in it), one walk
  (``walks``: 1); else 0;
- an *entry* build classifies at most ``most_groups`` groups on partial stacks
  (each at most ``partial_work`` of them); a step builds at most one entry per
  top of its stack (one per parse alive: one, but for ambiguous grammars, whose
  parsers take at most ``step_work`` reductions a terminal) and ``refinements``
  refined ones, over at most ``paths`` stack paths, each knowing at most
  ``context`` LR states below the top (the stack depth a mask inspects);
- an *online check* follows one dependent group on at most ``trials`` trial
  stacks; a step makes at most ``most_dependent`` of them per entry it reads.
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr


@mypyc_attr(acyclic=True)
class StepBound:
    """What one step of a compiled grammar may do at most (see the module's docstring)."""

    def __init__(
        self,
        trie_nodes: int,
        lexer_states: int,
        states_left: int,
        alone_left: int,
        most_groups: int,
        entries_built: int,
        entries_possible: int,
        most_dependent: int,
        refinements: int,
        paths: int,
        context: int,
        trials: int,
        partial_work: int,
        shift_chain: int,
        step_work: int,
    ) -> None:
        self.trie_nodes = trie_nodes
        self.lexer_states = lexer_states
        self.states_left = states_left  # lexer states whose groups a step may still build (a walk each)
        self.alone_left = alone_left  # of those, the ones a step builds alone, from the start's groups
        self.most_groups = most_groups  # the most token groups a built lexer state has
        self.entries_built = entries_built
        self.entries_possible = entries_possible  # (lexer states) x (LR states)
        self.most_dependent = most_dependent  # the most groups a built entry leaves to check online
        self.refinements = refinements
        self.paths = paths
        self.context = context
        self.trials = trials
        self.partial_work = partial_work
        self.shift_chain = shift_chain
        self.step_work = step_work

    @property
    def walks(self) -> int:
        """Vocabulary walks one step may still make: 3 while some lexer state's
        groups are unbuilt (its own, the start state's, a reference state's); 1
        where each state left is built alone (``alone_left``); else 0 (a step then
        only reads entries, classifies groups and checks them)."""
        if self.states_left > self.alone_left:
            return 3
        return 1 if self.states_left > 0 else 0

    def as_dict(self) -> dict[str, int]:
        return {
            "walks": self.walks, "trie_nodes": self.trie_nodes, "lexer_states": self.lexer_states,
            "states_left": self.states_left, "alone_left": self.alone_left, "most_groups": self.most_groups, "entries_built": self.entries_built,
            "entries_possible": self.entries_possible, "most_dependent": self.most_dependent,
            "refinements": self.refinements, "paths": self.paths, "context": self.context, "trials": self.trials,
            "partial_work": self.partial_work, "shift_chain": self.shift_chain, "step_work": self.step_work,
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value}" for key, value in self.as_dict().items())
        return f"StepBound({fields})"

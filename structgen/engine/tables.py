"""Always-accepted and context-dependent tables (GreatGramma seed, Alg. 5).

For a lexer state and the LR state on top of the stack, each token group (tokens
that end the same lexemes and stop in the same lexer state, see ``spanner``) is
simulated on a *partial* stack holding only that LR state. LR actions read only
the states they pop, so if the group goes through without reading under the
known part, it goes through on every stack with that top (Prop. 3.5): it is
*always accepted*. If every branch fails within the known part, it never goes
through. Otherwise it is *context-dependent* and is checked online against the
real stack (Alg. 6). A table entry is then one token set (the union of the
always-accepted groups, an int) and the short list of context-dependent groups.

Entries are built on first use and kept; ``CompiledGrammar.precompute`` builds
them all up front for grammars small enough that this is cheap.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.lexer import START, Lexer
from structgen.engine.lr import ACCEPT, LRTable
from structgen.engine.spanner import EMPTY_SEQUENCE, SequenceTable, TokenGroup, token_groups
from structgen.engine.tokenset import add_to_row, to_row, word_count
from structgen.engine.vocab import TokenTrie

ALWAYS: Final = 0
DEPENDS: Final = 1
NEVER: Final = 2

MAX_PARTIAL_WORK: Final = 2_000
"""Partial stacks one classification may build; past it the group is simply
checked online (context-dependent), so the limit costs speed, never exactness."""

LARGE_GROUP: Final = 64
"""Groups with more tokens keep their token set; smaller ones are set bit by bit."""


class MaskEntry:
    """What the tokens do from one (lexer state, LR state)."""

    always: Final[int]
    row: Final[bytes]
    dependent: Final[list[TokenGroup]]

    def __init__(self, always: int, row: bytes, dependent: list[TokenGroup]) -> None:
        self.always = always
        self.row = row  # ``always`` as a bitmask row
        self.dependent = dependent


class _Partial:
    """The partial stacks after a terminal sequence, and whether some branch
    needed a state under the known part (or hit the work limit)."""

    stacks: Final[list[list[int]]]
    below: Final[bool]

    def __init__(self, stacks: list[list[int]], below: bool) -> None:
        self.stacks = stacks
        self.below = below


class MaskTables:
    """Token groups per lexer state and mask entries per (lexer state, LR state)."""

    def __init__(self, lexer: Lexer, table: LRTable, ignored: list[bool], trie: TokenTrie, vocab_size: int) -> None:
        self.lexer = lexer
        self.table = table
        self.ignored = ignored
        self.trie = trie
        self.vocab_size = vocab_size
        self.sequences = SequenceTable()
        self.lr_state_count = table.state_count
        self._groups: list[list[TokenGroup] | None] = [None] * lexer.dfa.state_count
        self._entries: list[MaskEntry | None] = [None] * (lexer.dfa.state_count * table.state_count)
        self._partials: dict[tuple[int, int], _Partial] = {}
        self.words = word_count(vocab_size)
        self._shared: dict[int, MaskEntry] = {}  # one set and row per distinct always-accepted set

    def groups(self, lexer_state: int) -> list[TokenGroup]:
        """The vocabulary grouped by what it does from ``lexer_state``."""
        found = self._groups[lexer_state]
        if found is None:
            found = token_groups(self.lexer, self.trie, lexer_state, self.sequences)
            for group in found:
                if len(group.token_ids) > LARGE_GROUP:
                    group.tokens(self.vocab_size)
            self._groups[lexer_state] = found
        return found

    def entry(self, lexer_state: int, lr_state: int) -> MaskEntry:
        index = lexer_state * self.lr_state_count + lr_state
        found = self._entries[index]
        if found is None:
            found = self._build(lexer_state, lr_state)
            self._entries[index] = found
        return found

    def built_entries(self) -> int:
        return sum(1 for entry in self._entries if entry is not None)

    def _build(self, lexer_state: int, lr_state: int) -> MaskEntry:
        small = bytearray((self.vocab_size + 7) >> 3)
        always = 0
        dependent: list[TokenGroup] = []
        for group in self.groups(lexer_state):
            verdict = self.classify(lr_state, group.sequence, group.end_state)
            if verdict == DEPENDS:
                dependent.append(group)
            elif verdict == ALWAYS:
                if len(group.token_ids) > LARGE_GROUP:
                    always |= group.tokens(self.vocab_size)
                else:
                    add_to_row(small, group.token_ids)
        always |= int.from_bytes(small, "little")
        # many entries share one set (often the empty one): store it and its row once
        shared = self._shared.get(always)
        if shared is None:
            shared = MaskEntry(always, to_row(always, self.words), [])
            self._shared[always] = shared
        return MaskEntry(shared.always, shared.row, dependent)

    def classify(self, lr_state: int, sequence: int, end_state: int) -> int:
        """ALWAYS, NEVER or DEPENDS for the lexemes of ``sequence`` followed by a
        lexeme in progress in lexer state ``end_state``, from a stack topped by
        ``lr_state``."""
        partial = self._after(lr_state, sequence)
        stacks = partial.stacks
        if not stacks:
            return DEPENDS if partial.below else NEVER
        if end_state == START:
            return ALWAYS
        below = partial.below
        flag = [False]
        for terminal in self.lexer.reachable_terminals[end_state]:
            if self.ignored[terminal]:
                return ALWAYS
            if self._feed(stacks, terminal, flag):
                return ALWAYS
        return DEPENDS if below or flag[0] else NEVER

    def _after(self, lr_state: int, sequence: int) -> _Partial:
        """The partial stacks after ``sequence`` from ``[lr_state]`` (memoized by prefix)."""
        key = (lr_state, sequence)
        found = self._partials.get(key)
        if found is not None:
            return found
        if sequence == EMPTY_SEQUENCE:
            found = _Partial([[lr_state]], False)
        else:
            before = self._after(lr_state, self.sequences.parent[sequence])
            flag = [before.below]
            stacks: list[list[int]] = []
            if before.stacks:
                seen: set[tuple[int, ...]] = set()
                for terminal in self.lexer.accepts[self.sequences.last[sequence]]:
                    following = before.stacks if self.ignored[terminal] else self._feed(before.stacks, terminal, flag)
                    for stack in following:
                        key_stack = tuple(stack)
                        if key_stack not in seen:
                            seen.add(key_stack)
                            stacks.append(stack)
            found = _Partial(stacks, flag[0])
        self._partials[key] = found
        return found

    def _feed(self, stacks: list[list[int]], terminal: int, below: list[bool]) -> list[list[int]]:
        """Shift ``terminal`` on partial stacks after the reductions it needs; a
        reduction that would pop the known bottom sets ``below[0]``."""
        table = self.table
        work = [stack for stack in stacks]
        seen: set[tuple[int, ...]] = {tuple(stack) for stack in stacks}
        shifted: list[list[int]] = []
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
                    pushed = stack + [action >> 1]
                    key = tuple(pushed)
                    if key not in shifted_seen:
                        shifted_seen.add(key)
                        shifted.append(pushed)
                    continue
                rule = action >> 1
                keep = len(stack) - table.rule_length[rule]
                if keep < 1:
                    below[0] = True
                    continue
                base = stack[:keep]
                base.append(table.gotos[base[-1]][table.rule_lhs[rule]])
                key = tuple(base)
                if key not in seen:
                    seen.add(key)
                    work.append(base)
                    done += 1
                    if done > MAX_PARTIAL_WORK:
                        below[0] = True
                        return shifted
        return shifted

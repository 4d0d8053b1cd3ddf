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

With only the top state known, a state that reduces on most terminals (after an
operand in an expression grammar, say) leaves nearly every group dependent. So
an entry with many dependent groups is *refined*: the same groups classified
again with the next state down known too, up to ``MAX_CONTEXT`` states, each
refinement kept on its parent.

Entries are built on first use and kept; ``CompiledGrammar.precompute`` builds
the one-state entries up front for grammars small enough that this is cheap.
Where groups are built on first use (large lexers), an entry's groups are those
of the lexer state's place in the automaton of the terminals its LR state takes
(``views``).
"""

from __future__ import annotations

import gc
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64, u8

from structgen.engine.deadline import check_deadline, optional_work_over
from structgen.engine.lexer import START, Lexer
from structgen.engine.int_map import IntMap
from structgen.engine.mask_entry import MaskEntry
from structgen.engine.lr import LRTable
from structgen.engine.partial_stacks import FORGET_SHARE, Context, ContextMemo, Partial, PartialStacks, Stacks
from structgen.engine.lexeme_groups import (
    convergence_gain, converged_groups, ending_weight, ends_lexeme, first_moves, lexeme_groups,
)
from structgen.engine.shifted_groups import ShiftMarks, shift_renaming, shifted_groups
from structgen.engine.spanner import (
    EMPTY_SEQUENCE,
    Groups,
    SequenceTable,
    TokenGroup,
    Work,
    ended_groups,
    token_groups,
    union_words,
)
from structgen.engine.terminal_bits import action_bits, bits
from structgen.engine.tokenset import word_count, words_row
from structgen.engine.views import LexerViews
from structgen.engine.vocab import TokenTrie

ALWAYS: Final = 0
DEPENDS: Final = 1
NEVER: Final = 2

MAX_PARTIAL_WORK: Final = 2_000
"""Partial stacks one classification may build; past it the group is simply
checked online (context-dependent), so the limit costs speed, never exactness."""

REFINE_AT: Final = 8
"""An entry with more dependent groups than this is refined when used."""

MAX_CONTEXT: Final = 4
"""The most LR states a refined entry knows."""

MAX_PARTIAL_DEPTH: Final = 64
"""Longest partial stack a classification builds; past it, as past the work limit,
the group is checked online."""

CANDIDATES: Final = 3
"""States the first bytes lead to (those reached under the most tokens) that are
tried as references for converging a lexer state's groups, besides the start, and
as the next state of a chain of renamed groups."""

STATE_WORK: Final = 1_600
"""``spanner.Work`` per lexer state whose groups are built, beside its walks
(its first moves, choosing a reference, the vocabulary-wide buffers of a merge),
in trie nodes stepped on: fitted to the compile times of 414 MaskBench grammars."""

SHIFT_FROM_STATES: Final = 1_000
"""Lexers with fewer states do without renamed groups: theirs are few and cheap to
converge, and trying a proof for each costs more than it saves (a typical schema's
compile went from 26 to 60 ms); counted strings are what make lexers this big."""

MAX_SHIFT_CHAIN: Final = 64
"""Most states one chain of renamed groups follows (``_shifted_chain``) when groups
are built on first use, inside a step: a chain is built whole, so this bounds what
one step pays (a bounded string's whole count was 479 states, 1.5 s at 128k
tokens). Its last state is converged or walked, which a long count then pays once
per this many states."""

MAX_PRECOMPUTED_CHAIN: Final = 50_000
"""The same while ``precompute`` builds every state's groups (``chain_limit``)."""

UNKNOWN_VIEW: Final = 0
"""The view id (``MaskTables.view_id``) of a stack whose view under the known
states is not known (or of any stack of a grammar without indentation): a lexed
newline is then left to the real stack."""

MAX_VIEW_IDS: Final = 4_096
"""Distinct views (``engine.indentation``) the tables key entries on; past it a
view is unknown (its newlines are checked against the real stack)."""

MAX_MEMOIZED: Final = 200_000
"""Partial-stack results kept for building more entries, and as many verdicts on
them; past either the least recently used contexts' are dropped (``ContextMemo``),
as are the oldest of the terminals left to follow per lexer state and top, past
as many."""


_tags = [0]


def _next_tag() -> int:
    """A number no other ``MaskTables`` of this process has."""
    _tags[0] += 1
    return _tags[0]


class MaskTables:
    """Token groups per lexer state and mask entries per lexer state and stack top."""

    def __init__(self, lexer: Lexer, table: LRTable, ignored: list[bool], trie: TokenTrie, vocab_size: int) -> None:
        self.lexer = lexer
        self.table = table
        self.ignored = ignored
        self.trie = trie
        self.vocab_size = vocab_size
        self.words = word_count(vocab_size)
        self.sequences = SequenceTable()
        self.sequences.canonize(lexer.accepts)
        self.lr_state_count = table.state_count
        self._groups: list[Groups | None] = [None] * lexer.dfa.state_count
        # by lexer state * LR states + LR state: a dict, not a list of every pair, which
        # a full collection would scan whole (Go at 128k: 390,000 slots, few used)
        self._entries: dict[int, MaskEntry] = {}
        self.memo = ContextMemo(MAX_MEMOIZED)  # simulation results by known stack top
        self.empty_row = bytes(self.words * 4)
        self._shared: dict[bytes, bytes] = {self.empty_row: self.empty_row}  # one row per distinct always-accepted set
        self._rows: dict[tuple[int, int, bytes], bytes] = {}  # (base row, groups, accepted places) -> row (_row)
        self._weights = vec[i64]()  # tokens under each root child of the trie
        # _build's memos, stamped with the number of the build that wrote them (a build
        # reads only its own): by verdict class (a group's ``verdict_class``) and by
        # lexer state, so that classifying a group costs no dictionary and no boxed key
        self._builds = 0
        self._tag = _next_tag()  # in the high bits of a group's ``verdict_class``: whose number it is
        self._verdict_classes = IntMap()  # sequence << 32 | reach class + 1 -> class
        self._verdict_memo = vec[i64]()
        self._first_memo = vec[i64]()
        self._moves: dict[int, vec[i64]] = {}  # lexer state -> first_moves, for choosing references
        self._partner: dict[int, int] = {}  # lexer state -> the state a shift proof paired it with
        self._last_ended: dict[int, int] = {}  # lexeme name -> the last state ending it whose groups were walked
        self._shift_marks = ShiftMarks()  # shift_renaming's marks and rows cut into runs
        self.chain_limit = MAX_SHIFT_CHAIN
        self.work = Work()  # spent on groups so far (precompute's budget)
        # terminals as bit sets: most verdicts need no simulation of the last lexeme
        # (to_follow: _classify, and the matcher's check of a lexeme in progress)
        self._shift_bits, self._act_bits = action_bits(table)
        # an indentation-sensitive grammar's lexed newlines: what each stands for depends on
        # the levels on the real stack (engine.indentation), so every state may act on one
        # and a partial stack tells which only from the view under it (PartialStacks.feed)
        self._newline_bits = table.indentation.lexed_bits() if table.indentation is not None else 0
        # views of the stack under an entry's known states, numbered from 1 (0: UNKNOWN_VIEW)
        self._view_ids: dict[tuple[int, ...], int] = {}
        self._views_by_id: list[tuple[int, ...]] = [()]
        # by sequence: 0 not known yet, 1 holds no lexed newline, 2 may hold one (_holds_newline)
        self._newline_sequences = vec[i64]()
        self._is_newline = [self._newline_bits >> terminal & 1 == 1 for terminal in range(table.end + 1)]
        self._partial = PartialStacks(table, self._is_newline, MAX_PARTIAL_DEPTH, MAX_PARTIAL_WORK)
        if self._newline_bits:
            self._act_bits = tuple([acted | self._newline_bits for acted in self._act_bits])
        self._reach_bits = tuple([bits(terminals) for terminals in lexer.reachable_terminals])
        self._reaches_newline = [reach & self._newline_bits != 0 for reach in self._reach_bits]
        # lexer state * LR states + top -> the terminals left to follow (_follow_one)
        self._follows: dict[int, tuple[int, ...]] = {}
        self.follow_limit = MAX_MEMOIZED  # past it the oldest FORGET_SHARE-th is dropped
        self._ignored_bits = bits(tuple([terminal for terminal in range(len(ignored)) if ignored[terminal]]))
        self.views: LexerViews | None = None  # use_views
        self.views_ready = False  # every view steps may use is built (prepare_views)

    def use_views(self) -> None:
        """Build an entry's groups in the view of the terminals its LR state takes
        (``views``) rather than in the whole automaton: for lexers whose groups are
        built on first use, where a state of the whole automaton multiplies many
        terminals' parts and a view's states stand for many of them."""
        if self.lexer.patterns is not None:
            self.views = LexerViews(self.lexer, self._reach_bits)

    def groups(self, lexer_state: int) -> Groups:
        """The vocabulary grouped by what it does from ``lexer_state``."""
        found = self._groups[lexer_state]
        if found is None:
            # built on first use, inside a step: a burst of long-lived objects and no
            # garbage, which would only trigger collections (gc_pause.py: a compile's)
            running = gc.isenabled()
            if running:
                gc.disable()
            try:
                found = self._make_groups(lexer_state)
            finally:
                if running:
                    gc.enable()
            self._groups[lexer_state] = found
        return found

    def _make_groups(self, lexer_state: int) -> Groups:
        """For a state that can end its lexeme, converged from a built state ending
        the same lexeme, else from the start's (``ended_groups``); renamed from the
        next state's when the two move on alike (a bounded string's count of
        characters left: ``_shifted_chain``); else converged
        from the state it saves most to start from (the generic string body, for
        a state inside a key; the start, for a state in the whitespace before a
        token); one walk of the trie when none of these applies. Renaming comes
        before converging where a proof paired the state already, or where the
        reference is unbuilt: converging from it would first walk it whole (a
        count of words met each level's two states so, 20 ms a level at 128k)."""
        moves = self.first_moves(lexer_state)
        if lexer_state != START and ends_lexeme(moves):
            reference, gain, _ = self._references(lexer_state, True)
            base = self._groups[reference] if reference >= 0 else None
            # at least what the start's groups would give without a walk is skipped
            if base is not None and gain >= ending_weight(moves, self._root_weights()):
                return converged_groups(
                    self.lexer, self.trie, lexer_state, reference, base, self.sequences, self.vocab_size, self.work
                )
            self._last_ended[self.sequences.name(lexer_state)] = lexer_state
            return ended_groups(
                self.lexer, self.trie, lexer_state, moves, self.groups(START), self.sequences, self.vocab_size,
                self.work,
            )
        reference, gain, followers = self._references(lexer_state)
        if self.lexer.dfa.state_count < SHIFT_FROM_STATES or (
            reference >= 0 and gain * 2 >= self._total_weight() and self._groups[reference] is not None
            and lexer_state not in self._partner
        ):
            return self._unshifted(lexer_state, reference)  # converging skips most of the vocabulary
        return self._shifted_chain(lexer_state, reference, self._with_partner(lexer_state, followers))

    def _unshifted(self, lexer_state: int, reference: int) -> Groups:
        """Converged from ``reference``, or (-1) one walk of the trie."""
        if reference < 0:
            return self._walked_groups(lexer_state)
        base = self._groups[reference]
        if base is None:  # walked whole, not converged in turn: no chains, no cycles
            base = self._walked_groups(reference)
            self._groups[reference] = base
        return converged_groups(
            self.lexer, self.trie, lexer_state, reference, base, self.sequences, self.vocab_size, self.work
        )

    def _references(self, lexer_state: int, ended: bool = False) -> tuple[int, int, list[int]]:
        """The state to converge ``lexer_state``'s groups from (-1: none saves
        anything), the tokens that saves, and the ``CANDIDATES`` states most
        tokens' first bytes lead to, most first. The candidates are the start and
        those states; for a state that can end its lexeme (``ended``), those of them
        built and ending the same lexeme (``SequenceTable.name``: a Go identifier's
        89 states), and the last such state walked. Where both end it, what follows
        is the same, so only the bytes going on differently are walked."""
        moves = self.first_moves(lexer_state)
        weights = self._root_weights()
        ranked = self._ranked(lexer_state)[:CANDIDATES]
        name = self.sequences.name(lexer_state)
        candidates = ranked + [self._last_ended.get(name, -1)] if ended else [START] + ranked
        reference = -1
        best = 0
        for candidate in candidates:
            if candidate < 0 or candidate == lexer_state:
                continue
            if ended and (self._groups[candidate] is None or self.sequences.name(candidate) != name):
                continue
            gain = convergence_gain(moves, self.first_moves(candidate), weights, ended)
            if gain > best:
                reference, best = candidate, gain
        return reference, best, ranked

    def _ranked(self, lexer_state: int) -> list[int]:
        """The states the first bytes of tokens lead ``lexer_state`` to, those
        reached under the most tokens first."""
        moves = self.first_moves(lexer_state)
        weights = self._root_weights()
        reached: dict[int, int] = {}  # state -> tokens under the first bytes leading there
        for i in range(len(moves)):
            if moves[i] >= 0:
                reached[moves[i]] = reached.get(moves[i], 0) + weights[i]
        return sorted(reached, key=lambda state: -reached[state])

    def _shifted_chain(self, lexer_state: int, reference: int, followers: list[int]) -> Groups:
        """The groups of ``lexer_state`` and of the states after it (each one's
        next: the first of its ``followers`` that moves on as it does, one state
        further, ``shift_renaming``), each renamed from the next one's
        (``shifted_groups``), which saves a walk of the vocabulary per state of a
        bounded string's count of characters left. The last one is converged or
        walked (``_unshifted``). Built from the far end, without recursion."""
        chain = [lexer_state]
        references = [reference]
        renamings: list[dict[int, int]] = []
        seen = {lexer_state}
        while len(chain) < self.chain_limit:
            link = self._next_link(chain[-1], followers, seen)
            if link is None:
                break
            following, renamed = link
            built = self._groups[following] is not None
            renamings.append(renamed)
            for theirs, ours in renamed.items():  # each state's own next one: an escape's, a UTF-8 byte's
                if theirs != ours:
                    self._partner.setdefault(ours, theirs)
            chain.append(following)
            seen.add(following)
            if built:
                references.append(-1)
                break
            current = following
            reference, _, followers = self._references(current)
            followers = self._with_partner(current, followers)
            references.append(reference)
        later = self._groups[chain[-1]]
        if later is None:
            later = self._unshifted(chain[-1], references[-1])
            self._groups[chain[-1]] = later
        for index in range(len(chain) - 2, -1, -1):
            if index & 15 == 0:
                check_deadline()  # a long chain in a compile under a time limit (engine/deadline.py)
            later = shifted_groups(
                self.lexer, self.trie, chain[index], chain[index + 1], renamings[index], later, self.sequences,
                self.vocab_size, self.work,
            )
            self._groups[chain[index]] = later
        return later

    def _with_partner(self, lexer_state: int, followers: list[int]) -> list[int]:
        """Only the state an earlier proof paired ``lexer_state`` with (an escape's
        or a UTF-8 byte's own next state), if there is one: trying the others too
        where it fails made a long count's compile 20% slower for nothing."""
        partner = self._partner.get(lexer_state, -1)
        return followers if partner < 0 else [partner]

    def _next_link(self, lexer_state: int, followers: list[int], seen: set[int]) -> tuple[int, dict[int, int]] | None:
        """The first of ``followers`` that ``lexer_state`` moves on as, one state
        further, with the renaming that proves it (``shift_renaming``). The most
        frequent next state is not always the count's next one: where a pattern
        tells a space from a letter, most tokens start with a space, and the
        letter's state is the one a proof pairs. Where none is, and no earlier
        proof paired this state, the states one byte further are tried: a count
        of words moves on by two bytes (a space, then a letter), and without
        them each of its states was converged alone, 20 ms a state at 128k."""
        link = self._paired_follower(lexer_state, followers, seen)
        if link is not None or lexer_state in self._partner:
            return link
        tried = set(followers)
        for follower in followers:
            if follower == lexer_state or follower == START:
                continue
            further = [state for state in self._ranked(follower)[:CANDIDATES] if state not in tried]
            tried.update(further)
            link = self._paired_follower(lexer_state, further, seen)
            if link is not None:
                return link
        return None

    def _paired_follower(self, lexer_state: int, followers: list[int], seen: set[int]) -> tuple[int, dict[int, int]] | None:
        """The first of ``followers`` a renaming pairs ``lexer_state`` with."""
        for following in followers:
            if following == START or following in seen:
                continue
            if self._groups[following] is None and ends_lexeme(self.first_moves(following)):
                continue
            if not self._moves_apart(lexer_state, following):
                continue  # most tokens lead both to the same states: converging is cheaper than a proof
            renamed = shift_renaming(self.lexer, lexer_state, following, self.work, self._shift_marks)
            if renamed is not None:
                return following, renamed
        return None

    def _total_weight(self) -> int:
        """Tokens under the trie root's children (the whole text vocabulary)."""
        return sum(self._root_weights())

    def _moves_apart(self, lexer_state: int, other: int) -> bool:
        """Whether more tokens' first bytes take the two states to different states
        than to the same one (as a count's states do, and a key's prefix and the
        string body do not)."""
        moves = self.first_moves(lexer_state)
        others = self.first_moves(other)
        weights = self._root_weights()
        same = 0
        apart = 0
        for i in range(len(moves)):
            if moves[i] >= 0 and others[i] >= 0:
                if moves[i] == others[i]:
                    same += weights[i]
                else:
                    apart += weights[i]
        return apart > same

    def _walked_groups(self, lexer_state: int) -> Groups:
        """A whole walk of the trie, but for what the vocabulary's shared lexeme walks hold."""
        if lexer_state != START:
            shared = lexeme_groups(self.lexer, self.trie, lexer_state, self.sequences, self.vocab_size, self.work)
            if shared is not None:
                return shared
        return token_groups(self.lexer, self.trie, lexer_state, self.sequences, None, self.work)

    def first_moves(self, lexer_state: int) -> vec[i64]:
        found = self._moves.get(lexer_state)
        if found is None:
            found = first_moves(self.lexer, self.trie, lexer_state)
            self.work.done += STATE_WORK
            self._moves[lexer_state] = found
        return found

    def _root_weights(self) -> vec[i64]:
        """Tokens under each root child of the trie."""
        if not self._weights:
            trie = self.trie
            for node in trie.roots():
                self._weights = append(self._weights, trie.first_token[trie.subtree_end[node]] - trie.first_token[node])
        return self._weights

    def census(self) -> list[int]:
        """What is built (``CompiledGrammar.step_bound``): the lexer states, views'
        included (one more while views are still to be built), those with groups
        built, the most groups one has, the entries built, the most dependent ones."""
        sizes = [len(groups) for groups in self._groups if groups is not None]
        dependent = [len(entry.dependent) for entry in self._entries.values()]
        pending = 1 if self.views is not None and not self.views_ready else 0
        return [len(self._groups) + pending, len(sizes), max(sizes, default=0), len(dependent), max(dependent, default=0)]

    def view_id(self, view: tuple[int, ...]) -> int:
        """The number of a stack view (``engine.indentation``) that entries are
        keyed on; ``UNKNOWN_VIEW`` past ``MAX_VIEW_IDS`` of them."""
        found = self._view_ids.get(view, UNKNOWN_VIEW)
        if found == UNKNOWN_VIEW and len(self._views_by_id) < MAX_VIEW_IDS:
            found = len(self._views_by_id)
            self._view_ids[view] = found
            self._views_by_id.append(view)
        return found

    def entry(self, lexer_state: int, lr_state: int) -> MaskEntry:
        """The entry for ``lexer_state`` with only the top LR state known."""
        index = lexer_state * self.lr_state_count + lr_state
        found = self._entries.get(index)
        if found is None:
            terminals = self._act_bits[lr_state] | self._ignored_bits
            if lexer_state != START and self._reach_bits[lexer_state] & terminals == 0:
                # the lexeme in progress can only become terminals the state has no action for
                found = MaskEntry(self.empty_row, (), [lr_state])
            else:
                seen_from = self._seen_from(lexer_state, terminals)
                found = self._build([lr_state], self.groups(seen_from), self.empty_row, UNKNOWN_VIEW)
            self._entries[index] = found
        return found

    def _seen_from(self, lexer_state: int, terminals: int) -> int:
        """The state whose groups serve ``lexer_state`` under an LR state that takes
        ``terminals``: in their view when views are used (``use_views``)."""
        views = self.views
        if views is None:
            return lexer_state
        seen_from = views.state_for(lexer_state, terminals)
        self._joined(views)
        return seen_from

    def prepare_views(self) -> list[int]:
        """Build now the view of every set of terminals an LR state takes (a step
        that built one waited up to a second at 128k tokens and 38,000 lexer
        states); the states of the views built, which their entries' groups are of.
        Under a time limit it stops once the optional share is gone (a step builds
        the views left)."""
        views = self.views
        if views is None:
            return []
        done: set[int] = set()
        for lr_state in range(self.lr_state_count):
            terminals = self._act_bits[lr_state] | self._ignored_bits
            if terminals not in done:
                if optional_work_over():
                    break
                done.add(terminals)
                views.prepare(terminals)
                self._joined(views)
                check_deadline()  # a compile under a time limit stops between two views
        else:
            self.views_ready = True
        return [state for offset, count in views.regions() for state in range(offset, offset + count)]

    def _joined(self, views: LexerViews) -> None:
        """Take in the states of views built since the last call (joined after the others)."""
        if views.lexer is not self.lexer:
            self.lexer = views.lexer
            self.sequences.canonize(self.lexer.accepts)
            grown = self.lexer.dfa.state_count - len(self._groups)
            self._groups.extend([None] * grown)
            self._reach_bits = self._reach_bits + tuple(
                [bits(reachable) for reachable in self.lexer.reachable_terminals[-grown:]]
            )
            self._reaches_newline.extend([reach & self._newline_bits != 0 for reach in self._reach_bits[-grown:]])

    def in_view(self, entry: MaskEntry, view_id: int) -> MaskEntry:
        """``entry`` (built under an unknown view) with the view of the stack under
        its context known: its dependent groups classified again, those holding a
        lexed newline now by what the view makes of it (an indentation-sensitive
        grammar; every other group's verdict is the same under any view)."""
        key = -1 - view_id
        found = entry.deeper.get(key)
        if found is None:
            found = self._build(entry.context, entry.dependent, entry.row, view_id, True)
            entry.deeper[key] = found
        return found

    def _holds_newline(self, group: TokenGroup) -> bool:
        """Whether one of ``group``'s lexemes, or the one it leaves in progress, may
        be a lexed newline (remembered per sequence)."""
        if group.end_state != START and self._reaches_newline[group.end_state]:
            return True
        sequence = group.sequence
        memo = self._newline_sequences
        if sequence < len(memo) and memo[sequence] != 0:
            return memo[sequence] == 2
        found = False
        current = sequence
        while current != EMPTY_SEQUENCE and not found:
            for terminal in self.lexer.accepts[self.sequences.last[current]]:
                found = found or self._is_newline[terminal]
            current = self.sequences.parent[current]
        while len(memo) <= sequence:
            memo = append(memo, i64(0))
        memo[sequence] = 2 if found else 1
        self._newline_sequences = memo
        return found

    def refine_key(self, below: int, view_id: int) -> int:
        """The key in ``MaskEntry.deeper`` of the refinement by ``below`` over a
        stack of view ``view_id`` (the state itself under an unknown view)."""
        return view_id * self.lr_state_count + below

    def refine(self, entry: MaskEntry, below: int, view_id: int = UNKNOWN_VIEW) -> MaskEntry:
        """``entry`` with LR state ``below`` known under its context, and the view of
        the stack under ``below`` (``UNKNOWN_VIEW``: none): only its dependent
        groups need classifying again (more context never undoes a verdict). An
        entry seen in a view is refined in the views under it, so a refinement
        classifies the groups the view left dependent, not every group holding a
        newline again (Python at 128k tokens: 700 groups instead of 2,300)."""
        key = self.refine_key(below, view_id)
        found = entry.deeper.get(key)
        if found is None:
            found = self._build([below] + entry.context, entry.dependent, entry.row, view_id)
            entry.deeper[key] = found
        return found

    def _build(self, states: list[int], groups: Groups, base: bytes, view_id: int,
               newlines_only: bool = False) -> MaskEntry:
        """Classify ``groups`` from the stack top ``states`` (over a stack of view
        ``view_id``); the tokens always accepted are ``base`` (a row: the coarser
        entry's) and the groups found so. ``newlines_only``: ``groups`` are an
        entry's dependent ones and only the view is new (``in_view``), so a group
        that holds no lexed newline stays dependent unclassified."""
        context = self.memo.context(view_id, states)
        self._partial.below_view = self._views_by_id[view_id]
        accepted: list[TokenGroup] = []
        dependent: list[TokenGroup] = []
        self._builds += 1
        stamp = self._builds * 4  # a memo slot holds stamp + verdict (or taken) when this build wrote it
        # a lexeme the top has no action for (and not ignored) is never taken: most of
        # a schema state's groups start with one, and a few lexemes start them all;
        # a refinement's groups all passed this under the same top already
        by_first = len(states) == 1
        # under an unknown view a group holding a lexed newline is decided only where
        # its lexemes before the newline fail: it is left dependent unsimulated and
        # classified once, when the entry is seen in a view (or on the real stack)
        unviewed = view_id == UNKNOWN_VIEW and self._newline_bits != 0 and not newlines_only
        actions = self.table.actions[states[-1]]
        first = self.sequences.first
        if len(self._first_memo) < self.lexer.dfa.state_count:  # views add states
            self._first_memo = vec[i64]([i64(0)] * self.lexer.dfa.state_count)
        first_memo = self._first_memo
        marks = vec[u8]([u8(0)] * ((len(groups) + 7) >> 3))  # the accepted groups' places (_row's key)
        for index in range(len(groups)):
            group = groups[index]
            sequence = group.sequence
            if newlines_only and not self._holds_newline(group):
                dependent.append(group)
                continue
            if by_first and sequence != EMPTY_SEQUENCE:
                lexeme = first[sequence]
                memo = first_memo[lexeme]
                if memo >> 2 == stamp >> 2:
                    taken = memo & 3
                else:
                    taken = self._first_taken(lexeme, actions)
                    first_memo[lexeme] = stamp + taken
                if not taken:
                    continue
            if unviewed and self._holds_newline(group):
                dependent.append(group)  # a newline depends on the view: left to ``in_view`` (or the real stack)
                continue
            # groups with the same lexemes and the same possible next terminals share a verdict
            tagged = group.verdict_class
            if tagged >> 32 != self._tag:  # not numbered here yet
                tagged = self._verdict_class(group)
            verdict_class = tagged & 0xFFFFFFFF
            memo = self._verdict_memo[verdict_class]
            if memo >> 2 == stamp >> 2:
                verdict = memo & 3
            else:
                verdict = self._classify(context, sequence, group.end_state)
                self._verdict_memo[verdict_class] = stamp + verdict
            if verdict == DEPENDS:
                dependent.append(group)
            elif verdict == ALWAYS:
                accepted.append(group)
                marks[index >> 3] = marks[index >> 3] | u8(1 << (index & 7))
        return MaskEntry(self._row(base, groups, accepted, marks), tuple(dependent), states)

    def _verdict_class(self, group: TokenGroup) -> int:
        """Number ``group``'s verdict class (its sequence and the reach class of its
        end state: the groups of a class share a verdict under any stack), tagged
        with these tables' ``_tag`` (a group another's tables numbered is numbered
        again: each tables object has its own classes)."""
        end_state = group.end_state
        key = group.sequence << 32 | (0 if end_state == START else self.lexer.reach_class[end_state] + 1)
        found = int(self._verdict_classes.get(key, -1))
        if found < 0:
            found = len(self._verdict_classes)
            self._verdict_classes.put(key, found)
            self._verdict_memo = append(self._verdict_memo, i64(0))
        group.verdict_class = self._tag << 32 | found
        return group.verdict_class

    def _first_taken(self, ended_state: int, actions: dict[int, tuple[int, ...]]) -> int:
        """1 if a lexeme ended in ``ended_state`` can be a terminal that ``actions``
        (a top's) acts on or an ignored one, else 0: then no group starting with
        it goes through (``_after`` would find no stack)."""
        for terminal in self.lexer.accepts[ended_state]:
            if self.ignored[terminal] or terminal in actions or self._is_newline[terminal]:
                return 1
        return 0

    def _row(self, base: bytes, groups: Groups, accepted: list[TokenGroup], marks: vec[u8]) -> bytes:
        """The row of ``base`` and the ``accepted`` groups, those of ``groups`` whose
        places are set in ``marks``. Many entries accept the same groups over the
        same base (the same lexer state under other stack tops): their row is found
        by those objects and places, before any set is made (a key of one id per
        group boxed a hundred ints an entry); and a row made is stored once
        whatever made it (often the empty one)."""
        if not accepted:
            return base
        key = (id(base), id(groups), bytes(memoryview(marks)))  # base and groups live as long as the tables
        row = self._rows.get(key)
        if row is not None:
            return row
        bases = [] if base is self.empty_row else [base]
        row = words_row(union_words(bases, accepted, self.vocab_size), self.words)
        shared = self._shared.get(row)
        if shared is None:
            self._shared[row] = row
        else:
            row = shared
        self._rows[key] = row
        return row

    def _classify(self, context: Context, sequence: int, end_state: int) -> int:
        """ALWAYS, NEVER or DEPENDS for the lexemes of ``sequence`` followed by a
        lexeme in progress in lexer state ``end_state``, from a stack topped by
        ``context``."""
        partial = self._after(context, sequence)
        stacks = partial.stacks
        below = partial.below
        if not stacks:
            return DEPENDS if below else NEVER
        if end_state == START:
            return ALWAYS
        verdict = DEPENDS if below else NEVER
        follow = self._follow_one(end_state, stacks[0][-1]) if len(stacks) == 1 else self.to_follow(
            end_state, [stack[-1] for stack in stacks]
        )
        if follow and follow[0] < 0:
            return ALWAYS
        # left: terminals a top reduces by, which may pop past what is known
        takes_memo = context.takes_on(partial)
        for terminal in follow:
            takes = takes_memo.get(terminal, -1)
            if takes < 0:
                flag = [False]
                takes = ALWAYS if self._partial.feed(stacks, terminal, flag) else DEPENDS if flag[0] else NEVER
                takes_memo[terminal] = takes
                context.verdicts += 1
                self.memo.verdicts += 1
            if takes == ALWAYS:
                return ALWAYS
            if takes == DEPENDS:
                verdict = DEPENDS
        return verdict

    def to_follow(self, lexer_state: int, tops: list[int]) -> tuple[int, ...]:
        """What the bit sets settle of whether stacks topped by ``tops`` take the
        lexeme in progress in ``lexer_state``: ``(-1,)`` when they do at once (it can
        become an ignored terminal, or one a top shifts); else the terminals it can
        become that some top reduces by, whose reductions are left to follow."""
        if len(tops) == 1:
            return self._follow_one(lexer_state, tops[0])
        for top in tops:
            one = self._follow_one(lexer_state, top)
            if one and one[0] < 0:
                return one
        # united as bits, not by a search of the list so far (Python's newline has a
        # terminal per width); no ignored terminal is among them, or a top returned
        return self._listed(lexer_state, self.lexeme_terminals(lexer_state, tops))

    def _listed(self, lexer_state: int, terminals: int) -> tuple[int, ...]:
        """The terminals of the bit set ``terminals``, in ``lexer_state``'s order."""
        return tuple([t for t in self.lexer.reachable_terminals[lexer_state] if terminals >> t & 1])

    def _follow_one(self, lexer_state: int, top: int) -> tuple[int, ...]:
        """``to_follow`` for one top, remembered: terminal sets are ints wider than a
        machine word (Python's has 230 terminals, 66 of them newlines by width), and each
        operation on them was an allocation, several per group classified. Tuples, not
        lists: the collector stops tracking them (SynCode's Java at 128k tokens keeps
        18,000 of them over the benchmark's five programs)."""
        key = lexer_state * self.lr_state_count + top
        found = self._follows.get(key)
        if found is None:
            reach = self._reach_bits[lexer_state]
            if reach & (self._ignored_bits | self._shift_bits[top]):
                found = (-1,)
            else:
                found = self._listed(lexer_state, reach & self._act_bits[top])
            if len(self._follows) >= self.follow_limit:  # the oldest share dropped: a slice, not a whole clear
                share = max(1, self.follow_limit // FORGET_SHARE)
                oldest: list[int] = []
                for old in self._follows:
                    oldest.append(old)
                    if len(oldest) >= share:
                        break
                for old in oldest:
                    del self._follows[old]
            self._follows[key] = found
        return found

    def lexeme_terminals(self, lexer_state: int, tops: list[int]) -> int:
        """The terminals the lexeme in progress in ``lexer_state`` can still become
        that a stack topped by one of ``tops`` has an action for, as a bit set."""
        acting = self._ignored_bits
        for top in tops:
            acting |= self._act_bits[top]
        return self._reach_bits[lexer_state] & acting

    def _after(self, context: Context, sequence: int) -> Partial:
        """The partial stacks after ``sequence`` from ``context`` (memoized by prefix)."""
        found = context.result(sequence)
        if found is not None:
            return found
        if sequence == EMPTY_SEQUENCE:
            stacks: list[tuple[int, ...]] = [tuple(context.states)]
            flag = [False]
        else:
            before = self._after(context, self.sequences.parent[sequence])
            before_stacks = before.stacks
            if not before_stacks:
                return before  # nothing goes on after a dead prefix: share its result, keep no entry
            flag = [before.below]
            terminals = self.lexer.accepts[self.sequences.last[sequence]]
            if len(terminals) == 1:  # the usual lexeme: one terminal, whose stacks feed keeps distinct
                terminal = terminals[0]
                if self.ignored[terminal]:
                    stacks = list(before_stacks)
                else:
                    stacks = self._partial.feed(before_stacks, terminal, flag)
            else:
                stacks = []
                seen: set[tuple[int, ...]] = set()
                for terminal in terminals:
                    if self.ignored[terminal]:
                        following = list(before_stacks)
                    else:
                        following = self._partial.feed(before_stacks, terminal, flag)
                    for stack in following:
                        if stack not in seen:
                            seen.add(stack)
                            stacks.append(stack)
        self.memo.memoized += 1
        return context.remember(sequence, tuple(stacks), flag[0])

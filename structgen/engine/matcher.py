"""Online token masks (GreatGramma Alg. 6), acceptance, rollback, fork, jump-forward.

A matcher's configuration is a lexer state plus the parser's stack tops. A token
is allowed when its bytes, fed from the configuration, lex without error, every
lexeme they end is taken by some stack (with ``%ignore`` terminals dropped), and
the lexeme left in progress can still become a terminal that some resulting
stack takes — the realizable-sequence criterion of the GreatGramma seed
(Def. 3.3: the ended terminals ``T1..Tk`` followed by a terminal ``T`` reachable
from the final lexer state). A stop token is allowed when the text so far is
complete.

A mask is the union, over the stack tops, of the always-accepted set of the
(lexer state, top LR state) entry (``tables``), plus the context-dependent groups
that the real stacks take, plus the stop tokens when the text is complete. The
same configuration always has the same mask, and stacks are hash-consed (equal
stacks are one node), so masks are also remembered per configuration.

Configurations are immutable and linked to their predecessor, so ``rollback``
and ``fork`` are O(1) per token.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32

from structgen.engine.deadline import check_deadline, optional_work_over
from structgen.engine.dfa import DEAD
from structgen.engine.indentation import BOTTOM
from structgen.engine.lexer import START, Lexer
from structgen.engine.lr import LRTable
from structgen.engine.mask_entry import MaskEntry
from structgen.engine.precompute_order import alone_left, precompute_order
from structgen.engine.spanner import EMPTY_SEQUENCE, Groups, SequenceTable, TokenGroup, union_words
from structgen.engine.stack import MAX_STEP_WORK, GLRParser, StackNode, Trial
from structgen.engine.step_bound import StepBound
from structgen.engine.table_memory import tables_bytes, tables_growth
from structgen.engine.tables import (
    MAX_CONTEXT,
    MAX_PARTIAL_WORK,
    MAX_PRECOMPUTED_CHAIN,
    MAX_SHIFT_CHAIN,
    REFINE_AT,
    UNKNOWN_VIEW,
    MaskTables,
)
from structgen.engine.tokenset import (
    add_ids,
    add_words,
    empty_words,
    row_token_ids,
    row_words,
    word_count,
    words_row,
)
from structgen.engine.vocab import TokenTrie


MAX_JUMP_FORWARD: Final = 4096
"""Default bound on the bytes one jump-forward call returns."""

MAX_PATHS: Final = 2
"""The most stack paths one mask refines separately where a GLR stack branches
under its top (past it, the entry known so far serves every path)."""

MAX_NEW_REFINEMENTS: Final = 2
"""Refined entries one mask may build. Each classifies again the groups its parent
left dependent (a Go state's: up to 1,900 of them, about 0.5 ms at 128k tokens);
without a bound, the first visit of a deep stack paid for a chain of them at once.
Past it the dependent groups are checked against the real stack, and a later mask
at the same place builds the next refinements."""

MASK_CACHE_SIZE: Final = 256
"""Masks a matcher (with its forks) remembers; the cache is emptied when full."""

MAX_TRIALS: Final = 16
"""The most trial stacks (``Trial``) a dependent group's check follows; past it
(lexemes of several terminals, each taken by several stacks) the real stacks are
fed instead."""

PRECOMPUTE_LIMIT: Final = 5_000
"""``precompute`` builds every table entry when (lexer states x LR states) is at
most this (JSON's 1,419). A schema grammar has tens of thousands of pairs, few of
which a text visits: building them all took most of its compile (about 1-2 s at
128k tokens), and one entry on first use costs tens of microseconds."""

GROUPS_LIMIT: Final = 8_000
"""``precompute`` builds the token groups of every lexer state only when there are
at most this many lexer states; past it (schemas whose bounded strings multiply
into ten thousand states and more) a state's groups are built on first use."""


GROUPS_WALKS: Final = 250
"""The most work ``precompute`` spends on token groups, in walks of the whole
vocabulary trie (``spanner.Work``: nodes stepped on, ids moved, groups merged,
states begun; the state it is on when the budget runs out still finishes, with
its chain of renamed groups);
the states left are built on first use. A state's groups cost up to a walk of
the vocabulary, 10-15 ms at 128k tokens: where thousands of states do (keys
beside bounded strings), all of them took one MaskBench schema 33 s to compile,
while a text visits a few hundred. Counted in work, not seconds, so a grammar
leaves the same states to its steps on a slower or busier machine."""


def special_tokens(vocab: list[bytes], special_token_ids: list[int], stop_token_ids: list[int]) -> list[int]:
    """The ids that are never text: stop and special ids, and ids that spell nothing."""
    special = [not data for data in vocab]
    for token_id in special_token_ids + stop_token_ids:
        special[token_id] = True
    return [i for i in range(len(vocab)) if special[i]]


class CompiledGrammar:
    """A grammar's lexer and tables joined with one vocabulary.

    ``trie`` must hold exactly the tokens outside ``special_tokens(...)`` (the ids
    it leaves out are never text); it depends only on the vocabulary, so callers
    share one per tokenizer.
    """

    def __init__(
        self,
        lexer: Lexer,
        table: LRTable,
        ignored: list[bool],
        vocab: list[bytes],
        stop_token_ids: list[int],
        trie: TokenTrie,
    ) -> None:
        self.lexer = lexer
        self.table = table
        self.ignored = ignored
        self.vocab = vocab
        self.vocab_size = len(vocab)
        self.special: tuple[bool, ...] = trie.outside(len(vocab))  # the ids that are never text
        self.stop_token_ids = stop_token_ids
        self.stop_ids = vec[i32](stop_token_ids)
        self.words = word_count(len(vocab))
        self.trie = trie
        self.tables = MaskTables(lexer, table, ignored, trie, len(vocab))
        if lexer.dfa.state_count > GROUPS_LIMIT:
            self.tables.use_views()  # groups built on first use: in the view of what the parser takes
        self.empty_row = self.tables.empty_row
        self.sequences: SequenceTable = self.tables.sequences
        # what the public matcher checks beyond the grammar (structgen.compile sets it to the
        # grammar's structgen.checks); opaque here: the engine only follows the grammar
        self.checks: object = None
        self._bytes = 0
        self._counted_at = -1  # tables_growth when _bytes was counted

    def memory_bytes(self) -> int:
        """Bytes its tables hold (``engine.table_memory``): counted again only after
        they grew, so a cache may ask every time it admits a grammar."""
        growth = tables_growth(self.tables)
        if growth != self._counted_at:
            self._bytes = tables_bytes(self.tables)
            self._counted_at = growth
        return self._bytes

    def groups(self, lexer_state: int) -> Groups:
        """The vocabulary grouped by what it does from ``lexer_state``."""
        return self.tables.groups(lexer_state)

    def step_bound(self) -> StepBound:
        """The most work one step may do, as built so far (``engine.step_bound``)."""
        states, built, most_groups, entries, most_dependent = self.tables.census()
        return StepBound(
            len(self.trie.node_byte), states, states - built, alone_left(self.tables), most_groups, entries,
            states * self.table.state_count,
            most_dependent, MAX_NEW_REFINEMENTS, MAX_PATHS, MAX_CONTEXT, MAX_TRIALS, MAX_PARTIAL_WORK,
            MAX_SHIFT_CHAIN, MAX_STEP_WORK,
        )

    def precompute(
        self,
        entry_limit: int = PRECOMPUTE_LIMIT,
        groups_limit: int = GROUPS_LIMIT,
        groups_walks: float = GROUPS_WALKS,
    ) -> None:
        """Build the inverse table of every lexer state now (for at most
        ``groups_walks`` walks of the vocabulary's worth of work, and with at most
        ``groups_limit`` states; but for deep states a step builds alone:
        ``precompute_order``), and every one-state table entry too when there
        are at most ``entry_limit`` of them. What is left is built on first use,
        in views (``MaskTables.use_views``): their automata now, and their states'
        groups with what is left of the work. All of it is optional: under a time
        limit it stops once half the time is gone (``optional_work_over``), and
        steps build the rest."""
        check_deadline()  # a compile under a time limit stops between two lexer states (engine/deadline.py)
        tables = self.tables
        stop = tables.work.done + int(groups_walks * len(self.trie.node_byte))
        lexer_states = self.lexer.dfa.state_count
        if tables.views is None:
            if lexer_states > groups_limit:
                tables.use_views()
            elif not self._precompute_groups(precompute_order(self.lexer, tables), stop):
                if optional_work_over():
                    return  # out of time, not of work: no views, a step builds what it needs
                tables.use_views()
        self._precompute_groups(tables.prepare_views(), stop)
        lr_states = self.table.state_count
        if lexer_states * lr_states <= entry_limit:
            for lexer_state in range(lexer_states):
                if optional_work_over():
                    return
                for lr_state in range(lr_states):
                    tables.entry(lexer_state, lr_state)
                check_deadline()

    def _precompute_groups(self, lexer_states: list[int], stop: int) -> bool:
        """Build the groups of ``lexer_states`` in order until the tables' work
        reaches ``stop`` (or a time limit's optional share is gone); whether every
        one's groups were built."""
        work = self.tables.work
        self.tables.chain_limit = MAX_PRECOMPUTED_CHAIN  # no step waits: whole chains, fewer walks
        try:
            for lexer_state in lexer_states:
                if work.done >= stop or optional_work_over():
                    return False
                self.tables.groups(lexer_state)
                check_deadline()
        finally:
            self.tables.chain_limit = MAX_SHIFT_CHAIN
        return True


class MaskCache:
    """Masks by configuration (lexer state, stack tops), shared by a matcher and its
    forks: node ids are unique within one parser, so a key is one configuration."""

    def __init__(self) -> None:
        self.masks: dict[tuple[int, ...], bytes] = {}

class Config:
    """One point of the text: lexer state, stack tops, and the point before it."""

    lexer_state: Final[int]
    tops: Final[list[StackNode]]
    previous: Final[Config | None]
    stopped: Final[bool]

    def __init__(self, lexer_state: int, tops: list[StackNode], previous: Config | None, stopped: bool) -> None:
        self.lexer_state = lexer_state
        self.tops = tops
        self.previous = previous
        self.stopped = stopped


class Matcher:
    """Masks, acceptance, rollback and fork over one ``CompiledGrammar``."""

    def __init__(self, compiled: CompiledGrammar, parser: GLRParser | None = None, cache: MaskCache | None = None) -> None:
        self.compiled = compiled
        self.parser = parser if parser is not None else GLRParser(compiled.table)
        self.cache = cache if cache is not None else MaskCache()
        self.config = self._start()

    def fork(self) -> Matcher:
        """An independent matcher at the same point (shares the immutable history)."""
        other = Matcher(self.compiled, self.parser, self.cache)
        other.config = self.config
        return other

    def reset(self) -> None:
        self.config = self._start()

    def _start(self) -> Config:
        state, tops = self.parser.start(self.compiled.lexer, self.compiled.ignored)
        return Config(state, tops, None, False)

    def rollback(self, num_tokens: int) -> None:
        """Undo the last ``num_tokens`` accepted tokens."""
        if num_tokens < 0:
            raise ValueError(f"cannot roll back {num_tokens} tokens")
        config = self.config
        for _ in range(num_tokens):
            previous = config.previous
            if previous is None:
                raise ValueError(f"cannot roll back {num_tokens} tokens: only fewer were accepted")
            config = previous
        self.config = config

    def is_terminated(self) -> bool:
        return self.config.stopped

    def can_terminate(self) -> bool:
        """Whether the text so far is complete (a stop token may come now)."""
        config = self.config
        if config.stopped:
            return False
        complete, finished = self.compiled.lexer.finish(config.lexer_state)
        if not complete:
            return False
        tops = self._feed_lexeme(config.tops, finished) if finished else config.tops
        return bool(tops) and self.parser.accepts_end(tops)

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (and no change) when it is not allowed."""
        compiled = self.compiled
        if self.config.stopped or not 0 <= token_id < compiled.vocab_size:
            return False
        if token_id in compiled.stop_token_ids:
            if not self.can_terminate():
                return False
            self.config = Config(self.config.lexer_state, self.config.tops, self.config, True)
            return True
        if compiled.special[token_id]:
            return False
        return self.accept_bytes(compiled.vocab[token_id])

    def accept_bytes(self, data: bytes) -> bool:
        """Advance by raw bytes as one step (rolled back as one token); empty input
        is allowed and changes nothing (no step is recorded)."""
        config = self.config
        if config.stopped:
            return False
        if not data:
            return True
        lexer = self.compiled.lexer
        state = config.lexer_state
        tops = config.tops
        for byte in data:
            state, finished = lexer.step(state, byte)
            if state == DEAD:
                return False
            if finished:
                tops = self._feed_lexeme(tops, finished)
                if not tops:
                    return False
        if not self._can_continue(state, tops, lexer):
            return False
        self.config = Config(state, tops, config, False)
        return True

    def find_jump_forward_bytes(self, limit: int = MAX_JUMP_FORWARD) -> bytes:
        """The longest byte string (up to ``limit``) that every valid continuation
        starts with: bytes are added while exactly one byte can come next and the
        text is not complete (ending is a choice too). Changes nothing."""
        if self.config.stopped:
            return b""
        probe = self.fork()
        forced = bytearray()
        while len(forced) < limit and not probe.can_terminate():
            only = -1
            for byte in range(256):
                if probe.viable_byte(byte):
                    if only >= 0:
                        return bytes(forced)
                    only = byte
            if only < 0:
                break
            probe.accept_bytes(bytes([only]))
            forced.append(only)
        return bytes(forced)

    def viable_byte(self, byte: int) -> bool:
        """Whether one more byte keeps the text a viable prefix (no state change)."""
        config = self.config
        state, finished = self.compiled.lexer.step(config.lexer_state, byte)
        if state == DEAD:
            return False
        tops = self._feed_lexeme(config.tops, finished) if finished else config.tops
        return bool(tops) and self._can_continue(state, tops, self.compiled.lexer)

    def lexeme_terminals(self) -> int:
        """The terminals the lexeme in progress can still become with the stacks it
        has, as a bit set (0 once a stop token was accepted): a superset where an
        action on one is a reduction the stack would not go through."""
        config = self.config
        if config.stopped:
            return 0
        return self.compiled.tables.lexeme_terminals(config.lexer_state, [node.state for node in config.tops])

    def state_key(self) -> tuple[int, ...]:
        """Equal for two points of the text where every continuation is allowed
        alike: the lexer state and the stack tops (hash-consed: equal stacks are one node)."""
        config = self.config
        return (-1 if config.stopped else config.lexer_state, *[node.uid for node in config.tops])

    def allowed_tokens(self) -> list[int]:
        """Every token allowed next (stop tokens included when the text is complete)."""
        return row_token_ids(self.allowed_row())

    def allowed_row(self) -> bytes:
        """The allowed next tokens as a bitmask row (``tokenset``) of
        ``word_count(vocab_size)`` words."""
        config = self.config
        if config.stopped:
            return self.compiled.empty_row
        tops = config.tops
        key = self.state_key()
        masks = self.cache.masks
        found = masks.get(key)
        if found is not None:
            return found
        row = self._compute_row(config.lexer_state, tops)
        if len(masks) >= MASK_CACHE_SIZE:
            masks.clear()
        masks[key] = row
        return row

    def _compute_row(self, lexer_state: int, tops: list[StackNode]) -> bytes:
        """Alg. 6: the always-accepted sets of the tops' entries, plus the
        context-dependent groups the real stacks take, plus the stop tokens when
        the text is complete."""
        compiled = self.compiled
        rows: list[bytes] = []  # the entries' rows, each once (equal rows are one object)
        dependent: Groups = ()
        entries: list[MaskEntry] = []
        budget = [MAX_NEW_REFINEMENTS]
        for node in tops:
            self._entries(lexer_state, node, entries, budget)
        if len(entries) == 1:
            if entries[0].row is not compiled.empty_row:
                rows.append(entries[0].row)
            dependent = entries[0].dependent
        else:
            listed: set[int] = set()
            united: list[TokenGroup] = []
            for entry in entries:
                if entry.row is not compiled.empty_row and entry.row not in rows:
                    rows.append(entry.row)
                for group in entry.dependent:
                    if id(group) not in listed:
                        listed.add(id(group))
                        united.append(group)
            dependent = tuple(united)
        taken_groups: list[TokenGroup] = []
        if dependent:
            lexer = compiled.tables.lexer  # groups may end in a view's states (views)
            reach_class = lexer.reach_class
            classes = lexer.reach_class_count + 1
            trials: dict[int, list[Trial] | None] = {EMPTY_SEQUENCE: [Trial(top, ()) for top in tops]}
            after_sequence: dict[int, list[StackNode]] = {EMPTY_SEQUENCE: tops}
            takes: dict[int, bool] = {}  # by sequence and reach class of the lexeme in progress
            for group in dependent:
                end_state = group.end_state
                memo_key = group.sequence * classes + (0 if end_state == START else reach_class[end_state] + 1)
                taken = takes.get(memo_key)
                if taken is None:
                    taken = self._takes_group(group, trials, after_sequence, lexer)
                    takes[memo_key] = taken
                if taken:
                    taken_groups.append(group)
        terminal = self.can_terminate()
        if len(rows) <= 1 and not taken_groups and not terminal:
            return rows[0] if rows else compiled.empty_row
        words = union_words(rows, taken_groups, compiled.vocab_size)
        if terminal:
            add_ids(words, compiled.stop_ids)
        return words_row(words, compiled.words)

    def _entries(self, lexer_state: int, top: StackNode, found: list[MaskEntry], budget: list[int]) -> None:
        """The table entries for ``top``, added to ``found``: refined with the states
        under it while many groups still depend on them, one entry per path where
        the stack under it branches (``MAX_PATHS`` in all). A group is allowed when
        some path takes it, so the mask is the union over the entries. At most
        ``budget[0]`` refinements are built (and counted off): the groups still
        dependent past them are checked against the stack. For an
        indentation-sensitive grammar, the entry of the top (built under an unknown
        view, shared by every view) is seen in the view under it
        (``MaskTables.in_view``: only its newline groups classified again), and
        refined in the views under the states it learns."""
        tables = self.compiled.tables
        work: list[tuple[MaskEntry, StackNode]] = [(self._in_view(tables.entry(lexer_state, top.state), top), top)]
        while work:
            entry, node = work.pop()
            while len(entry.dependent) > REFINE_AT and len(entry.context) < MAX_CONTEXT:
                parents = node.parents
                if not parents or (len(parents) > 1 and len(found) + len(work) + len(parents) > MAX_PATHS):
                    break  # the bottom, or a branch past MAX_PATHS: this entry serves every path
                views = [self._view_under(parent) for parent in parents]
                missing = 0
                for index in range(len(parents)):
                    if tables.refine_key(parents[index].state, views[index]) not in entry.deeper:
                        missing += 1
                if missing > budget[0]:
                    break
                budget[0] -= missing
                for index in range(1, len(parents)):
                    work.append((tables.refine(entry, parents[index].state, views[index]), parents[index]))
                node = parents[0]
                entry = tables.refine(entry, node.state, views[0])
            found.append(entry)

    def _in_view(self, entry: MaskEntry, node: StackNode) -> MaskEntry:
        """``entry`` (whose deepest known state is ``node``'s) in the view of the
        stacks under ``node``, where the grammar is indentation-sensitive and that
        view is known; else ``entry``."""
        if self.parser.indentation is None or not entry.dependent:
            return entry
        view = self._view_under(node)
        return entry if view == UNKNOWN_VIEW else self.compiled.tables.in_view(entry, view)

    def _view_under(self, node: StackNode) -> int:
        """The view id (``MaskTables.view_id``) of the stacks under ``node``, for an
        indentation-sensitive grammar: ``UNKNOWN_VIEW`` where its parents' views
        differ (and for any other grammar)."""
        parser = self.parser
        if parser.indentation is None:
            return UNKNOWN_VIEW
        parents = node.parents
        if not parents:
            return self.compiled.tables.view_id(BOTTOM)
        view = parser.known_view(parents[0])
        for parent in parents:
            if parser.known_view(parent) != view:
                return UNKNOWN_VIEW
        return UNKNOWN_VIEW if view is None else self.compiled.tables.view_id(view)

    def _takes_group(
        self,
        group: TokenGroup,
        trials: dict[int, list[Trial] | None],
        after_sequence: dict[int, list[StackNode]],
        lexer: Lexer,
    ) -> bool:
        """Whether some stack takes the lexemes of ``group`` and can go on with the
        one it leaves in progress: on trial stacks (``Trial``) within their limits,
        else on real ones (memoized by sequence prefix in both). ``lexer``: the
        tables', whose states the group names (views)."""
        following = self._trials_after(group.sequence, trials, lexer.accepts)
        if following is not None:
            if not following:
                return False
            if group.end_state == START:
                return True
            known = self._trials_continue(group.end_state, following)
            if known >= 0:
                return known == 1
        tops = self._tops_after(group.sequence, after_sequence, self.compiled.sequences, lexer.accepts)
        return bool(tops) and self._can_continue(group.end_state, tops, lexer)

    def _trials_after(
        self, sequence: int, memo: dict[int, list[Trial] | None], accepts: list[tuple[int, ...]]
    ) -> list[Trial] | None:
        """The trial stacks after the lexemes of ``sequence``; None past the trial
        limits on the way."""
        sequences = self.compiled.sequences
        known, pending = sequences.unknown_prefixes(sequence, memo)
        trials = memo[known]
        while pending:
            current = pending.pop()
            if trials:
                trials = self._trial_lexeme(trials, accepts[sequences.last[current]])
            memo[current] = trials
        return trials

    def _trial_lexeme(self, trials: list[Trial], alternatives: tuple[int, ...]) -> list[Trial] | None:
        """``trials`` after one lexeme, each of its alternatives fed (an ignored one
        leaves them as they are), each distinct stack once; None past
        the parser's ``max_trial_work`` or ``MAX_TRIALS``."""
        ignored = self.compiled.ignored
        following: list[Trial] = []
        for terminal in alternatives:
            if ignored[terminal]:
                following.extend(trials)
                continue
            for trial in trials:
                if not self.parser.trial_feed(trial, terminal, following):
                    return None
        if len(following) > 1:
            seen: set[tuple[int, tuple[int, ...]]] = set()
            distinct: list[Trial] = []
            for trial in following:
                key = (id(trial.node), trial.pushed)
                if key not in seen:
                    seen.add(key)
                    distinct.append(trial)
            following = distinct
        return following if len(following) <= MAX_TRIALS else None

    def _trials_continue(self, lexer_state: int, trials: list[Trial]) -> int:
        """``_can_continue`` on trial stacks: 1 or 0, or -1 past the parser's ``max_trial_work``."""
        follow = self.compiled.tables.to_follow(lexer_state, [trial.top() for trial in trials])
        if follow and follow[0] < 0:
            return 1
        unsure = False
        for terminal in follow:
            for trial in trials:
                known = self.parser.trial_takes(trial, terminal, False)
                if known == 1:
                    return 1
                unsure = unsure or known < 0
        return -1 if unsure else 0

    def _tops_after(
        self,
        sequence: int,
        memo: dict[int, list[StackNode]],
        sequences: SequenceTable,
        accepts: list[tuple[int, ...]],
    ) -> list[StackNode]:
        """The stacks after the lexemes of ``sequence`` (memoized by sequence prefix)."""
        known, pending = sequences.unknown_prefixes(sequence, memo)
        tops = memo[known]
        while pending:
            current = pending.pop()
            tops = self._feed_lexeme(tops, accepts[sequences.last[current]]) if tops else tops
            memo[current] = tops
        return tops

    def _feed_lexeme(self, tops: list[StackNode], alternatives: tuple[int, ...]) -> list[StackNode]:
        return self.parser.feed_lexeme(tops, alternatives, self.compiled.ignored)

    def _can_continue(self, lexer_state: int, tops: list[StackNode], lexer: Lexer) -> bool:
        """Whether the lexeme in progress (in a state of ``lexer``) can still become
        a terminal some stack takes."""
        if lexer_state == START:
            return bool(tops)
        known = self._trials_continue(lexer_state, [Trial(top, ()) for top in tops])
        if known >= 0:
            return known == 1
        ignored = self.compiled.ignored
        for terminal in lexer.reachable_terminals[lexer_state]:
            if ignored[terminal] or self.parser.feed(tops, terminal):
                return True
        return False

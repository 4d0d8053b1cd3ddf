"""Token groups renamed from a state that moves on alike, one count further.

A string with a maximum length, or a pattern that counts words, counts in lexer
states: the state with k left does from every byte what the state with k - 1
left does, one state further, until the count runs out. Neither converges with
the other along the trie (``lexeme_groups.converged_groups``), so each would cost
a walk of the vocabulary; instead ``shift_renaming`` proves the two alike for
every byte string of ``SHIFT_DEPTH`` bytes and ``shifted_groups`` renames one's
groups into the other's (``MaskTables`` follows such chains).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import Lexer
from structgen.engine.spanner import (
    EMPTY_SEQUENCE,
    Grouping,
    Groups,
    SequenceTable,
    TokenGroup,
    Work,
    merged_groups,
    per_depth,
    sequence_step,
)
from structgen.engine.vocab import TokenTrie

SHIFT_DEPTH: Final = 16
"""``shifted_groups`` proves two states alike for every byte string this long at
once, on the automaton; only the tokens longer than this are followed one by one."""

MAX_SHIFT_PAIRS: Final = 2_048
"""Most state pairs one such proof visits."""

ROW_WORK: Final = 128
"""``Work`` of cutting a lexer state's row into runs (``ShiftMarks.row``): what a
walk does in as long (a proof compares one pair of runs in about a trie node's time)."""


def shifted_groups(
    lexer: Lexer,
    trie: TokenTrie,
    start: int,
    reference: int,
    renamed: dict[int, int],
    reference_groups: Groups,
    sequences: SequenceTable,
    vocab_size: int,
    work: Work | None = None,
) -> Groups:
    """The groups of lexer state ``start`` as those of ``reference`` with their
    states renamed (``renamed``: ``shift_renaming(lexer, start, reference)``;
    ``work``: counts the nodes and ids).

    A string with a maximum length counts its characters in states: the state
    with k characters left does from every byte what the state with k - 1 left
    does, one state further back, until the count runs out. Neither converges
    with the other along the trie, so each would cost a walk of the whole
    vocabulary (a string body accepts nearly every token). Instead the two are
    run side by side on the automaton, for every byte string of ``SHIFT_DEPTH``
    bytes at once: they must die, end their lexeme and move on together, and the
    states they reach must pair one to one. Then every token that short does from
    ``start`` what it does from ``reference``, renamed; the few longer tokens are
    followed along the trie, and those that differ are moved to their own group."""
    sequence_names: dict[int, int] = {EMPTY_SEQUENCE: EMPTY_SEQUENCE}
    lexemes = _lexeme_names(renamed, lexer.accepts, sequences)
    groups: list[TokenGroup] = []
    removed = vec[i32]()
    for old in reference_groups:
        end_state = old.end_state
        if old.sequence == EMPTY_SEQUENCE:
            end_state = renamed.get(end_state, DEAD)
        sequence = _renamed_sequence(old.sequence, lexemes, sequence_names, sequences)
        if end_state == DEAD or sequence < 0:  # reached only by tokens longer than the proof: redone below
            for token_id in old.ids():
                removed = append(removed, token_id)
            continue
        groups.append(old.alike(sequence, end_state))  # its first bytes too: ``merged_groups`` asks every group
    removed, walked = _long_tokens(
        lexer, trie, start, reference, renamed, lexemes, sequence_names, sequences, removed, work
    )
    return merged_groups(tuple(groups), removed, walked, trie.first_byte(), lexer.dfa.state_count, vocab_size, work)


class ShiftMarks:
    """What ``shift_renaming`` works with, kept between proofs: marks pairing
    states (a compile of a count of words proves about 7,000 pairs of states,
    each pairing some 500, and a dict per proof was half of its time) and the
    lexer's rows cut into runs, in one vector (a row never changes: a joined
    lexer only adds states)."""

    def __init__(self) -> None:
        self.stamp = 0
        self.their_mark: vec[i64] = vec[i64]()  # state -> the stamp of the proof that named it
        self.their_name: vec[i64] = vec[i64]()  # state -> the start's state it is paired with
        self.our_mark: vec[i64] = vec[i64]()  # start's state -> the stamp of the proof that took it
        self.row_at: vec[i64] = vec[i64]()  # state -> where its runs begin in ``runs`` (-1: not cut yet)
        self.runs: vec[i64] = vec[i64]()  # each row's runs of equal targets: a run's last byte, then its target

    def begin(self, state_count: int) -> int:
        """A new proof's stamp, with room for ``state_count`` states."""
        while len(self.their_mark) < state_count:
            self.their_mark = append(self.their_mark, i64(0))
            self.their_name = append(self.their_name, i64(0))
            self.our_mark = append(self.our_mark, i64(0))
            self.row_at = append(self.row_at, i64(-1))
        self.stamp += 1
        return self.stamp

    def row(self, table: tuple[int, ...], state: int, work: Work | None = None) -> int:
        """Where ``state``'s row of ``table`` begins in ``runs``, cut on first use
        (``work``: counts the cut, as 128 trie nodes' worth)."""
        at = int(self.row_at[state])
        if at < 0:
            if work is not None:
                work.done += ROW_WORK
            at = len(self.runs)
            base = state * 256
            for byte in range(256):
                target = table[base + byte]
                if byte == 255 or table[base + byte + 1] != target:
                    self.runs = append(self.runs, i64(byte))
                    self.runs = append(self.runs, i64(target))
            self.row_at[state] = at
        return at


def shift_renaming(
    lexer: Lexer, start: int, reference: int, work: Work | None = None, marks: ShiftMarks | None = None
) -> dict[int, int] | None:
    """The states ``reference`` reaches inside its lexeme by byte strings of at most
    ``SHIFT_DEPTH`` bytes, each paired with the one ``start`` reaches by the same
    bytes, when the two automata agree on all of them (else None, also past
    ``MAX_SHIFT_PAIRS`` pairs: then the states are not worth proving alike).
    ``work``: counts the runs compared (a proof that fails counts only the pairs
    before); ``marks``: kept from earlier proofs.

    The two rows of a pair are compared run by run: a row of 256 bytes has a few
    dozen runs of equal targets, and byte by byte this proof was a sixth of a
    step that entered a bounded string."""
    table = lexer.table
    accepts = lexer.accepts
    if marks is None:
        marks = ShiftMarks()
    stamp = marks.begin(lexer.dfa.state_count)
    their_mark = marks.their_mark
    their_name = marks.their_name
    our_mark = marks.our_mark
    their_states = vec[i64]([i64(reference)])
    our_states = vec[i64]([i64(start)])
    their_mark[reference] = stamp
    their_name[reference] = start
    our_mark[start] = stamp
    level_start = 0
    level_end = 1
    for _ in range(SHIFT_DEPTH):
        for index in range(level_start, level_end):
            theirs = int(their_states[index])
            ours = int(our_states[index])
            i = marks.row(table, theirs, work)
            j = marks.row(table, ours, work)
            runs = marks.runs  # after both rows are cut: cutting one may move the vector
            compared = 0
            while True:  # over the runs of both rows at once: each pair of targets once
                compared += 1  # as long as a trie node of a walk takes
                their_next = runs[i + 1]
                our_next = runs[j + 1]
                if (their_next == DEAD) != (our_next == DEAD):
                    return None
                if their_next == DEAD:  # both stop here: the lexeme ends (or the token dies) in both
                    if bool(accepts[theirs]) != bool(accepts[ours]):
                        return None
                elif their_mark[their_next] != stamp:
                    if our_mark[our_next] == stamp:
                        return None  # two of the reference's states would share one name
                    their_mark[their_next] = stamp
                    their_name[their_next] = our_next
                    our_mark[our_next] = stamp
                    their_states = append(their_states, their_next)
                    our_states = append(our_states, our_next)
                    if len(their_states) > MAX_SHIFT_PAIRS:
                        return None
                elif their_name[their_next] != our_next:
                    return None
                their_end = runs[i]
                our_end = runs[j]
                if their_end == 255 and our_end == 255:
                    break
                if their_end <= our_end:
                    i += 2
                if our_end <= their_end:
                    j += 2
            if work is not None:
                work.done += compared
        level_start = level_end
        level_end = len(their_states)
    renamed = {int(their_states[k]): int(our_states[k]) for k in range(len(their_states))}
    # sequences name an ended state by its terminals (``SequenceTable.canonize``): a
    # lexeme's renaming must follow from those alone
    named: dict[tuple[int, ...], tuple[int, ...]] = {}
    for theirs, ours in renamed.items():
        if accepts[theirs] and named.setdefault(accepts[theirs], accepts[ours]) != accepts[ours]:
            return None
    return renamed


def _lexeme_names(renamed: dict[int, int], accepts: list[tuple[int, ...]], sequences: SequenceTable) -> dict[int, int]:
    """``renamed`` for the states lexemes end in, as sequences name them
    (``SequenceTable.name``; ``shift_renaming`` proved the names agree)."""
    names: dict[int, int] = {}
    for theirs, ours in renamed.items():
        if accepts[theirs]:
            names[sequences.name(theirs)] = sequences.name(ours)
    return names


def _renamed_sequence(
    sequence: int, lexemes: dict[int, int], names: dict[int, int], sequences: SequenceTable
) -> int:
    """``sequence`` of the reference with its first lexeme (ended inside the
    renamed states: ``lexemes``, ``_lexeme_names``) renamed; the lexemes after it
    are the same in both. -1 when that lexeme ended outside the renaming."""
    found = names.get(sequence, -2)
    if found != -2:
        return found
    states = sequences.states(sequence)
    first = lexemes.get(states[0], DEAD)
    result = -1
    if first != DEAD:
        result = sequences.extend(EMPTY_SEQUENCE, first)
        for state in states[1:]:
            result = sequences.extend(result, state)
    names[sequence] = result
    return result


def _long_tokens(
    lexer: Lexer,
    trie: TokenTrie,
    start: int,
    reference: int,
    renamed: dict[int, int],
    lexemes: dict[int, int],
    names: dict[int, int],
    sequences: SequenceTable,
    removed: vec[i32],
    work: Work | None,
) -> tuple[vec[i32], list[TokenGroup]]:
    """The tokens longer than ``SHIFT_DEPTH`` that ``start`` does not treat as the
    renamed reference does: added to ``removed`` (when the reference's groups hold
    them) and grouped by what they do from ``start``. Both states are stepped along
    the trie, only into subtrees deeper than the proof."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    deepest = trie.deepest()
    ours_at = per_depth(trie, start)
    our_sequence_at = per_depth(trie, EMPTY_SEQUENCE)
    theirs_at = per_depth(trie, reference)
    their_sequence_at = per_depth(trie, EMPTY_SEQUENCE)
    walked = Grouping(lexer.dfa.state_count)
    node = 1
    node_count = len(node_byte)
    steps = 0
    while node < node_count:
        steps += 1
        if deepest[node] <= SHIFT_DEPTH:
            node = subtree_end[node]  # every token below is as short as the proof
            continue
        depth = node_depth[node]
        byte = node_byte[node]
        ours, our_sequence = sequence_step(table, accepts, ours_at[depth - 1], our_sequence_at[depth - 1], byte, sequences)
        theirs, their_sequence = sequence_step(table, accepts, theirs_at[depth - 1], their_sequence_at[depth - 1], byte, sequences)
        if ours == DEAD and theirs == DEAD:
            node = subtree_end[node]
            continue
        if (ours != DEAD and theirs != DEAD and our_sequence != EMPTY_SEQUENCE and ours == theirs
                and _renamed_sequence(their_sequence, lexemes, names, sequences) == our_sequence):
            node = subtree_end[node]  # past the first lexeme, both read the same from the same state
            continue
        ours_at[depth] = i64(ours)
        our_sequence_at[depth] = i64(our_sequence)
        theirs_at[depth] = i64(theirs)
        their_sequence_at[depth] = i64(their_sequence)
        first = first_token[node]
        last = first_token[node + 1]
        if depth > SHIFT_DEPTH and first < last:
            same = False
            if ours != DEAD and theirs != DEAD:
                expected = renamed.get(theirs, DEAD) if their_sequence == EMPTY_SEQUENCE else theirs
                same = expected == ours and _renamed_sequence(their_sequence, lexemes, names, sequences) == our_sequence
            if not same:
                for k in range(first, last):
                    token_id = i32(trie_tokens[k])
                    if theirs != DEAD:
                        removed = append(removed, token_id)
                    if ours != DEAD:
                        group = walked.group(our_sequence, ours)
                        group.token_ids = append(group.token_ids, token_id)
                        group.size += 1
        node += 1
    if work is not None:
        work.done += steps
    return removed, walked.groups

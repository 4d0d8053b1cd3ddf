"""The token-level lexing transducer: what every token does from a lexer state.

This is the composition of the byte-level lexer with the vocabulary (GreatGramma
seed, Alg. 3). From a lexer state, feeding a token's bytes ends zero or more
lexemes and leaves the lexer in some state. A lexeme is identified by the lexer
state it ended in (its alternatives are that state's accepting terminals), so
what a token does is (the sequence of ended states, the lexer state after it).
Sequences are interned in a ``SequenceTable``, shared across lexer states, so
equal sequences are equal ints and the inverse table (sequence -> tokens) is a
dictionary away. An ended state is named by the first state accepting the same
terminals (``SequenceTable.canonize``): a lexeme is its alternatives, whichever
state it ended in, so the 89 states inside a Go identifier end one lexeme, not 89.

One walk of the vocabulary trie per lexer state computes this for every token:
shared prefixes are stepped once, and a subtree is skipped at the first byte the
lexer cannot take.
"""

from __future__ import annotations

from typing import Container, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, mypyc_attr, u8

from structgen.engine.dfa import DEAD
from structgen.engine.int_map import IntMap
from structgen.engine.lexer import START, Lexer
from structgen.engine.tokenset import (
    add_ids,
    add_to_row,
    add_words,
    empty_buffer,
    empty_words,
    has_id,
    int_words,
    row_token_ids,
    row_words,
    token_set,
)
from structgen.engine.vocab import TokenTrie

EMPTY_SEQUENCE: Final = 0

ENDS_LEXEME: Final = -2
"""``first_moves``: the byte ends the lexeme in progress and starts the next."""

LARGE_GROUP: Final = 64
"""Groups with more tokens keep their token set for the groups' algebra; smaller
ones are lists of ids."""

OR_FROM: Final = 4_096
"""``union_words`` takes larger groups by their token sets, smaller by their ids."""

BORROWED_IDS: Final = 1
"""``TokenGroup.borrowed``: its token list is another group's."""

BORROWED_SET: Final = 2
"""``TokenGroup.borrowed``: its token set is another group's, or the vocabulary's."""

GROUP_WORK: Final = 4
"""``Work`` per group a merge looks at (its first bytes, maybe a copy), in trie
nodes stepped on: fitted to the compile times of 414 MaskBench grammars."""


class Work:
    """Trie nodes stepped through, token ids moved, groups merged (``GROUP_WORK``
    each) and states begun (``tables.STATE_WORK``) in building token groups: the
    work ``CompiledGrammar.precompute`` budgets. A second of it differs between
    machines (and with what else runs); this count does not."""

    def __init__(self) -> None:
        self.done = 0


class SequenceTable:
    """Interned sequences of ended lexer states; id 0 is the empty sequence.

    Every use of an ended state reads only its accepting terminals, so states that
    accept the same ones are one name here (``canonize``): the groups, verdicts and
    partial-stack results of one lexeme are then shared by every state it can end
    in (a keyword's prefixes inside an identifier)."""

    def __init__(self) -> None:
        # vecs, not lists: the cyclic collector does not scan them (a Go grammar at
        # 128k tokens holds 165,000 sequences)
        self.parent: vec[i64] = vec[i64]([-1])  # sequence id without its last element
        self.last: vec[i64] = vec[i64]([-1])  # its last ended lexer state (as named: ``canonize``)
        self.first: vec[i64] = vec[i64]([-1])  # its first ended lexer state (tables._build)
        self._extend = IntMap()  # sequence * stride + ended state -> the extended sequence
        self._stride = 1 << 32
        self.canon: vec[i64] = vec[i64]()  # lexer state -> the first state accepting the same terminals
        self._named: dict[tuple[int, ...], int] = {}

    def canonize(self, accepts: list[tuple[int, ...]]) -> None:
        """Name the states of ``accepts`` not named yet (a lexer joined with views
        grows): each by the first state that accepts the same terminals."""
        canon = self.canon
        for state in range(len(canon), len(accepts)):
            terminals = accepts[state]
            found = self._named.get(terminals, -1)
            if found < 0:
                found = state
                self._named[terminals] = state
            canon = append(canon, i64(found))
        self.canon = canon

    def name(self, ended_state: int) -> int:
        """The name sequences give a lexeme ended in ``ended_state``."""
        return int(self.canon[ended_state]) if ended_state < len(self.canon) else ended_state

    def extend(self, sequence: int, ended_state: int) -> int:
        """The id of ``sequence`` followed by ``ended_state`` (named as ``canonize`` named it)."""
        ended_state = self.name(ended_state)
        key = sequence * self._stride + ended_state
        found = int(self._extend.get(key, -1))
        if found < 0:
            found = len(self.parent)
            self.parent = append(self.parent, sequence)
            self.last = append(self.last, ended_state)
            self.first = append(self.first, ended_state if sequence == EMPTY_SEQUENCE else self.first[sequence])
            self._extend.put(key, found)
        return found

    def unknown_prefixes(self, sequence: int, known: Container[int]) -> tuple[int, list[int]]:
        """The longest prefix of ``sequence`` in ``known``, and the longer ones up to
        ``sequence``, longest first: what a memo filled prefix by prefix still lacks."""
        pending: list[int] = []
        while sequence not in known:
            pending.append(sequence)
            sequence = self.parent[sequence]
        return sequence, pending

    def states(self, sequence: int) -> list[int]:
        """The ended lexer states of ``sequence``, in order."""
        out: list[int] = []
        while sequence != EMPTY_SEQUENCE:
            out.append(self.last[sequence])
            sequence = self.parent[sequence]
        out.reverse()
        return out

    def __len__(self) -> int:
        return len(self.parent)


@mypyc_attr(acyclic=True)  # never in a reference cycle: left untracked by the collector (docs/tables.md)
class TokenGroup:
    """Tokens that, from one lexer state, end the same lexemes and stop in the same
    state: a row of the inverse token spanner table. Every token in a group is
    allowed or none is, so masks work per group, not per token.

    ``size`` is the number of tokens. ``token_ids`` lists them, except in a large
    group converged from another state's (``converged_groups``), which holds only its
    token set: ``ids()`` gives the list either way. A listed group of more than
    ``OR_FROM`` tokens keeps its words once a mask has used it (``words()``)."""

    sequence: Final[int]
    end_state: Final[int]
    token_ids: vec[i32]
    size: int

    def __init__(self, sequence: int, end_state: int) -> None:
        self.sequence = sequence
        self.end_state = end_state
        self.token_ids = vec[i32]()
        self.size = 0
        self._tokens = -1
        self._first_bytes = -1
        self._words = vec[i64]()
        self.verdict_class = -1  # numbered by the tables that classify it, with their tag (``MaskTables._build``)
        self.borrowed = 0  # BORROWED_IDS | BORROWED_SET: another group's, or the vocabulary's (``table_memory``)
        self.counted = 0  # the last ``table_memory`` count that saw it

    def tokens(self, vocab_size: int) -> int:
        """The group as a token set (built on first use)."""
        if self._tokens < 0:
            self._tokens = token_set(self.token_ids, vocab_size)
        return self._tokens

    def words(self, vocab_size: int) -> vec[i64]:
        """The group as words (``tokenset``), made on first use and kept: or-ing
        them is a native loop over 2,000 words at 128k tokens, where listing a
        group costs a nanosecond a token every time."""
        if not len(self._words):
            words = empty_words(vocab_size)
            add_ids(words, self.ids())
            self._words = words
        return self._words

    def alike(self, sequence: int, end_state: int) -> TokenGroup:
        """A group of the same tokens under another sequence and end state (a
        renaming's), sharing their list or set: groups are not modified once built."""
        group = TokenGroup(sequence, end_state)
        if len(self.token_ids) == self.size:
            group.token_ids = self.token_ids
        else:
            group._tokens = self._tokens
        group.borrowed = BORROWED_IDS | BORROWED_SET
        group.size = self.size
        group._first_bytes = self._first_bytes
        return group

    def first_bytes(self, first_byte: tuple[int, ...]) -> int:
        """The first bytes of the group's tokens, as a 256-bit set (built on first use)."""
        if self._first_bytes < 0:
            self._first_bytes = _first_bytes_of(self.ids(), first_byte)
        return self._first_bytes

    def ids(self) -> vec[i32]:
        """The token ids (ascending when rebuilt from the set)."""
        if len(self.token_ids) < self.size:
            tokens = self._tokens
            self.token_ids = vec[i32]([i32(t) for t in row_token_ids(tokens.to_bytes((tokens.bit_length() + 7) >> 3, "little"))])
            self.borrowed &= ~BORROWED_IDS  # a list of its own now
        return self.token_ids


def union_words(rows: list[bytes], groups: list[TokenGroup], vocab_size: int) -> vec[i64]:
    """The union of bitmask ``rows`` and ``groups`` as words (``tokenset``). The
    groups that hold a token set and are too large to list cheaply are or-ed as
    ints (2.6 µs an or at 128k tokens) and converted to words once (7.6 µs, as
    much as listing ``OR_FROM`` tokens); the other large ones by their words
    (``TokenGroup.words``: listed once, then about 1 µs an or); the rest are
    listed, bit by bit (about 1 ns a token). No group's token set is made for a
    mask: that cost an entry built inside a step 7 µs a group. Inside a string,
    where an entry takes nearly every token, listing them all was 120 µs of an
    entry's 150."""
    held = 0
    for group in groups:
        if _or_as_int(group):
            held |= group._tokens
    start = 0
    if held:
        words = int_words(held, vocab_size)
    elif rows:
        words = row_words(rows[0], vocab_size)
        start = 1
    else:
        words = empty_words(vocab_size)
    for row in rows[start:]:
        add_words(words, row_words(row, vocab_size))
    for group in groups:
        if _or_as_int(group):
            continue
        if group.size > OR_FROM:
            add_words(words, group.words(vocab_size))
        else:
            add_ids(words, group.token_ids)
    return words


def _or_as_int(group: TokenGroup) -> bool:
    """Whether ``union_words`` takes ``group``'s token set rather than its ids."""
    return group._tokens >= 0 and (group.size > OR_FROM or len(group.token_ids) < group.size)


Groups = tuple[TokenGroup, ...]
"""A lexer state's groups. A tuple: with groups untracked by the cyclic collector
(acyclic), the collector then stops scanning it; a grammar holds hundreds of
thousands of groups, which lists made each full collection walk."""


def per_depth(trie: TokenTrie, value: int) -> vec[i64]:
    """One slot per trie depth, each ``value``: a walk's lexer state (or sequence)
    at each depth of the path it is on."""
    return vec[i64]([i64(value)] * (trie.max_depth + 1))


class Grouping:
    """Groups being built, one per (ended-lexeme sequence, end state), in order of
    first appearance."""

    def __init__(self, stride: int) -> None:
        self.groups: list[TokenGroup] = []
        self._index: dict[int, int] = {}
        self._stride = stride  # above every end state

    def group(self, sequence: int, end_state: int) -> TokenGroup:
        """The group of the tokens that end ``sequence`` and stop in ``end_state``."""
        key = sequence * self._stride + end_state
        index = self._index.get(key, -1)
        if index < 0:
            index = len(self.groups)
            self._index[key] = index
            self.groups.append(TokenGroup(sequence, end_state))
        return self.groups[index]


def token_groups(
    lexer: Lexer,
    trie: TokenTrie,
    start: int,
    sequences: SequenceTable,
    first_bytes: list[bool] | None = None,
    work: Work | None = None,
) -> Groups:
    """The inverse table from lexer state ``start``: every token that can be lexed
    from it, grouped by (ended-lexeme sequence, end state), groups in order of
    first appearance and tokens in trie order. Tokens in no group cannot be lexed
    from ``start`` at all. With ``first_bytes``, only the tokens whose first byte is
    marked there are walked. ``work``: counts the nodes walked."""
    grouping = Grouping(lexer.dfa.state_count)
    walked = walk_groups(lexer, trie, 1, len(trie.node_byte), start, EMPTY_SEQUENCE, sequences, grouping, first_bytes)
    if work is not None:
        work.done += walked
    for found in grouping.groups:
        found.size = len(found.token_ids)
    return tuple(grouping.groups)


def walk_groups(
    lexer: Lexer,
    trie: TokenTrie,
    first_node: int,
    end_node: int,
    parent_state: int,
    parent_sequence: int,
    sequences: SequenceTable,
    grouping: Grouping,
    first_bytes: list[bool] | None,
) -> int:
    """Walk the trie's nodes ``first_node`` up to ``end_node`` (whole subtrees, all
    children of one parent, which the lexer left in ``parent_state`` having ended
    ``parent_sequence``), adding each token to its group in ``grouping``; the nodes
    stepped on. ``first_bytes``: see ``token_groups``."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    stride = lexer.dfa.state_count
    state_at = per_depth(trie, parent_state)  # packed: a list boxed every state it was given
    sequence_at = per_depth(trie, parent_sequence)
    last_key = -1
    group = TokenGroup(EMPTY_SEQUENCE, START)  # the group of last_key
    node = first_node
    steps = 0
    while node < end_node:
        steps += 1
        depth = node_depth[node]
        byte = node_byte[node]
        if depth == 1 and first_bytes is not None and not first_bytes[byte]:
            node = subtree_end[node]
            continue
        state = state_at[depth - 1]
        sequence = sequence_at[depth - 1]
        following = table[state * 256 + byte]
        if following == DEAD:
            # the lexeme ends here if it is a whole terminal; the byte starts the next
            if state == START or not accepts[state]:
                node = subtree_end[node]
                continue
            following = table[START * 256 + byte]
            if following == DEAD:
                node = subtree_end[node]
                continue
            sequence = sequences.extend(sequence, state)
        state_at[depth] = i64(following)
        sequence_at[depth] = i64(sequence)
        first = first_token[node]
        last = first_token[node + 1]
        if first < last:
            key = sequence * stride + following
            if key != last_key:
                group = grouping.group(sequence, following)
                last_key = key
            ids = group.token_ids
            for k in range(first, last):
                ids = append(ids, i32(trie_tokens[k]))
            group.token_ids = ids
        node += 1
    return steps


def sequence_step(table: tuple[int, ...], accepts: list[tuple[int, ...]], state: int, sequence: int, byte: int, sequences: SequenceTable) -> tuple[int, int]:
    """One byte from ``state`` (DEAD: already dead), ending the lexeme in progress
    when the byte cannot continue it, as ``walk_groups`` does."""
    if state == DEAD:
        return DEAD, sequence
    following = table[state * 256 + byte]
    if following == DEAD and state != START and accepts[state]:
        following = table[START * 256 + byte]
        if following != DEAD:
            sequence = sequences.extend(sequence, state)
    return following, sequence


def ended_groups(
    lexer: Lexer,
    trie: TokenTrie,
    state: int,
    moves: vec[i64],
    start_groups: Groups,
    sequences: SequenceTable,
    vocab_size: int,
    work: Work | None = None,
) -> Groups:
    """The groups of a lexer state that can end its lexeme (a key's closing quote,
    the digits of a number), from the start's groups (``start_groups``).

    A token whose first byte ends the lexeme then does what it does from the
    start: its group is the start's, with ``state`` in front of the sequence. Only
    the tokens whose first byte continues the lexeme are walked; for a state that
    every byte ends (a closing quote, a bracket), none are. ``moves``: the state's
    ``first_moves``; ``work``: counts the nodes and ids."""
    roots = trie.roots()
    ending = [False] * 256
    continuing = [False] * 256
    ends_mask = 0
    for i in range(len(roots)):
        byte = trie.node_byte[roots[i]]
        if moves[i] == ENDS_LEXEME:
            ending[byte] = True
            ends_mask |= 1 << byte
        elif moves[i] != DEAD:
            continuing[byte] = True
    first_byte = trie.first_byte()
    ended_alone = sequences.extend(EMPTY_SEQUENCE, state)
    renamed: dict[int, int] = {EMPTY_SEQUENCE: ended_alone}
    prefixed: list[TokenGroup] = []
    for old in start_groups:
        old_first_bytes = old.first_bytes(first_byte)
        kept_first_bytes = old_first_bytes & ends_mask  # the first bytes of the tokens it keeps
        if kept_first_bytes == 0:
            continue  # none of its tokens ends the lexeme first
        sequence = old.sequence
        group = TokenGroup(ended_alone if sequence == EMPTY_SEQUENCE else _prefixed(sequence, renamed, sequences), old.end_state)
        if kept_first_bytes == old_first_bytes:  # every token of it ends the lexeme first
            group._first_bytes = old_first_bytes  # the same int object: 60 bytes a group of every such state
            if len(old.token_ids) == old.size:
                group.token_ids = old.token_ids  # shared: groups are not modified once built
            else:
                group._tokens = old._tokens
            group.borrowed = BORROWED_IDS | BORROWED_SET
            group.size = old.size
        else:
            group._first_bytes = kept_first_bytes
            kept = vec[i32]()
            for token_id in old.ids():
                if ending[first_byte[token_id]]:
                    kept = append(kept, token_id)
            if work is not None:
                work.done += old.size
            group.token_ids = kept
            group.size = len(kept)
        if group.size:
            prefixed.append(group)
    walked = list(token_groups(lexer, trie, state, sequences, continuing, work)) if any(continuing) else []
    return merged_groups(tuple(prefixed), vec[i32](), walked, first_byte, lexer.dfa.state_count, vocab_size, work)


def _prefixed(sequence: int, renamed: dict[int, int], sequences: SequenceTable) -> int:
    """``sequence`` with the state of ``renamed[EMPTY_SEQUENCE]`` in front (memoized there)."""
    missing: list[int] = []
    found = renamed.get(sequence, -1)
    while found < 0:
        missing.append(sequence)
        sequence = sequences.parent[sequence]
        found = renamed.get(sequence, -1)
    for pending in reversed(missing):
        found = sequences.extend(found, sequences.last[pending])
        renamed[pending] = found
    return found


def merged_groups(
    reference: Groups, removed: vec[i32], walked: list[TokenGroup], first_byte: tuple[int, ...], stride: int,
    vocab_size: int, work: Work | None,
) -> Groups:
    """``reference``'s groups less the ``removed`` tokens, plus the ``walked`` groups
    (``work``: counts the ids removed and added)."""
    if work is not None:
        work.done += len(removed) + sum([extra.size for extra in walked])
        work.done += GROUP_WORK * (len(reference) + len(walked))
    if not walked and not len(removed):
        return reference
    # the end states of the walked groups, folded to 32 bits: a reference group that
    # stops elsewhere shares no key with one (most do not: no dictionary entry for them)
    walked_ends: i64 = 0
    for extra in walked:
        walked_ends |= i64(1) << i64(extra.end_state & 31)
    removed_first_bytes = _first_bytes_of(removed, first_byte) if len(removed) else 0
    # marked in a bit buffer: a set of 100,000 boxed ids took longer than the walk that found them
    removed_bits = empty_buffer(vocab_size) if removed_first_bytes else vec[u8]()
    add_to_row(removed_bits, removed)
    removed_set = -1  # ``removed`` as a token set, built only if a large group needs it
    group_of: dict[int, int] = {}
    groups: list[TokenGroup] = []
    shared: list[bool] = []  # per group: the reference's own object (copied before a change)
    for old in reference:
        group = old
        if removed_first_bytes and old.first_bytes(first_byte) & removed_first_bytes:
            if removed_set < 0 and not _listed(old):
                removed_set = int.from_bytes(memoryview(removed_bits), "little")
            group = _without(old, removed_bits, max(removed_set, 0), vocab_size)
        if group.size:
            end_state = group.end_state
            if (walked_ends >> i64(end_state & 31)) & 1:
                group_of[group.sequence * stride + end_state] = len(groups)
            groups.append(group)
            shared.append(group is old)
    for extra in walked:
        key = extra.sequence * stride + extra.end_state
        index = group_of.get(key, -1)
        if index < 0:
            group_of[key] = len(groups)
            groups.append(extra)
            shared.append(False)
            continue
        group = groups[index]
        if shared[index]:
            group = _without(group, vec[u8](), 0, vocab_size)
            groups[index] = group
            shared[index] = False
        if len(group.token_ids) == group.size:
            ids = group.token_ids
            for token_id in extra.token_ids:
                ids = append(ids, token_id)
            group.token_ids = ids
            group._tokens = -1
        else:
            group._tokens = group._tokens | extra.tokens(vocab_size)
        group.size += extra.size
        group._first_bytes = -1
    return tuple(groups)


def _first_bytes_of(token_ids: vec[i32], first_byte: tuple[int, ...]) -> int:
    """The first bytes of ``token_ids``, as a 256-bit set (marked in a table first:
    or-ing a 256-bit int per token made most of ``merged_groups``'s cost)."""
    marked = vec[u8]([u8(0)] * 256)
    for token_id in token_ids:
        marked[first_byte[token_id]] = u8(1)
    found = 0
    for byte in range(256):
        if marked[byte]:
            found |= 1 << byte
    return found


def _listed(group: TokenGroup) -> bool:
    """Whether ``_without`` works on ``group``'s list of ids (else on its token set)."""
    return len(group.token_ids) == group.size and group.size <= 4 * LARGE_GROUP


def _without(old: TokenGroup, removed_bits: vec[u8], removed: int, vocab_size: int) -> TokenGroup:
    """``old`` less the tokens in ``removed_bits`` (a bit buffer, ``empty_buffer``;
    ``removed``: the same as a set, needed only when ``old`` is not ``_listed``);
    ``old`` itself when it holds none of them, a copy when ``removed_bits`` is empty."""
    if _listed(old):
        if len(removed_bits):
            kept = vec[i32]()
            for token_id in old.token_ids:
                if not has_id(removed_bits, token_id):
                    kept = append(kept, token_id)
            if len(kept) == old.size:
                return old
        else:
            kept = vec[i32](old.token_ids)
        group = TokenGroup(old.sequence, old.end_state)
        group.token_ids = kept
        group.size = len(kept)
        return group
    tokens = old.tokens(vocab_size)
    if removed and tokens & removed == 0:
        return old
    group = TokenGroup(old.sequence, old.end_state)
    group._tokens = tokens & ~removed
    group.size = group._tokens.bit_count()
    if group.size <= LARGE_GROUP:
        group.ids()
    return group

"""Token groups shared across grammars: what the vocabulary does inside a lexeme.

Inside a JSON string (or any lexeme whose automaton is the same in many
grammars) a walk of the vocabulary trie goes through nearly every token, yet all
of it but what follows the lexeme's end is the same in every grammar with that
automaton. ``lexeme_groups`` stores that walk per vocabulary
(``TokenTrie.lexeme_walks``) and finishes each grammar's groups from it;
``first_moves`` / ``ends_lexeme`` say where a lexeme can end at once, and
``converged_groups`` builds a state's groups from a reference state's where the
two automata agree (the token-level transducer itself is ``spanner``).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.spanner import (
    BORROWED_SET,
    EMPTY_SEQUENCE,
    ENDS_LEXEME,
    LARGE_GROUP,
    Groups,
    Grouping,
    SequenceTable,
    Work,
    merged_groups,
    per_depth,
    sequence_step,
    token_groups,
    walk_groups,
)
from structgen.engine.vocab import LexemeWalk, TokenTrie


def lexeme_groups(
    lexer: Lexer, trie: TokenTrie, start: int, sequences: SequenceTable, vocab_size: int, work: Work | None = None
) -> Groups | None:
    """``token_groups(lexer, trie, start, ...)``, mostly from what the vocabulary
    does inside the lexeme ``start`` is in, shared by every grammar whose lexer has
    the same automaton there (``TokenTrie.lexeme_walks``). None when that automaton
    has more than ``MAX_LEXEME_STATES`` states (a bounded string's counter).

    Inside a JSON string, a walk of the trie goes through nearly the whole
    vocabulary (15 ms at 128k tokens), yet all of it but what follows the closing
    quote is the same in every schema's grammar. Stored per vocabulary: the
    tokens that stay in the lexeme, by state, and the trie nodes where the lexeme
    ends; here, only the subtrees under those nodes are walked (from the start,
    as the grammar's lexer goes on). ``work``: counts the nodes walked and the ids
    copied."""
    states = _lexeme_states(lexer, start)
    if not states:
        return None
    number = {state: i for i, state in enumerate(states)}
    key = _lexeme_signature(lexer, states, number)
    found = trie.lexeme_walks.get(key)
    done = 0
    if found is None:
        found, done = _lexeme_walk(lexer, trie, start, number)
        if len(trie.lexeme_walks) < MAX_LEXEME_WALKS:
            trie.lexeme_walks[key] = found
    grouping = Grouping(lexer.dfa.state_count)
    first_byte = trie.first_byte()
    for i in range(len(found.staying_states)):  # one per end state
        group = grouping.group(EMPTY_SEQUENCE, states[found.staying_states[i]])
        group.token_ids = vec[i32](found.staying_ids[i])
        group.size = len(group.token_ids)
        done += group.size
        if found.staying_sets[i] < 0 and group.size > LARGE_GROUP:  # built once per vocabulary
            found.staying_sets[i] = group.tokens(vocab_size)
            found.staying_first_bytes[i] = group.first_bytes(first_byte)
        group._tokens = found.staying_sets[i]
        if found.staying_sets[i] >= 0:
            group.borrowed = BORROWED_SET  # the vocabulary's, shared by every grammar
        group._first_bytes = found.staying_first_bytes[i]
    subtree_end = trie.subtree_end
    for i in range(len(found.ending_nodes)):
        node = found.ending_nodes[i]
        done += walk_groups(lexer, trie, node, subtree_end[node], states[found.ending_states[i]], EMPTY_SEQUENCE,
                      sequences, grouping, None)
    for group in grouping.groups:
        group.size = len(group.token_ids)
    if work is not None:
        work.done += done
    return tuple(grouping.groups)


MAX_LEXEME_STATES: Final = 64
"""Largest automaton inside a lexeme whose vocabulary walk is shared across grammars."""

MAX_LEXEME_WALKS: Final = 256
"""Shared lexeme walks kept per vocabulary."""


def _lexeme_signature(lexer: Lexer, states: list[int], number: dict[int, int]) -> bytes:
    """The automaton inside the lexeme from ``states[0]`` as bytes (equal for equal
    automata): whether each state accepts, then each state's row, a target by its
    ``number`` (255: dead). Bytes, not a tuple of ints: built and hashed for every
    such state of every compile, the tuple (a dictionary lookup per byte) was about
    half of what reusing a walk cost."""
    table = lexer.table
    signature = vec[u8]()
    for state in states:
        signature = append(signature, u8(1) if lexer.accepts[state] else u8(0))
    last_target = DEAD
    last_code = u8(255)
    for state in states:
        row = state * 256
        for byte in range(256):
            target = table[row + byte]
            if target != last_target:  # rows run: one lookup per run
                last_target = target
                last_code = u8(255) if target == DEAD else u8(number[target])
            signature = append(signature, last_code)
    return bytes(memoryview(signature))


def _lexeme_states(lexer: Lexer, start: int) -> list[int]:
    """The states reachable from ``start`` without ending a lexeme, ``start`` first
    and the rest in the order a breadth-first search by byte finds them (so equal
    automata list their states alike); empty past ``MAX_LEXEME_STATES``."""
    table = lexer.table
    states = [start]
    seen = {start}
    position = 0
    while position < len(states):
        state = states[position]
        position += 1
        for byte in range(256):
            target = table[state * 256 + byte]
            if target != DEAD and target not in seen:
                if len(states) == MAX_LEXEME_STATES:
                    return []
                seen.add(target)
                states.append(target)
    return states


def _lexeme_walk(lexer: Lexer, trie: TokenTrie, start: int, number: dict[int, int]) -> tuple[LexemeWalk, int]:
    """One walk of the trie inside the lexeme from ``start``, and the nodes it
    stepped on; states by their ``number`` (their index in ``_lexeme_states``)."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    walk = LexemeWalk()
    staying_index: dict[int, int] = {}
    state_at = per_depth(trie, start)
    node = 1
    node_count = len(node_byte)
    steps = 0
    while node < node_count:
        steps += 1
        depth = node_depth[node]
        state = state_at[depth - 1]
        following = table[state * 256 + node_byte[node]]
        if following == DEAD:
            if state != START and accepts[state]:  # the lexeme ends before this node's byte
                walk.ending_nodes.append(node)
                walk.ending_states.append(number[state])
            node = subtree_end[node]
            continue
        state_at[depth] = i64(following)
        first = first_token[node]
        last = first_token[node + 1]
        if first < last:
            index = staying_index.get(following, -1)
            if index < 0:
                index = len(walk.staying_states)
                staying_index[following] = index
                walk.staying_states.append(number[following])
                walk.staying_ids.append(vec[i32]())
                walk.staying_sets.append(-1)
                walk.staying_first_bytes.append(-1)
            ids = walk.staying_ids[index]
            for k in range(first, last):
                ids = append(ids, i32(trie_tokens[k]))
            walk.staying_ids[index] = ids
        node += 1
    return walk, steps


def first_moves(lexer: Lexer, trie: TokenTrie, state: int) -> vec[i64]:
    """Per root child of the trie (``trie.roots()``), what its byte does from lexer
    ``state``: the next state when it extends the lexeme, ``ENDS_LEXEME`` when it ends the
    lexeme (the rest then depends on ``state`` itself), ``DEAD`` when it fails. A
    native vec: the loops comparing two states' moves run over every root child for
    every lexer state of a compile."""
    table = lexer.table
    out = vec[i64]()
    for node in trie.roots():
        byte = trie.node_byte[node]
        following = table[state * 256 + byte]
        if following == DEAD and state != START and lexer.accepts[state] and table[START * 256 + byte] != DEAD:
            following = ENDS_LEXEME
        out = append(out, following)
    return out


def ends_lexeme(moves: vec[i64]) -> bool:
    """Whether some first byte ends the lexeme in progress."""
    for move in moves:
        if move == ENDS_LEXEME:
            return True
    return False


def ending_weight(moves: vec[i64], weights: vec[i64]) -> int:
    """The tokens under first bytes that end the lexeme in progress: what
    ``spanner.ended_groups`` takes from the start's groups without a walk."""
    total = 0
    for i in range(len(moves)):
        if moves[i] == ENDS_LEXEME:
            total += weights[i]
    return total


def convergence_gain(moves: vec[i64], other: vec[i64], weights: vec[i64], same_lexeme: bool = False) -> int:
    """How much converging from the state with first moves ``other`` saves over a
    whole walk, in tokens under the trie root's children: those under first bytes
    both states move alike on are skipped; those under bytes only ``other`` can
    take would have to leave its groups one by one. ``same_lexeme``: the two end
    the same lexeme, so a byte ending it in both moves alike too."""
    gain = 0
    for i in range(len(moves)):
        if moves[i] == other[i] and (moves[i] >= 0 or (same_lexeme and moves[i] == ENDS_LEXEME)):
            gain += weights[i]
        elif moves[i] == DEAD and other[i] != DEAD:
            gain -= weights[i]
    return gain


def converged_groups(
    lexer: Lexer,
    trie: TokenTrie,
    start: int,
    reference: int,
    reference_groups: Groups,
    sequences: SequenceTable,
    vocab_size: int,
    work: Work | None = None,
) -> Groups:
    """The groups of lexer state ``start`` from those of the state ``reference``,
    walking only where the two differ (``work``: counts the nodes and ids).

    Both states are stepped along the trie together. Once a path leaves them in
    the same lexer state having ended the same lexemes, every token under it does
    the same from both, and the reference's groups already hold it: the subtree is
    skipped. So a state costs the part of the vocabulary it treats differently.
    Inside a JSON string, a key's prefix differs from the generic string body only
    along the key's own bytes; in the whitespace before a token, the k-th space
    differs from the start only along runs of whitespace. Unchanged groups are the
    reference's own objects (groups are not modified once built)."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    stride = lexer.dfa.state_count
    state_at = per_depth(trie, start)
    sequence_at = per_depth(trie, EMPTY_SEQUENCE)
    other_at = per_depth(trie, reference)  # the reference's walk; DEAD once it fails
    other_sequence_at = per_depth(trie, EMPTY_SEQUENCE)
    walked = Grouping(stride)  # tokens whose outcome differs, grouped as token_groups does
    removed = vec[i32]()  # tokens the reference's groups hold that ``start`` treats otherwise
    node = 1
    node_count = len(node_byte)
    steps = 0
    while node < node_count:
        steps += 1
        depth = node_depth[node]
        byte = node_byte[node]
        # both steps are ``sequence_step`` written out: calling it here made every state's
        # groups 15% slower (this loop is the largest part of a schema's compile)
        other = other_at[depth - 1]
        other_sequence = other_sequence_at[depth - 1]
        if other != DEAD:
            moved = table[other * 256 + byte]
            if moved == DEAD and other != START and accepts[other]:
                moved = table[START * 256 + byte]
                if moved != DEAD:
                    other_sequence = sequences.extend(other_sequence, other)
            other = moved
        state = state_at[depth - 1]
        sequence = sequence_at[depth - 1]
        following = table[state * 256 + byte]
        if following == DEAD and state != START and accepts[state]:
            following = table[START * 256 + byte]
            if following != DEAD:
                sequence = sequences.extend(sequence, state)
        if following == DEAD or (following == other and sequence == other_sequence):
            # failed from ``start`` (the reference's tokens here go), or converged (they stay)
            if following == DEAD and other != DEAD:
                for k in range(first_token[node], first_token[subtree_end[node]]):
                    removed = append(removed, i32(trie_tokens[k]))
            node = subtree_end[node]
            continue
        state_at[depth] = i64(following)
        sequence_at[depth] = i64(sequence)
        other_at[depth] = i64(other)
        other_sequence_at[depth] = i64(other_sequence)
        first = first_token[node]
        last = first_token[node + 1]
        if first < last:
            group = walked.group(sequence, following)
            ids = group.token_ids
            for k in range(first, last):
                ids = append(ids, i32(trie_tokens[k]))
                if other != DEAD:
                    removed = append(removed, i32(trie_tokens[k]))
            group.token_ids = ids
            group.size = len(ids)
        node += 1
    if work is not None:
        work.done += steps
    return merged_groups(reference_groups, removed, walked.groups, trie.first_byte(), stride, vocab_size, work)

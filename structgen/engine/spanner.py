"""The token-level lexing transducer: what every token does from a lexer state.

This is the composition of the byte-level lexer with the vocabulary (GreatGramma
seed, Alg. 3). From a lexer state, feeding a token's bytes ends zero or more
lexemes and leaves the lexer in some state. A lexeme is identified by the lexer
state it ended in (its alternatives are that state's accepting terminals), so
what a token does is (the sequence of ended states, the lexer state after it).
Sequences are interned in a ``SequenceTable``, shared across lexer states, so
equal sequences are equal ints and the inverse table (sequence -> tokens) is a
dictionary away.

One walk of the vocabulary trie per lexer state computes this for every token:
shared prefixes are stepped once, and a subtree is skipped at the first byte the
lexer cannot take.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, u8

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.tokenset import empty_buffer, row_token_ids, token_set
from structgen.engine.vocab import TokenTrie

EMPTY_SEQUENCE: Final = 0

ENDS_LEXEME: Final = -2
"""``first_moves``: the byte ends the lexeme in progress and starts the next."""

LARGE_GROUP: Final = 64
"""Groups with more tokens keep their token set; smaller ones are set bit by bit."""


class SequenceTable:
    """Interned sequences of ended lexer states; id 0 is the empty sequence."""

    def __init__(self) -> None:
        self.parent: list[int] = [-1]  # sequence id without its last element
        self.last: list[int] = [-1]  # its last ended lexer state
        self._extend: dict[int, int] = {}
        self._stride = 1 << 32

    def extend(self, sequence: int, ended_state: int) -> int:
        """The id of ``sequence`` followed by ``ended_state``."""
        key = sequence * self._stride + ended_state
        found = self._extend.get(key, -1)
        if found < 0:
            found = len(self.parent)
            self.parent.append(sequence)
            self.last.append(ended_state)
            self._extend[key] = found
        return found

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


class TokenGroup:
    """Tokens that, from one lexer state, end the same lexemes and stop in the same
    state: a row of the inverse token spanner table. Every token in a group is
    allowed or none is, so masks work per group, not per token.

    ``size`` is the number of tokens. ``token_ids`` lists them, except in a large
    group derived from another state's (``derive_groups``), which holds only its
    token set: ``ids()`` gives the list either way."""

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

    def tokens(self, vocab_size: int) -> int:
        """The group as a token set (built on first use)."""
        if self._tokens < 0:
            self._tokens = token_set(self.token_ids, vocab_size)
        return self._tokens

    def ids(self) -> vec[i32]:
        """The token ids (ascending when rebuilt from the set)."""
        if len(self.token_ids) < self.size:
            tokens = self._tokens
            self.token_ids = vec[i32]([i32(t) for t in row_token_ids(tokens.to_bytes((tokens.bit_length() + 7) >> 3, "little"))])
        return self.token_ids


def token_groups(
    lexer: Lexer, trie: TokenTrie, start: int, sequences: SequenceTable, first_bytes: list[bool] | None = None
) -> list[TokenGroup]:
    """The inverse table from lexer state ``start``: every token that can be lexed
    from it, grouped by (ended-lexeme sequence, end state), groups in order of
    first appearance and tokens in trie order. Tokens in no group cannot be lexed
    from ``start`` at all. With ``first_bytes``, only tokens whose first byte is
    marked there are walked."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    stride = lexer.dfa.state_count
    state_at = [start] * (trie.max_depth + 1)
    sequence_at = [EMPTY_SEQUENCE] * (trie.max_depth + 1)
    group_of: dict[int, int] = {}  # sequence * stride + end state -> index in groups
    groups: list[TokenGroup] = []
    last_key = -1
    group = TokenGroup(EMPTY_SEQUENCE, START)  # the group of last_key
    node = 1
    node_count = len(node_byte)
    while node < node_count:
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
        state_at[depth] = following
        sequence_at[depth] = sequence
        first = first_token[node]
        last = first_token[node + 1]
        if first < last:
            key = sequence * stride + following
            if key != last_key:
                index = group_of.get(key, -1)
                if index < 0:
                    index = len(groups)
                    group_of[key] = index
                    groups.append(TokenGroup(sequence, following))
                group = groups[index]
                last_key = key
            ids = group.token_ids
            for k in range(first, last):
                ids = append(ids, i32(trie_tokens[k]))
            group.token_ids = ids
        node += 1
    for found in groups:
        found.size = len(found.token_ids)
    return groups


def first_moves(lexer: Lexer, trie: TokenTrie, state: int) -> list[int]:
    """Per root child of the trie (``trie.roots()``), what its byte does from lexer
    ``state``: the next state when it extends the lexeme, ``ENDS_LEXEME`` when it ends the
    lexeme (the rest then depends on ``state`` itself), ``DEAD`` when it fails."""
    table = lexer.table
    out: list[int] = []
    for node in trie.roots():
        byte = trie.node_byte[node]
        following = table[state * 256 + byte]
        if following == DEAD and state != START and lexer.accepts[state] and table[START * 256 + byte] != DEAD:
            following = ENDS_LEXEME
        out.append(following)
    return out


def derive_groups(
    lexer: Lexer,
    trie: TokenTrie,
    start: int,
    sequences: SequenceTable,
    reference: list[TokenGroup],
    differs: list[bool],
    vocab_size: int,
) -> list[TokenGroup]:
    """The groups of lexer state ``start`` from those of a state whose first bytes
    lead to the same states (so every token under such a byte does the same from
    both): ``differs`` marks, per root child, where they do not. Tokens under those
    are walked from ``start``; the reference's groups lose them. Inside a JSON
    string most lexer states (a key's prefix, say) differ from the generic string
    body in one or two first bytes, so this costs a small walk and a few set
    operations instead of a walk over the whole vocabulary."""
    roots = trie.roots()
    first_bytes = [False] * 256
    gone = empty_buffer(vocab_size)  # the tokens under differing first bytes
    for i in range(len(roots)):
        if differs[i]:
            node = roots[i]
            first_bytes[trie.node_byte[node]] = True
            for k in range(trie.first_token[node], trie.first_token[trie.subtree_end[node]]):
                token_id = trie.token_ids[k]
                gone[token_id >> 3] = gone[token_id >> 3] | u8(1 << (token_id & 7))
    removed = int.from_bytes(memoryview(gone), "little")
    first_byte = trie.first_byte()
    stride = lexer.dfa.state_count
    group_of: dict[int, int] = {}
    groups: list[TokenGroup] = []
    for old in reference:
        group = TokenGroup(old.sequence, old.end_state)
        if len(old.token_ids) == old.size and old.size <= 4 * LARGE_GROUP:
            ids = vec[i32]()
            for token_id in old.token_ids:
                if not first_bytes[first_byte[token_id]]:
                    ids = append(ids, token_id)
            group.token_ids = ids
            group.size = len(ids)
        else:
            group._tokens = old.tokens(vocab_size) & ~removed
            group.size = group._tokens.bit_count()
            if group.size <= LARGE_GROUP:
                group.ids()
        if group.size:
            group_of[old.sequence * stride + old.end_state] = len(groups)
            groups.append(group)
    for walked in token_groups(lexer, trie, start, sequences, first_bytes):
        key = walked.sequence * stride + walked.end_state
        index = group_of.get(key, -1)
        if index < 0:
            group_of[key] = len(groups)
            groups.append(walked)
            continue
        group = groups[index]
        size = group.size + walked.size
        if len(group.token_ids) == group.size:
            ids = group.token_ids
            for token_id in walked.token_ids:
                ids = append(ids, token_id)
            group.token_ids = ids
            group._tokens = -1
        else:
            group._tokens = group._tokens | walked.tokens(vocab_size)
        group.size = size
    return groups

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
from mypy_extensions import i32

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.tokenset import token_set
from structgen.engine.vocab import TokenTrie

EMPTY_SEQUENCE: Final = 0


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
    allowed or none is, so masks work per group, not per token."""

    sequence: Final[int]
    end_state: Final[int]
    token_ids: vec[i32]

    def __init__(self, sequence: int, end_state: int) -> None:
        self.sequence = sequence
        self.end_state = end_state
        self.token_ids = vec[i32]()
        self._tokens = -1

    def tokens(self, vocab_size: int) -> int:
        """The group as a token set (built on first use)."""
        if self._tokens < 0:
            self._tokens = token_set(self.token_ids, vocab_size)
        return self._tokens


def token_groups(lexer: Lexer, trie: TokenTrie, start: int, sequences: SequenceTable) -> list[TokenGroup]:
    """The inverse table from lexer state ``start``: every token that can be lexed
    from it, grouped by (ended-lexeme sequence, end state), groups in order of
    first appearance and tokens in trie order. Tokens in no group cannot be lexed
    from ``start`` at all."""
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
    node = 1
    node_count = len(node_byte)
    while node < node_count:
        depth = node_depth[node]
        byte = node_byte[node]
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
            index = group_of.get(key, -1)
            if index < 0:
                index = len(groups)
                group_of[key] = index
                groups.append(TokenGroup(sequence, following))
            group = groups[index]
            for k in range(first, last):
                group.token_ids = append(group.token_ids, i32(trie_tokens[k]))
        node += 1
    return groups

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


class TokenSpans:
    """What each viable token does from one lexer state (parallel lists, trie order).

    Tokens not listed cannot be lexed from that state at all.
    """

    def __init__(self, token_ids: list[int], sequences: list[int], end_states: list[int]) -> None:
        self.token_ids = token_ids
        self.sequences = sequences
        self.end_states = end_states


class TokenGroup:
    """Tokens that, from one lexer state, end the same lexemes and stop in the same
    state: a row of the inverse token spanner table. Every token in a group is
    allowed or none is, so masks work per group, not per token."""

    sequence: Final[int]
    end_state: Final[int]
    token_ids: Final[list[int]]

    def __init__(self, sequence: int, end_state: int) -> None:
        self.sequence = sequence
        self.end_state = end_state
        self.token_ids = []
        self._tokens = -1

    def tokens(self, vocab_size: int) -> int:
        """The group as a token set (built on first use)."""
        if self._tokens < 0:
            self._tokens = token_set(self.token_ids, vocab_size)
        return self._tokens


def token_groups(lexer: Lexer, trie: TokenTrie, start: int, sequences: SequenceTable) -> list[TokenGroup]:
    """The inverse table from lexer state ``start``: tokens grouped by
    (ended-lexeme sequence, end state), in order of first appearance."""
    spans = token_spans(lexer, trie, start, sequences)
    by_key: dict[tuple[int, int], TokenGroup] = {}
    groups: list[TokenGroup] = []
    for i in range(len(spans.token_ids)):
        key = (spans.sequences[i], spans.end_states[i])
        group = by_key.get(key)
        if group is None:
            group = TokenGroup(key[0], key[1])
            by_key[key] = group
            groups.append(group)
        group.token_ids.append(spans.token_ids[i])
    return groups


def token_spans(lexer: Lexer, trie: TokenTrie, start: int, sequences: SequenceTable) -> TokenSpans:
    """Walk the vocabulary from lexer state ``start``."""
    table = lexer.table
    accepts = lexer.accepts
    node_byte = trie.node_byte
    node_depth = trie.node_depth
    subtree_end = trie.subtree_end
    first_token = trie.first_token
    trie_tokens = trie.token_ids
    state_at = [start] * (trie.max_depth + 1)
    sequence_at = [EMPTY_SEQUENCE] * (trie.max_depth + 1)
    token_ids: list[int] = []
    token_sequences: list[int] = []
    end_states: list[int] = []
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
        for k in range(first_token[node], first_token[node + 1]):
            token_ids.append(trie_tokens[k])
            token_sequences.append(sequence)
            end_states.append(following)
        node += 1
    return TokenSpans(token_ids, token_sequences, end_states)

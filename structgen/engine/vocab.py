"""The vocabulary as a byte trie, flattened in depth-first order.

Mask tables need, for every lexer state, what each token's bytes do to an
automaton. Running 130k tokens one by one repeats the work of their shared
prefixes; walking a trie steps each prefix once and skips a whole subtree the
moment the automaton dies, which is most of the vocabulary for most states.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, mypyc_attr

from structgen.engine.dfa import DEAD


@mypyc_attr(acyclic=True)  # never in a reference cycle: left untracked by the collector (docs/tables.md)
class LexemeWalk:
    """What the vocabulary does inside one lexeme, from one state of a lexer
    automaton (``lexeme_groups.lexeme_groups``), with that automaton's states numbered
    as it numbers them: the tokens that stay in the lexeme, by the state they end
    in, and the trie nodes whose byte comes after the lexeme ended (in the state
    listed beside each)."""

    def __init__(self) -> None:
        self.staying_states: list[int] = []
        self.staying_ids: list[vec[i32]] = []
        self.staying_sets: list[int] = []  # the same tokens as sets (-1 until built)
        self.staying_first_bytes: list[int] = []  # their first bytes, as 256-bit sets
        self.ending_nodes: list[int] = []
        self.ending_states: list[int] = []


class TokenTrie:
    """Every token's bytes in one trie; nodes numbered in preorder, node 0 the root.

    ``node_byte[n]`` is the byte on the edge into node ``n`` (-1 for the root),
    ``node_depth[n]`` its distance from the root, and ``subtree_end[n]`` the first
    node after ``n``'s subtree, so a walk skips a dead subtree in one step. The ids
    of the tokens whose bytes spell exactly the path to ``n`` are
    ``token_ids[first_token[n]:first_token[n + 1]]`` (several ids may share bytes).
    ``build_trie`` makes one from a vocabulary; the four lists are all there is
    to store (``structgen.trie_cache`` keeps them on disk).
    """

    node_byte: Final[tuple[int, ...]]
    node_depth: Final[tuple[int, ...]]
    subtree_end: Final[tuple[int, ...]]
    first_token: Final[tuple[int, ...]]
    token_ids: Final[tuple[int, ...]]
    max_depth: Final[int]

    def __init__(self, node_byte: list[int], node_depth: list[int], first_token: list[int], token_ids: list[int]) -> None:
        # tuples of ints, here and in the tables built once below: the cyclic
        # collector stops scanning them, where lists of a 128k vocabulary's
        # millions of entries made each full collection a pause of 0.2 s
        self.node_byte = tuple(node_byte)
        self.node_depth = tuple(node_depth)
        self.subtree_end = _subtree_ends(node_depth)
        self.first_token = tuple(first_token)
        self.token_ids = tuple(token_ids)
        self.max_depth = max(node_depth)
        self._roots: list[int] = []
        self._first_byte: tuple[int, ...] = ()
        self._outside: tuple[bool, ...] = ()
        self._deepest: tuple[int, ...] = ()
        # lexeme walks shared by every grammar compiled for this vocabulary, by automaton
        self.lexeme_walks: dict[bytes, LexemeWalk] = {}

    def outside(self, vocab_size: int) -> tuple[bool, ...]:
        """Per token id, whether the trie leaves it out (special and stop ids, and
        ids that spell nothing); built once, shared by every grammar (read only)."""
        if len(self._outside) != vocab_size:
            flags = [True] * vocab_size
            for token_id in self.token_ids:
                flags[token_id] = False
            self._outside = tuple(flags)
        return self._outside

    def deepest(self) -> tuple[int, ...]:
        """Per node, the depth of the deepest node in its subtree (built once)."""
        if not self._deepest:
            deepest = list(self.node_depth)
            for node in range(len(deepest) - 1, 0, -1):  # children come after their parent
                end = self.subtree_end[node]
                child = node + 1
                while child < end:
                    if deepest[child] > deepest[node]:
                        deepest[node] = deepest[child]
                    child = self.subtree_end[child]
            self._deepest = tuple(deepest)
        return self._deepest

    def roots(self) -> list[int]:
        """The children of the root (one per first byte), in preorder."""
        if not self._roots:
            node = 1
            while node < len(self.node_byte):
                self._roots.append(node)
                node = self.subtree_end[node]
        return self._roots

    def first_byte(self) -> tuple[int, ...]:
        """Per token id, its first byte (-1 for ids not in the trie)."""
        if not self._first_byte:
            out = [-1] * (max(self.token_ids, default=-1) + 1)
            for node in self.roots():
                byte = self.node_byte[node]
                for k in range(self.first_token[node], self.first_token[self.subtree_end[node]]):
                    out[self.token_ids[k]] = byte
            self._first_byte = tuple(out)
        return self._first_byte

    @property
    def node_count(self) -> int:
        return len(self.node_byte)

    def walk(self, table: list[int], start: int) -> tuple[list[int], list[int]]:
        """Run a byte automaton over every token at once.

        ``table[state * 256 + byte]`` is the next state, or ``DEAD``. Returns the ids
        of the tokens whose bytes, fed from ``start``, never reach ``DEAD``, and for
        each the state after its last byte; in trie order (tokens sorted by bytes).
        """
        node_byte = self.node_byte
        node_depth = self.node_depth
        subtree_end = self.subtree_end
        first_token = self.first_token
        token_ids = self.token_ids
        ids: list[int] = []
        states: list[int] = []
        state_at_depth: list[int] = [start] * (self.max_depth + 1)
        node = 1
        node_count = len(node_byte)
        while node < node_count:
            depth = node_depth[node]
            state = table[state_at_depth[depth - 1] * 256 + node_byte[node]]
            if state == DEAD:
                node = subtree_end[node]
                continue
            state_at_depth[depth] = state
            for k in range(first_token[node], first_token[node + 1]):
                ids.append(token_ids[k])
                states.append(state)
            node += 1
        return ids, states


def build_trie(vocab: list[bytes], excluded: list[int]) -> TokenTrie:
    """The trie of every token in ``vocab`` that spells something and is not ``excluded``."""
    skip = set(excluded)
    order = sorted((i for i in range(len(vocab)) if vocab[i] and i not in skip), key=vocab.__getitem__)
    node_byte: list[int] = [-1]
    node_depth: list[int] = [0]
    node_tokens: list[list[int]] = [[]]
    path: list[int] = [0]  # path[d]: the node at depth d on the current token's path
    previous = b""
    for token_id in order:
        spelled = vocab[token_id]
        if spelled != previous:
            shared = _common_prefix_length(previous, spelled)
            del path[shared + 1 :]
            for depth in range(shared, len(spelled)):
                path.append(len(node_byte))
                node_byte.append(spelled[depth])
                node_depth.append(depth + 1)
                node_tokens.append([])
            previous = spelled
        node_tokens[path[len(spelled)]].append(token_id)

    first_token: list[int] = []
    token_ids: list[int] = []
    for ids in node_tokens:
        first_token.append(len(token_ids))
        token_ids.extend(ids)
    first_token.append(len(token_ids))
    return TokenTrie(node_byte, node_depth, first_token, token_ids)


def _common_prefix_length(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    i = 0
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def _subtree_ends(node_depth: list[int]) -> tuple[int, ...]:
    """For each preorder node, the index of the first node outside its subtree."""
    node_count = len(node_depth)
    ends = [node_count] * node_count
    open_nodes: list[int] = []
    for node in range(node_count):
        depth = node_depth[node]
        while open_nodes and node_depth[open_nodes[-1]] >= depth:
            ends[open_nodes.pop()] = node
        open_nodes.append(node)
    return tuple(ends)

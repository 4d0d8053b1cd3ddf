"""Online token masks (GreatGramma Alg. 6, computed directly for now).

A matcher's configuration is a lexer state plus the parser's stack tops. A token
is allowed when its bytes, fed from the configuration, lex without error, every
lexeme they end is taken by some stack (with ``%ignore`` terminals dropped), and
the lexeme left in progress can still become a terminal that some resulting
stack takes — the realizable-sequence criterion of the GreatGramma seed
(Def. 3.3: the ended terminals ``T1..Tk`` followed by a terminal ``T`` reachable
from the final lexer state). A stop token is allowed when the text so far is
complete.

Masks group the vocabulary by what tokens do from the current lexer state (the
token-level transducer, ``spanner``): every token in a group is allowed or none
is, so the parser runs once per group, not once per token. The always-accepted
/ context-dependent tables that make this fast are the next step.

Configurations are immutable and linked to their predecessor, so ``rollback``
and ``fork`` are O(1) per token.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.lr import LRTable
from structgen.engine.spanner import EMPTY_SEQUENCE, SequenceTable, token_spans
from structgen.engine.stack import GLRParser, StackNode
from structgen.engine.vocab import TokenTrie


MAX_JUMP_FORWARD: Final = 4096
"""Default bound on the bytes one jump-forward call returns."""


class TokenGroup:
    """Tokens that, from one lexer state, end the same lexemes and stop in the same state."""

    def __init__(self, sequence: int, end_state: int) -> None:
        self.sequence = sequence
        self.end_state = end_state
        self.token_ids: list[int] = []


class CompiledGrammar:
    """A grammar's lexer and tables joined with one vocabulary."""

    def __init__(
        self,
        lexer: Lexer,
        table: LRTable,
        ignored: list[bool],
        vocab: list[bytes],
        special_token_ids: list[int],
        stop_token_ids: list[int],
    ) -> None:
        self.lexer = lexer
        self.table = table
        self.ignored = ignored
        self.vocab = vocab
        self.vocab_size = len(vocab)
        # stop ids and tokens that spell nothing are never text, whatever the caller said
        self.special: list[bool] = [not data for data in vocab]
        for token_id in special_token_ids + stop_token_ids:
            self.special[token_id] = True
        self.stop_token_ids = stop_token_ids
        self.trie = TokenTrie(vocab, [i for i in range(len(vocab)) if self.special[i]])
        self.sequences = SequenceTable()
        self._groups: dict[int, list[TokenGroup]] = {}

    def groups(self, lexer_state: int) -> list[TokenGroup]:
        """The vocabulary grouped by what it does from ``lexer_state`` (memoized)."""
        found = self._groups.get(lexer_state)
        if found is not None:
            return found
        spans = token_spans(self.lexer, self.trie, lexer_state, self.sequences)
        by_key: dict[tuple[int, int], TokenGroup] = {}
        for i in range(len(spans.token_ids)):
            key = (spans.sequences[i], spans.end_states[i])
            group = by_key.get(key)
            if group is None:
                group = TokenGroup(key[0], key[1])
                by_key[key] = group
            group.token_ids.append(spans.token_ids[i])
        groups = list(by_key.values())
        self._groups[lexer_state] = groups
        return groups


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

    def __init__(self, compiled: CompiledGrammar, parser: GLRParser | None = None) -> None:
        self.compiled = compiled
        self.parser = parser if parser is not None else GLRParser(compiled.table)
        self.config = Config(START, self.parser.initial(), None, False)

    def fork(self) -> Matcher:
        """An independent matcher at the same point (shares the immutable history)."""
        other = Matcher(self.compiled, self.parser)
        other.config = self.config
        return other

    def reset(self) -> None:
        self.config = Config(START, self.parser.initial(), None, False)

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
        if not self._can_continue(state, tops):
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
                if probe._viable_byte(byte):
                    if only >= 0:
                        return bytes(forced)
                    only = byte
            if only < 0:
                break
            probe.accept_bytes(bytes([only]))
            forced.append(only)
        return bytes(forced)

    def _viable_byte(self, byte: int) -> bool:
        """Whether one more byte keeps the text a viable prefix (no state change)."""
        config = self.config
        state, finished = self.compiled.lexer.step(config.lexer_state, byte)
        if state == DEAD:
            return False
        tops = self._feed_lexeme(config.tops, finished) if finished else config.tops
        return bool(tops) and self._can_continue(state, tops)

    def allowed_tokens(self) -> list[int]:
        """Every token allowed next (stop tokens included when the text is complete)."""
        compiled = self.compiled
        config = self.config
        if config.stopped:
            return []
        accepts = compiled.lexer.accepts
        sequences = compiled.sequences
        after_sequence: dict[int, list[StackNode]] = {EMPTY_SEQUENCE: config.tops}
        allowed: list[int] = []
        for group in compiled.groups(config.lexer_state):
            tops = self._tops_after(group.sequence, after_sequence, sequences, accepts)
            if tops and self._can_continue(group.end_state, tops):
                allowed.extend(group.token_ids)
        if self.can_terminate():
            allowed.extend(compiled.stop_token_ids)
        return allowed

    def _tops_after(
        self,
        sequence: int,
        memo: dict[int, list[StackNode]],
        sequences: SequenceTable,
        accepts: list[list[int]],
    ) -> list[StackNode]:
        """The stacks after the lexemes of ``sequence`` (memoized by sequence prefix)."""
        pending: list[int] = []
        current = sequence
        while current not in memo:
            pending.append(current)
            current = sequences.parent[current]
        tops = memo[current]
        while pending:
            current = pending.pop()
            tops = self._feed_lexeme(tops, accepts[sequences.last[current]]) if tops else tops
            memo[current] = tops
        return tops

    def _feed_lexeme(self, tops: list[StackNode], alternatives: list[int]) -> list[StackNode]:
        return self.parser.feed_lexeme(tops, alternatives, self.compiled.ignored)

    def _can_continue(self, lexer_state: int, tops: list[StackNode]) -> bool:
        """Whether the lexeme in progress can still become a terminal some stack takes."""
        if lexer_state == START:
            return bool(tops)
        ignored = self.compiled.ignored
        for terminal in self.compiled.lexer.reachable_terminals[lexer_state]:
            if ignored[terminal] or self.parser.feed(tops, terminal):
                return True
        return False

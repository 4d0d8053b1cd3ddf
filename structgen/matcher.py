"""``compile`` and ``Matcher``: a grammar joined with a vocabulary, and its masks.

The heavy work is in ``structgen.engine.matcher`` (compiled); this module adds the
public API of DESIGN §5 around it: caching, text input, numpy bitmasks, and the
checks a grammar leaves to the matcher (``unique_items``, ``string_lengths``:
each step's point of the JSON text is kept beside the engine's, so rollback and
fork stay O(1)).
"""

from __future__ import annotations

import operator

import numpy as np
import numpy.typing as npt

from structgen.bitmask import check_bitmask
from structgen.engine.matcher import CompiledGrammar
from structgen.engine.matcher import Matcher as _EngineMatcher
from structgen.gc_pause import paused_gc
from structgen.grammar import Grammar
from structgen.spelling import spellable
from structgen.tokenizer_info import TokenizerInfo
from structgen.engine.tokenset import row_token_ids
from structgen.trie_cache import trie_for
from structgen.utf8 import whole_characters
from structgen.string_lengths import OUTSIDE, StringLengths, counts_for, step
from structgen.engine.unique_items import DUP, Scan, SearchMemo, UniqueItems, comma_tokens


def compile(grammar: Grammar, tokenizer_info: TokenizerInfo, *, lazy: bool = False) -> CompiledGrammar:  # noqa: A001
    """Join ``grammar`` with a vocabulary; cached on the grammar per tokenizer.

    By default the token tables of the lexer states are built now, for up to
    250 walks of the vocabulary's worth of work (``engine.matcher.GROUPS_WALKS``,
    about 2-5 s at 128k tokens; and, for small grammars, every table entry), so
    no mask pays for them later: the worst step stays fast. A grammar
    whose tables take longer (a schema with thousands of states inside bounded
    strings) gets the rest on first use, as ``lazy=True`` builds them all: the
    first mask comes sooner, some later ones take longer.

    Where some of the grammar's texts need a byte no token of the vocabulary holds,
    the grammar compiled is the rest of it (``structgen.spelling``): the mask never
    opens a path that cannot be finished; ``Unspellable`` when nothing is left.
    """
    return _compiled(spellable(grammar, tokenizer_info), tokenizer_info, lazy)


def _compiled(grammar: Grammar, tokenizer_info: TokenizerInfo, lazy: bool) -> CompiledGrammar:
    """``compile`` of a grammar taken as it is (tests build masks that dead-end with it)."""
    cache = grammar.compiled_for
    entry = cache.get(id(tokenizer_info))
    if entry is not None and entry[0] is tokenizer_info:
        return entry[1]
    with paused_gc():
        compiled = CompiledGrammar(
            grammar.lexer,
            grammar.table,
            grammar.ignored,
            tokenizer_info.decoded_vocab,
            tokenizer_info.stop_token_ids,
            trie_for(tokenizer_info),
        )
        if grammar.unique_items is not None or grammar.string_lengths is not None:
            compiled.checks = Checks(grammar.unique_items, grammar.string_lengths)
        if grammar.unique_items is not None:  # once per vocabulary, now rather than in a mask
            comma_tokens(tokenizer_info.decoded_vocab)
        if grammar.string_lengths is not None:
            counts_for(tokenizer_info.decoded_vocab)
        if not lazy:
            compiled.precompute()  # checks the compile's deadline between lexer states
    cache[id(tokenizer_info)] = (tokenizer_info, compiled)
    return compiled


class Checks:
    """What a grammar leaves to the matcher: repeated items, string lengths."""

    def __init__(self, unique: UniqueItems | None, lengths: StringLengths | None) -> None:
        self.unique = unique
        self.lengths = lengths


class Matcher:
    """Follows one generation: which tokens may come next, and what came."""

    def __init__(self, compiled: CompiledGrammar, _engine: _EngineMatcher | None = None,
                 _scans: _Scans | None = None, _memo: SearchMemo | None = None) -> None:
        self.compiled = compiled
        self._engine = _engine if _engine is not None else _EngineMatcher(compiled)
        checks = compiled.checks
        self._unique = checks.unique if isinstance(checks, Checks) else None
        self._lengths = checks.lengths if isinstance(checks, Checks) else None
        if _scans is None and isinstance(checks, Checks):
            _scans = self._start()
        self._scans = _scans  # the JSON point after each step (None without checks)
        self._memo = _memo if _memo is not None else SearchMemo()  # shared with forks, as the engine's parser is
        self._allowed: tuple[_Scans | None, bytes] = (None, b"")  # the last row computed, and where

    def _start(self) -> _Scans:
        return _Scans(None if self._unique is None else self._unique.start(), OUTSIDE, 0, None)

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> None:
        """Write the allowed next tokens into row ``index`` of ``bitmask`` (all
        bits clear once a stop token was accepted; words past the vocabulary clear)."""
        words = self.compiled.words
        check_bitmask(bitmask, words, self.compiled.vocab_size, index)
        row = np.frombuffer(self._row(), dtype="<i4")
        target = bitmask if bitmask.ndim == 1 else bitmask[index]
        target[:words] = row
        if target.shape[0] > words:
            target[words:] = 0

    def allowed_tokens(self) -> list[int]:
        if self._scans is None:
            return self._engine.allowed_tokens()
        return row_token_ids(self._row())

    def _row(self) -> bytes:
        """The allowed tokens as a bitmask row: the grammar's, less what the checks refuse."""
        row = self._engine.allowed_row()
        scans = self._scans
        if scans is None or self._engine.is_terminated():
            return row
        if self._allowed[0] is scans:
            return self._allowed[1]
        if self._unique is not None:
            assert scans.scan is not None
            refused = self._unique.refused(scans.scan, self._engine, row, self._memo)
            if refused:
                words = np.frombuffer(row, dtype="<u4").copy()
                for token in refused:
                    words[token >> 5] &= np.uint32(~(1 << (token & 31)) & 0xFFFFFFFF)
                row = words.tobytes()
        if self._lengths is not None:
            too_long = self._lengths.refused(self._engine, scans.string, scans.count, row, self.compiled.vocab)
            if too_long is not None:
                row = (np.frombuffer(row, dtype=np.uint8) & ~too_long).tobytes()
        self._allowed = (scans, row)
        return row

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False, and no change, when it is not allowed."""
        token_id = operator.index(token_id)  # numpy ints too
        if self._scans is None or token_id in self.compiled.stop_token_ids:
            accepted = self._engine.accept_token(token_id)
            if accepted and self._scans is not None:
                self._scans = self._scans.again()
            return accepted
        if not 0 <= token_id < self.compiled.vocab_size or self.compiled.special[token_id]:
            return False
        allowed = self._allowed
        if allowed[0] is self._scans and allowed[0] is not None:  # the mask of this point judged it
            if not allowed[1][token_id >> 3] >> (token_id & 7) & 1:
                return False
            return self._advance(self.compiled.vocab[token_id], judged=True)
        return self._advance(self.compiled.vocab[token_id], judged=False)

    def accept_string(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Advance by raw text (one step for ``rollback``); False, and no change, if not allowed."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if self._scans is None:
            return self._engine.accept_bytes(data)
        return not data or self._advance(data, judged=False)

    def _advance(self, data: bytes, judged: bool) -> bool:
        """``data`` as one step, through the engine and the checks: refused where it
        repeats an item or takes a string past its maximum length, or (unless a
        mask ``judged`` it) leaves an item that can only end as a repeat."""
        unique, lengths, scans = self._unique, self._lengths, self._scans
        assert scans is not None
        if not judged and lengths is not None and not lengths.kept(self._engine, scans.string, scans.count, data):
            return False
        after = scans.scan
        if unique is not None:
            assert scans.scan is not None
            after = unique.feed(scans.scan, data)
            if after is None or after is DUP:
                return False
        if not self._engine.accept_bytes(data):
            return False
        if not judged and unique is not None and after is not None and unique.may_end_as_repeat(after) \
                and not unique.avoidable(self._engine.fork(), after, self._memo):
            self._engine.rollback(1)
            return False
        self._scans = scans.after(after, data if lengths is not None else b"")  # strings matter to lengths only
        return True

    def find_jump_forward_string(self) -> str:
        """What every valid continuation starts with (whole characters only); the
        matcher is not advanced — accept it with ``accept_string`` to use it."""
        return whole_characters(self._engine.find_jump_forward_bytes())

    def rollback(self, num_tokens: int) -> None:
        num_tokens = operator.index(num_tokens)
        self._engine.rollback(num_tokens)
        for _ in range(num_tokens if self._scans is not None else 0):
            assert self._scans is not None and self._scans.previous is not None
            self._scans = self._scans.previous

    def fork(self) -> Matcher:
        return Matcher(self.compiled, self._engine.fork(), self._scans, self._memo)

    def can_terminate(self) -> bool:
        return self._engine.can_terminate()

    def is_terminated(self) -> bool:
        return self._engine.is_terminated()

    def reset(self) -> None:
        self._engine.reset()
        if self._scans is not None:
            self._scans = self._start()


class _Scans:
    """The JSON point after each accepted step, newest first (immutable, shared by
    forks): the repeated items' scan, and where the text is in a string and how
    many characters that holds."""

    __slots__ = ("scan", "string", "count", "previous")

    def __init__(self, scan: Scan | None, string: int, count: int, previous: _Scans | None) -> None:
        self.scan = scan
        self.string = string
        self.count = count
        self.previous = previous

    def after(self, scan: Scan | None, data: bytes) -> _Scans:
        """The point whose scan is ``scan``, after ``data`` in strings."""
        string, count = self.string, self.count
        for byte in data:
            string, count = step(string, count, byte)
        return _Scans(scan, string, count, self)

    def again(self) -> _Scans:
        """The same point, one step later (a stop token)."""
        return _Scans(self.scan, self.string, self.count, self)


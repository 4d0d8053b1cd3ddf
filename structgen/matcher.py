"""``compile`` and ``Matcher``: a grammar joined with a vocabulary, and its masks.

The heavy work is in ``structgen.engine.matcher`` (compiled); this module adds the
public API of DESIGN §5 around it: caching, text input, numpy bitmasks.
"""

from __future__ import annotations

import operator

import numpy as np
import numpy.typing as npt

from structgen.engine.matcher import CompiledGrammar
from structgen.engine.matcher import Matcher as _EngineMatcher
from structgen.gc_pause import paused_gc
from structgen.grammar import Grammar
from structgen.tokenizer_info import TokenizerInfo
from structgen.trie_cache import trie_for


def compile(grammar: Grammar, tokenizer_info: TokenizerInfo, *, lazy: bool = False) -> CompiledGrammar:  # noqa: A001
    """Join ``grammar`` with a vocabulary; cached on the grammar per tokenizer.

    By default the token tables of the lexer states are built now, for up to
    2 s (``engine.matcher.GROUPS_SECONDS``; and, for small grammars, every table
    entry), so no mask pays for them later: the worst step stays fast. A grammar
    whose tables take longer (a schema with thousands of states inside bounded
    strings) gets the rest on first use, as ``lazy=True`` builds them all: the
    first mask comes sooner, some later ones take longer.
    """
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
        if not lazy:
            compiled.precompute()  # checks the compile's deadline between lexer states
    cache[id(tokenizer_info)] = (tokenizer_info, compiled)
    return compiled


class Matcher:
    """Follows one generation: which tokens may come next, and what came."""

    def __init__(self, compiled: CompiledGrammar, _engine: _EngineMatcher | None = None) -> None:
        self.compiled = compiled
        self._engine = _engine if _engine is not None else _EngineMatcher(compiled)

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> None:
        """Write the allowed next tokens into row ``index`` of ``bitmask`` (all
        bits clear once a stop token was accepted; words past the vocabulary clear)."""
        words = self.compiled.words
        if bitmask.shape[-1] < words:
            raise ValueError(
                f"the bitmask has {bitmask.shape[-1]} words a row; {self.compiled.vocab_size} tokens need {words}"
            )
        row = np.frombuffer(self._engine.allowed_row(), dtype="<i4")
        target = bitmask if bitmask.ndim == 1 else bitmask[index]
        target[:words] = row
        if target.shape[0] > words:
            target[words:] = 0

    def allowed_tokens(self) -> list[int]:
        return self._engine.allowed_tokens()

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False, and no change, when it is not allowed."""
        return self._engine.accept_token(operator.index(token_id))  # numpy ints too

    def accept_string(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Advance by raw text (one step for ``rollback``); False, and no change, if not allowed."""
        return self._engine.accept_bytes(text.encode("utf-8") if isinstance(text, str) else bytes(text))

    def find_jump_forward_string(self) -> str:
        """What every valid continuation starts with (whole characters only); the
        matcher is not advanced — accept it with ``accept_string`` to use it."""
        return _whole_characters(self._engine.find_jump_forward_bytes())

    def rollback(self, num_tokens: int) -> None:
        self._engine.rollback(operator.index(num_tokens))

    def fork(self) -> Matcher:
        return Matcher(self.compiled, self._engine.fork())

    def can_terminate(self) -> bool:
        return self._engine.can_terminate()

    def is_terminated(self) -> bool:
        return self._engine.is_terminated()

    def reset(self) -> None:
        self._engine.reset()


def _whole_characters(data: bytes) -> str:
    """``data`` decoded, without a character cut at the end (the automata only ever
    produce valid UTF-8, so only the tail can be incomplete)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data[: exc.start].decode("utf-8")

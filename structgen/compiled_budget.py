"""Compiled grammars kept for reuse: bounded in number and in bytes.

``structgen.compile`` keeps each grammar's tables on the grammar, per tokenizer,
so that the same schema, tool set or regex asked again costs nothing. Those
tables are big (about 28 MB for a BFCL tool's schema at 128k tokens, 140 MB for
128 tools as one calls grammar) and grow as steps build what compile left,
while the grammars holding them live in caches bounded only by count (the
server's, ``constraint``'s). This budget is the one bound on all of them: every
compile is admitted here, and past ``max_grammars`` or ``max_bytes`` the least
recently used grammars give their tables up (a matcher still following one
keeps it until it ends; the grammar compiles again when asked again). It holds
the grammars weakly: one that nobody else holds goes as before, and leaves.

Bytes are counted from the objects (``CompiledGrammar.memory_bytes``): a grammar
when it is admitted, and at each admission also the one whose count is oldest,
so that tables grown by steps are counted again in turn (a count of every
grammar at each admission would cost as much as the tables are big).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from functools import partial
from typing import Any, Final, Protocol

from structgen.engine.matcher import CompiledGrammar

MAX_GRAMMARS: Final = 64
"""Compiled grammars (each per tokenizer) kept at most."""

MAX_BYTES: Final = 2 << 30
"""Bytes of compiled tables kept at most: 2 GiB, about 70 tool schemas at 128k tokens."""


class Holder(Protocol):
    """What holds compiled tables: a grammar, by tokenizer (``Grammar.compiled_for``)."""

    compiled_for: dict[int, tuple[Any, Any]]


Ident = tuple[int, int]  # (id(holder), key): a holder is weakly referenced, so alive while kept


class _Kept:
    """One kept grammar: its holder, weakly (a grammar nobody else holds goes, and
    its entry with it: the budget bounds what is kept, it keeps nothing alive)."""

    def __init__(self, holder: weakref.ref[Any], key: int, compiled: CompiledGrammar) -> None:
        self.holder = holder
        self.key = key
        self.bytes = compiled.memory_bytes()

    def compiled(self) -> CompiledGrammar | None:
        holder = self.holder()
        held = holder.compiled_for.get(self.key) if holder is not None else None
        return held[1] if held is not None else None


class CompiledBudget:
    """The kept compiled grammars, least recently used first."""

    def __init__(self, max_grammars: int = MAX_GRAMMARS, max_bytes: int = MAX_BYTES) -> None:
        self.max_grammars = max_grammars
        self.max_bytes = max_bytes
        self._kept: OrderedDict[Ident, _Kept] = OrderedDict()  # least recently used first
        self._counted: OrderedDict[Ident, None] = OrderedDict()  # the same, least recently counted first
        self._bytes = 0
        self._lock = threading.RLock()  # a holder's death (its weakref's callback) may come inside a locked call

    def configure(self, max_grammars: int, max_bytes: int) -> None:
        """New bounds (the server's ``Limits``), applied at once (but to the most
        recently used grammar, kept as the newest always is)."""
        if max_grammars < 1 or max_bytes < 1:
            raise ValueError(f"the compiled grammars' budget must be positive, got {max_grammars} grammars, {max_bytes} bytes")
        with self._lock:
            self.max_grammars = max_grammars
            self.max_bytes = max_bytes
            self._shrink(next(reversed(self._kept), None))  # the most recently used stays

    def admit(self, holder: Holder, key: int, compiled: CompiledGrammar) -> None:
        """``compiled``, just stored in ``holder.compiled_for[key]``, counted; older
        grammars dropped while the budget is passed (never this one: a grammar
        bigger than the whole budget is used, then dropped first)."""
        ident = (id(holder), key)
        with self._lock:
            self._forget(ident)
            self._kept[ident] = _Kept(weakref.ref(holder, partial(self._gone, ident)), key, compiled)
            self._counted[ident] = None
            self._bytes += self._kept[ident].bytes
            self._recount_oldest()
            self._shrink(ident)

    def used(self, holder: Holder, key: int) -> None:
        """``holder``'s tables for ``key`` served again: now the most recently used
        (not counted again here: that costs up to milliseconds for a big grammar,
        on the path that serves a cached one)."""
        with self._lock:
            ident = (id(holder), key)
            if ident in self._kept:
                self._kept.move_to_end(ident)

    def kept_bytes(self) -> int:
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._kept)

    def _gone(self, ident: Ident, ref: weakref.ref[Any]) -> None:
        """A kept holder was collected: its tables went with it."""
        with self._lock:
            kept = self._kept.get(ident)
            if kept is not None and kept.holder is ref:
                self._forget(ident)

    def _forget(self, ident: Ident) -> None:
        kept = self._kept.pop(ident, None)
        if kept is not None:
            del self._counted[ident]
            self._bytes -= kept.bytes

    def _recount_oldest(self) -> None:
        """Count again the grammar least recently counted (counting does not make it used)."""
        for ident in self._counted:
            kept = self._kept[ident]
            compiled = kept.compiled()
            if compiled is not None:
                now = compiled.memory_bytes()
                self._bytes += now - kept.bytes
                kept.bytes = now
            self._counted.move_to_end(ident)
            return

    def _shrink(self, newest: Ident | None) -> None:
        while self._kept and (len(self._kept) > self.max_grammars or self._bytes > self.max_bytes):
            oldest = next(iter(self._kept))
            if oldest == newest:
                if len(self._kept) == 1:
                    return
                self._kept.move_to_end(oldest)  # drop the next oldest instead
                continue
            kept = self._kept[oldest]
            self._forget(oldest)
            holder = kept.holder()
            if holder is not None:
                holder.compiled_for.pop(kept.key, None)


BUDGET: Final = CompiledBudget()
"""The process's budget: every ``structgen.compile`` is admitted here."""

"""What the grammars a process builds share, by pattern: terminal trees and the
patterns' own automata.

Most terminals of a JSON Schema grammar (the string, the numbers, punctuation
after whitespace) recur in every grammar a server or a benchmark builds. Reading
a regex terminal (``engine.regex_subset.read_terminal``; ``re``'s own parser,
interpreted Python, for what it leaves) was a third of building a median MaskBench grammar,
and each pattern's minimal automaton (``engine.dfa.PatternCache``) half of its
lexer. Trees and automata are never modified once built, so grammars share them;
both caches are bounded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from structgen.engine.dfa import PatternCache
from structgen.engine.regex import Node
from structgen.engine.regex_subset import read_terminal

MAX_CACHED_CHARS = 200_000
"""The terminal patterns whose trees are kept, in characters all together (about
10 MB of trees); the least recently used go first. A longer pattern is read each
time."""

MAX_SHARED_ENTRIES = 1_000_000
"""The size of the shared ``PatternCache`` (its parts' table entries and shapes:
at most a few tens of MB) past which the next grammar starts a new one."""


class TerminalTrees:
    """``read_terminal``'s results by (pattern, flags), least recently used dropped."""

    def __init__(self, max_chars: int = MAX_CACHED_CHARS) -> None:
        self.max_chars = max_chars
        self._trees: OrderedDict[tuple[str, str], tuple[Node, bool]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()  # a server builds grammars in several threads

    def __len__(self) -> int:
        return len(self._trees)

    @property
    def chars(self) -> int:
        """The characters of the patterns kept."""
        return self._chars

    def parsed(self, pattern: str, flags: str) -> tuple[Node, bool]:
        """``read_terminal(pattern, flags)``, read once while it is kept (a
        ``RegexError`` is raised again each time: nothing is kept for it)."""
        key = (pattern, flags)
        with self._lock:
            found = self._trees.get(key)
            if found is not None:
                self._trees.move_to_end(key)
                return found
        found = read_terminal(pattern, flags)
        if len(pattern) <= self.max_chars:
            with self._lock:
                if key not in self._trees:
                    self._trees[key] = found
                    self._chars += len(pattern)
                    while self._chars > self.max_chars:
                        (oldest, _), _ = self._trees.popitem(last=False)
                        self._chars -= len(oldest)
        return found


class SharedAutomata:
    """One ``PatternCache`` for the grammars built one after another, replaced by
    a new one once it holds more than ``max_entries`` (a lexer keeps the cache it
    was built with for its views, so a grammar still in use keeps its own)."""

    def __init__(self, max_entries: int = MAX_SHARED_ENTRIES) -> None:
        self.max_entries = max_entries
        self._cache = PatternCache()
        self._lock = threading.Lock()

    def cache(self) -> PatternCache:
        """The cache for the next grammar's lexer."""
        with self._lock:
            if self._cache.entries > self.max_entries:
                self._cache = PatternCache()
            return self._cache


TERMINAL_TREES = TerminalTrees()
"""The process's terminal trees, shared by every ``Grammar``."""

SHARED_AUTOMATA = SharedAutomata()
"""The process's pattern automata, shared by every ``Grammar``."""

"""The shortest text that completes an output, so generation can end within a budget.

A breadth-first search over bytes from the matcher's point: bytes that take the
lexer to the same state and finish the same terminals lead to the same
configuration, so one byte per such class is tried, and configurations already
reached (same lexer state, same stack tops — the stack is hash-consed, so equal
stacks have equal node ids) are not searched again. The first text after which
the output may end is the shortest. The search is bounded (``max_nodes``,
``max_bytes``): past the bounds there is no answer, never a long wait.
"""

from __future__ import annotations

from structgen.engine.dfa import DEAD
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.matcher import Matcher

MAX_NODES = 4000
MAX_BYTES = 512


def _rank(byte: int) -> int:
    """Readable bytes first, so a completion spells ``a`` or ``0``, not a control byte."""
    char = chr(byte)
    if char.isascii() and char.isalnum():
        return 0
    if 0x21 <= byte < 0x7F:
        return 1
    return 2 if byte == 0x20 else 3


PREFERRED = sorted(range(256), key=_rank)


def shortest_completion(matcher: Matcher, max_nodes: int = MAX_NODES, max_bytes: int = MAX_BYTES) -> bytes | None:
    """The shortest bytes after which the output may end (b"" if it may end now);
    None when the search passes its bounds or no completion exists. The matcher
    is not moved."""
    start = matcher._engine.fork()
    if start.can_terminate():
        return b""
    lexer = start.compiled.lexer
    seen = {_key(start)}
    level: list[tuple[EngineMatcher, bytes]] = [(start, b"")]
    nodes = 0
    while level:
        following: list[tuple[EngineMatcher, bytes]] = []
        for current, text in level:
            state = current.config.lexer_state
            classes: dict[tuple[int, tuple[int, ...]], int] = {}
            for byte in PREFERRED:
                target, finished = lexer.step(state, byte)
                if target != DEAD:
                    classes.setdefault((target, tuple(finished)), byte)
            for byte in classes.values():
                child = current.fork()
                if not child.accept_bytes(bytes((byte,))):
                    continue
                key = _key(child)
                if key in seen:
                    continue
                seen.add(key)
                extended = text + bytes((byte,))
                if child.can_terminate():
                    return extended
                nodes += 1
                if nodes > max_nodes or len(extended) >= max_bytes:
                    return None
                following.append((child, extended))
        level = following
    return None


def _key(matcher: EngineMatcher) -> tuple[int, ...]:
    config = matcher.config
    return (config.lexer_state, *(top.uid for top in config.tops))

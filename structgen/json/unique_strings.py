"""The ``uniqueItems`` trie walk inside a string: bytes against earlier items' characters.

Inside a string or key of a checked array's item, the walk of ``unique_items``
only asks, byte by byte, whether what is written can still become one of a few
earlier strings. Re-reading the whole string at every trie node (``Scan`` steps,
decoding, candidates) cost about 15 µs a node; here a node costs a character
comparison against the strings still alive. The walk hands back to ``Scan`` where
the string may end (a closing quote) and at a ``\\u`` escape (four hex digits, or
a surrogate pair: rare, and ``Scan``'s decoding already handles them).
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr

from structgen.engine.vocab import TokenTrie

QUOTE: Final = 0x22
BACKSLASH: Final = 0x5C
SHORT_ESCAPES: Final = {
    ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t",
}
ESCAPE_LETTERS: Final = {char: letter for letter, char in SHORT_ESCAPES.items()}


def utf8_length(lead: int) -> int:
    """The bytes of the UTF-8 sequence ``lead`` begins (0: no sequence begins so)."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


@mypyc_attr(acyclic=True)  # holds no object that holds it: left untracked by the collector
class StringWalk:
    """What one walk found below a point inside a string.

    ``handoffs``: trie nodes whose byte ``Scan`` must step (a quote that may end
    the string, the ``u`` of an escape), with the bytes written on the way there;
    ``risky``: nodes holding tokens after which the string can still become an
    earlier one, with the bytes written up to and including the node's. ``Scan``
    reads those bytes through ``structgen.json.syntax`` for where it is in them."""

    __slots__ = ("handoffs", "risky")

    def __init__(self) -> None:
        self.handoffs: list[tuple[int, bytes]] = []
        self.risky: list[tuple[int, bytes]] = []


def walk_string(trie: TokenTrie, children: list[int], targets: list[str], written: int, pending: bytes) -> StringWalk:
    """Walk the subtrees of ``children`` from a point inside a string where
    ``written`` characters are whole and ``pending`` holds the bytes of one begun
    (a backslash, or part of a UTF-8 sequence), following only bytes after which
    one of ``targets`` (strings that begin with what is written; no lone
    surrogates, which no unescaped bytes spell) can still be the string."""
    node_byte, subtree_end, first_token = trie.node_byte, trie.subtree_end, trie.first_token
    found = StringWalk()
    following = next_bytes(targets, written, pending)
    todo = [(child, targets, written, pending, b"") for child in children if node_byte[child] in following]
    while todo:
        node, alive, at, begun, path = todo.pop()
        byte = node_byte[node]
        if not begun:
            if byte == QUOTE:
                found.handoffs.append((node, path))
                continue
            if byte == BACKSLASH:
                kept = [target for target in alive if len(target) > at]  # any character has an escape
                begun = b"\\"
            elif byte < 0x80:
                char = chr(byte)
                kept = [target for target in alive if len(target) > at and target[at] == char]
                at += 1
            else:
                kept = [target for target in alive if len(target) > at and target[at].encode()[0] == byte]
                begun = bytes([byte])
        elif begun == b"\\":
            if byte == ord("u"):
                found.handoffs.append((node, path))
                continue
            char = SHORT_ESCAPES[byte]
            kept = [target for target in alive if target[at] == char]
            at, begun = at + 1, b""
        else:  # a UTF-8 sequence's next byte
            begun += bytes([byte])
            kept = [target for target in alive if target[at].encode().startswith(begun)]
            if len(begun) == utf8_length(begun[0]):
                at, begun = at + 1, b""
        path += bytes([byte])  # (``next_bytes`` let only bytes some string takes this far: ``kept`` holds one)
        if first_token[node] < first_token[node + 1]:
            found.risky.append((node, path))
        following = next_bytes(kept, at, begun)
        child = node + 1
        while child < subtree_end[node]:
            if node_byte[child] in following:
                todo.append((child, kept, at, begun, path))
            child = subtree_end[child]
    return found


def next_bytes(alive: list[str], at: int, begun: bytes) -> set[int]:
    """The bytes that may come next, where ``at`` characters of the strings
    ``alive`` are written and ``begun`` holds the bytes of the next one begun:
    those of some string's next character, and where ``Scan`` takes over (a quote
    ending the string, the ``u`` of an escape)."""
    if begun == b"\\":
        return {ESCAPE_LETTERS[target[at]] for target in alive if target[at] in ESCAPE_LETTERS} | {ord("u")}
    if begun:
        return {target[at].encode()[len(begun)] for target in alive}
    longer = [target for target in alive if len(target) > at]
    following = {target[at].encode()[0] for target in longer if target[at] >= " "}  # a control character only escaped
    if longer:
        following.add(BACKSLASH)  # any character has an escape
    following.add(QUOTE)
    return following

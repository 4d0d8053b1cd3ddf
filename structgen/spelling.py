"""A grammar cut down to the texts a vocabulary can spell.

A byte that no token of a vocabulary contains can never be written: SmolLM2's has
no token with 0x04, 0x06, 0x13, 0x14, 0x16 or 0x1D, nor with 0xF1 or 0xF2 (the
first bytes of U+40000-U+BFFFF). Where a grammar only *may* use such a byte (a
JSON string may hold any character) nothing needs doing: no token leads there, so
the mask never offers it. Where a text *must* use one (a regex ``"\\U00050000"``,
the ``a`` of ``a\\x04|b``), the mask would let the model start down a path it cannot
finish, and then allow no token at all.

``spellable(grammar, info)`` is the grammar to compile for ``info``'s vocabulary:

- the grammar itself (the common case), when its lexer's automaton, without the
  transitions on those bytes, still reaches from every state the terminals it
  reached before: no path depends on them;
- else the grammar rebuilt with each terminal that lost texts intersected with the
  texts of characters the vocabulary can spell (``Grammar(rules, patterns)``):
  a terminal left with no text drops out with the rules that need it
  (``structgen.productive``), and the mask then never opens a path that needs one
  of those bytes;
- ``Unspellable`` when nothing is left: every text of the grammar needs such a byte.

Cached per grammar and vocabulary. A byte that some tokens contain but none spells
on its own can still be needed where no token fits; the decoder then finds a mask
row with no token allowed and fails that sequence alone (``decoding.DeadEnd``).
"""

from __future__ import annotations

import weakref
from functools import lru_cache

from structgen.engine import charset
from structgen.engine.dfa import DEAD, ByteDFA
from structgen.engine.lexer import _reachable_terminals
from structgen.engine.regex import UNBOUNDED, chars, intersection, repeat
from structgen.grammar import Grammar
from structgen.lark_rules import GrammarError
from structgen.productive import EmptyLanguage
from structgen.tokenizer_info import UTF8_BYTES, TokenizerInfo


class Unspellable(GrammarError):
    """A grammar every text of which needs a byte that no token of the vocabulary contains."""

    code = "unspellable"  # the server's error code (docs/server.md)


# per grammar: id(TokenizerInfo) -> (that TokenizerInfo, the grammar to compile for it, None for the
# grammar itself: a value that held its own key would keep every grammar ever compiled alive)
_spelled: weakref.WeakKeyDictionary[Grammar, dict[int, tuple[TokenizerInfo, Grammar | None]]] = weakref.WeakKeyDictionary()
_absent: weakref.WeakKeyDictionary[TokenizerInfo, frozenset[int]] = weakref.WeakKeyDictionary()


def absent_bytes(info: TokenizerInfo) -> frozenset[int]:
    """The byte values that no ordinary token of ``info`` contains (special tokens
    spell nothing)."""
    found = _absent.get(info)
    if found is None:
        present: set[int] = set()
        for data in info.decoded_vocab:
            present.update(data)
        found = _absent[info] = frozenset(range(256)) - present
    return found


def spellable(grammar: Grammar, info: TokenizerInfo) -> Grammar:
    """``grammar``, or the grammar of its texts that ``info``'s vocabulary can spell
    (see the module); ``Unspellable`` when it has none."""
    cached = _spelled.setdefault(grammar, {})
    entry = cached.get(id(info))
    if entry is not None and entry[0] is info:
        return entry[1] if entry[1] is not None else grammar
    absent = absent_bytes(info)
    lost = _terminals_lost(grammar, absent) if absent else set()
    spelled = _restricted(grammar, lost, absent) if lost else None
    cached[id(info)] = (info, spelled)
    return spelled if spelled is not None else grammar


def _terminals_lost(grammar: Grammar, absent: frozenset[int]) -> set[int]:
    """The terminals that some lexer state a token can lead to (one reached from
    ``START`` without a byte of ``absent``) reaches only through such a byte."""
    lexer = grammar.lexer
    table = lexer.table
    states = len(table) // 256
    used = [b for b in sorted(absent) if table[b::256].count(DEAD) != states]  # columns, at C speed
    if not used:
        return set()
    cut = list(table)
    for byte in used:
        cut[byte::256] = [DEAD] * states
    reach = _reachable_terminals(ByteDFA(tuple(cut), lexer.accepts))
    changed = {state for state, (before, after) in enumerate(zip(lexer.reachable_terminals, reach)) if len(before) != len(after)}
    lost: set[int] = set()
    for state in _reached(cut, states) & changed if changed else ():  # a lexeme a token can be in
        lost.update(set(lexer.reachable_terminals[state]) - set(reach[state]))
    return lost


def _reached(table: list[int], states: int) -> set[int]:
    """The states ``table`` reaches from ``START`` (every lexeme starts there)."""
    seen = {0}
    pending = [0]
    while pending:
        state = pending.pop()
        for target in set(table[state * 256 : state * 256 + 256]):
            if target != DEAD and target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def _restricted(grammar: Grammar, lost: set[int], absent: frozenset[int]) -> Grammar:
    """``grammar`` with the terminals ``lost`` cut to texts of spellable characters."""
    patterns, shortest = grammar.lexer.patterns, grammar.lexer.shortest
    assert patterns is not None and shortest is not None  # Grammar._build keeps them
    written = repeat(chars(_spellable_characters(absent)), 0, UNBOUNDED)
    cut = [(intersection([node, written]) if index in lost else node, shortest[index]) for index, node in enumerate(patterns)]
    try:
        spelled = Grammar(grammar.rules, cut)
    except EmptyLanguage as exc:
        names = sorted(grammar.rules.terminals[t].name for t in lost)
        shown = ", ".join(f"{b:#04x}" for b in UTF8_BYTES if b in absent)  # (bytes no UTF-8 text has go unsaid)
        raise Unspellable(
            "this vocabulary cannot write any text the constraint allows: each needs a byte that no "
            f"token contains (of {shown}; in terminal {', '.join(names)})"
        ) from exc
    spelled.report = grammar.report
    # the checks the new grammar's terminals mark stand (they may differ: a string cut away no longer
    # mixes with another); the others, which follow the text, carry over, first as from_json_schema puts them
    derived = spelled.checks
    carried = tuple(
        again for check in grammar.checks
        if (again := check.for_grammar(spelled.lexer, spelled.table, spelled.rules.terminals)) is not None
        and not any(type(again) is type(found) for found in derived)
    )
    spelled.checks = carried + derived
    source = getattr(grammar, "source", None)
    if source is not None:
        spelled.source = source
    return spelled


@lru_cache(maxsize=8)
def _spellable_characters(absent: frozenset[int]) -> list[int]:
    """The code points whose UTF-8 bytes are none of ``absent``, as ``charset`` ranges."""
    ranges = [value for b in range(0x80) if b not in absent for value in (b, b)]
    last_runs = _runs([offset for offset in range(64) if 0x80 | offset not in absent])
    for block in range(0x80, charset.MAX_CODE_POINT + 1, 64):  # code points alike but for their last byte
        lead = chr(block).encode("utf-8", "surrogatepass")[:-1]
        if not absent.intersection(lead):
            for lo, hi in last_runs:
                ranges += (block + lo, block + hi)
    return charset.normalize(ranges)


def _runs(values: list[int]) -> list[tuple[int, int]]:
    """Sorted ints as runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and runs[-1][1] == value - 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs

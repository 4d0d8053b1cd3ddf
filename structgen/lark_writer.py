"""``write_lark``: a grammar's rules as lark text that reads back to the same grammar.

A grammar composed from others (``structgen.composition``) exists first as rules;
written out, it travels where only text does (a vLLM worker rebuilds it from the
request's ``structgen_grammar``) and caches by its text like any lark grammar.

Lark evaluates escapes in a terminal's text before the regex engine reads it
(``\\x5b`` becomes a bare ``[``), so a pattern is not written as it is: escapes of
code points become the characters themselves (escaped where the regex would read
them as syntax), ``/`` is escaped, and control characters are written as escapes
lark turns back into them. The text read back is the same regex, character for
character where the pattern held no such escape (``tests/test_composition.py``).
"""

from __future__ import annotations

import re

from structgen.lark_rules import LarkRules, Terminal

__all__ = ["write_lark"]

_SYNTAX = frozenset("\\.^$|?*+()[]{}/-#&~ \t,")
"""Characters a pattern written with an escape must keep escaped (Python's ``re``
takes ``\\`` before any of them as the character itself, in a class or out of one)."""

_HEX = {"x": 2, "u": 4, "U": 8}


def write_lark(rules: LarkRules) -> str:
    """The lark text of ``rules``: each terminal on a line, each rule's alternatives
    on one, ``%ignore`` last. Nonterminal and terminal names are kept."""
    lines = [f"{_terminal_head(t)}: {_terminal_body(t)}" for t in rules.terminals]
    taken = set(rules.nonterminals)
    symbols = [t.name for t in rules.terminals] + [""] + [_written_name(name, taken) for name in rules.nonterminals]
    bodies: dict[int, list[str]] = {}
    for origin, expansion in rules.rules:
        bodies.setdefault(origin, []).append(" ".join(symbols[s] for s in expansion))
    start = rules.start
    order = [start] + [origin for origin in bodies if origin != start]
    for origin in order:
        alternatives = bodies.get(origin, [])
        lines.append(f"{symbols[origin]}: " + " | ".join(alternatives))
    lines += [f"%ignore {rules.terminals[t].name}" for t in rules.ignore]
    return "\n".join(lines) + "\n"


def _written_name(name: str, taken: set[str]) -> str:
    """A rule name lark accepts: the ``__`` names lark gives the rules it makes
    itself (``__start_star_0``) are refused in a grammar's text, so they get a prefix."""
    if not name.startswith("__"):
        return name
    written = "r" + name
    while written in taken:
        written = "r" + written
    taken.add(written)
    return written


def _terminal_head(terminal: Terminal) -> str:
    return terminal.name if terminal.priority == 0 else f"{terminal.name}.{terminal.priority}"


def _terminal_body(terminal: Terminal) -> str:
    """A literal is written as the regex of its characters (the same language, and
    the plain form ``lark_rules`` reads without lark's parser)."""
    verbose = "x" in terminal.flags
    if terminal.kind == "str":
        return "/" + "".join(_pattern_char(c, True, verbose) for c in terminal.value) + "/" + terminal.flags
    return "/" + _pattern_text(terminal.value, verbose) + "/" + terminal.flags


def _pattern_text(pattern: str, verbose: bool) -> str:
    """``pattern`` as the text between a lark regex's slashes (inside a character
    class, where a digit cannot start a quantifier, escaped digits stay digits)."""
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            following = pattern[i + 1]
            digits = _HEX.get(following)
            if digits is not None and re.fullmatch(r"[0-9a-fA-F]{%d}" % digits, pattern[i + 2 : i + 2 + digits]):
                character = chr(int(pattern[i + 2 : i + 2 + digits], 16))
                out.append(character if in_class and character.isdigit() and character.isascii()
                           else _pattern_char(character, True, verbose))
                i += 2 + digits
                continue
            if ord(following) < 0x20 or ord(following) == 0x7F:  # an escaped control: the control itself
                out.append(_pattern_char(following, True, verbose))
            else:
                out.append(c + following)  # lark keeps the backslash (or makes \\n, \\t... the characters)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a ] first in a class is the character
                out.append("]")
                i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(_pattern_char(c, False, verbose))
        i += 1
    return "".join(out)


def _pattern_char(c: str, escaped: bool, verbose: bool) -> str:
    """One character of a pattern: as itself, with a backslash where it is syntax
    and was written as an escape, or as an escape lark turns into it. ``"`` is
    always ``\\x22`` (lark reads a backslash before a quote as no backslash); a
    digit written as an escape is a class of one (``{1\\x32}`` is no quantifier);
    under the verbose flag a control character is escaped as itself, since the
    character lark makes of ``\\n`` is whitespace that verbose mode drops."""
    if c == "/":
        return "\\/"
    if c == '"':
        return "\\x22"
    code = ord(c)
    if code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
        if verbose and code < 0x80:  # raw whitespace verbose mode drops stays raw; an escaped one stays escaped
            return "\\" + c if escaped else c
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    if escaped and c.isdigit() and c.isascii():
        return f"[{c}]"
    if escaped and c in _SYNTAX:
        return "\\" + c
    return c


_REGEX_METACHARACTERS = frozenset("\\.^$|?*+()[]{}/-")


def regex_literal(text: str) -> str:
    """``text`` as a regex inside a lark ``/.../`` (every non-alphanumeric escaped:
    regex metacharacters with a backslash — lark's reader turns ``\\x5b`` back into
    a bare ``[`` — the rest by code)."""
    return "".join(
        c if c.isascii() and c.isalnum() else f"\\{c}" if c in _REGEX_METACHARACTERS else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        for c in text
    )

"""Regex fuzzer: random Python regexes into ``Grammar.from_regex``.

Inputs: regexes over a small alphabet (a few ASCII letters and digits, and
characters where Unicode and case folding differ: ``é``, ``K``/KELVIN SIGN,
``ſ``, ``٣``, no-break space) with classes, ``\\d \\w \\s`` and their negations,
``.``, groups (capturing, named, scoped flags), alternation, every kind of repeat
(lazy ones too), lookaheads where the engine reads them; under a flag (``i``,
``s``, ``m``, ``x``) sometimes; and junk (anchors, lookbehinds, backreferences,
atomic groups, huge repeats, deep nesting, unbalanced syntax). Each case carries
strings: sampled from the regex, mutations of them and random ones.

Oracles:

- the compile succeeds or raises ``RegexError`` / ``GrammarError`` (or another
  library error), within the deadline;
- ``grammar.accepts(s)`` is ``re.fullmatch(pattern, s, flags) is not None`` for
  every string; where the regex ends with a lazy repeat and a delimiter
  (``structgen.engine.regex.ends_at_first_match``: such a terminal ends at its
  first match, docs/lexing.md), the strings of which no proper prefix matches.
  No verdict where ``re`` itself cannot give one: a string it backtracks on past
  ``RE_SECONDS``, a pattern its compiler recurses too deeply on, a group named
  ``divisible_by_D`` (the engine's own construct, docs/regex.md);
- the masks agree: on a vocabulary of the 256 single bytes, each byte of the
  string is in the mask exactly when the matcher takes it, and the stop token is
  in the mask at the end exactly when the string is accepted.
"""

from __future__ import annotations

import random
import re
import signal
from typing import Any, Callable

from common import Failure, compiled, shown, stepped

NAME = "regex"
CASE_SECONDS = 60.0

CHARS = "ab01 _.-\nAéKk\u212aſSs\u0663\u00a0\x1f"
LITERALS = "ab01 _AKkSsé"
CLASSES = ["[ab]", "[^a]", "[a-c]", "[0-9a]", "[\\d_]", "[^\\s]", "[.]", "[a-zA-Z]", "[^\\W\\d]", "[\\s\\S]", "[-a]",
           "[é-ſ]", "[k]"]
ESCAPES = ["\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "."]
JUNK = ["^a", "a$", "\\ba", "(?<=a)b", "(?<!a)b", "(a)\\1", "(?>ab)", "a*+", "a{100000}", "a{3,1}", "(", ")", "[", "[]",
        "a**", "(?P<x>a)(?P=x)", "\\", "(?#c)a", "a{,3}", "\\Z", "\\A", "(?=a)*", "x(?=a)b", "\\p{L}", "(?i)a(?s)b",
        "(?u)a", "(?a)\\w", "(?L)a", "\\N{LATIN SMALL LETTER A}", "\\x41\\u00e9\\U0001F600", "\\0", "[\\b]",
        "(?P<divisible_by_7>[0-9]+)", "(?P<divisible_by_0>1)", "a{4294967295}"]

Sampler = Callable[[random.Random], str]


def generate(rng: random.Random) -> dict[str, Any]:
    flags = rng.choice(["", "", "", "", "i", "s", "m", "x", "is"])
    if rng.random() < 0.15:
        pattern = junk(rng)
        samples: list[str] = []
    else:
        pattern, sampler = regex(rng, rng.randint(1, 4))
        if rng.random() < 0.1:  # a lookahead the rest of the pattern follows to its end
            ahead, _ = regex(rng, 2)
            pattern = f"(?{rng.choice('=!')}{ahead}){pattern}"
        samples = [sampler(rng) for _ in range(10)]
    strings = samples + [mutated(rng, s) for s in samples]
    strings += ["".join(rng.choice(CHARS) for _ in range(rng.randint(0, 6))) for _ in range(15)]
    strings = sorted(set(s for s in strings if len(s) <= 16), key=lambda s: (len(s), s))
    return {"pattern": pattern, "flags": flags, "strings": strings}


def junk(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.1:
        depth = rng.choice([50, 200, 500, 2000])
        return "(" * depth + "a" + ")" * depth
    if roll < 0.5:
        return rng.choice(JUNK)
    core, _ = regex(rng, 2)
    piece = rng.choice(JUNK)
    return rng.choice([piece + core, core + piece, f"({core}|{piece})"])


def regex(rng: random.Random, depth: int) -> tuple[str, Sampler]:
    """A regex and a function sampling strings it (most often) matches."""
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return atom(rng)
    if roll < 0.55:
        parts = [regex(rng, depth - 1) for _ in range(rng.randint(2, 3))]
        return "".join(p for p, _ in parts), lambda r: "".join(s(r) for _, s in parts)
    if roll < 0.7:
        parts = [regex(rng, depth - 1) for _ in range(rng.randint(2, 3))]
        return "|".join(p for p, _ in parts), lambda r: r.choice(parts)[1](r)
    if roll < 0.9:
        inner, sample = group(rng, *regex(rng, depth - 1))
        return repeated(rng, inner, sample)
    return group(rng, *regex(rng, depth - 1))


def atom(rng: random.Random) -> tuple[str, Sampler]:
    roll = rng.random()
    if roll < 0.5:
        char = rng.choice(LITERALS)
        return re.escape(char), lambda r: char
    pattern = rng.choice(CLASSES) if roll < 0.8 else rng.choice(ESCAPES)
    members = [c for c in CHARS if re.fullmatch(pattern, c)] or ["a"]
    return pattern, lambda r: r.choice(members)


def group(rng: random.Random, pattern: str, sample: Sampler) -> tuple[str, Sampler]:
    opener = rng.choice(["(", "(?:", "(?:", f"(?P<g{rng.randrange(100)}>", "(?i:", "(?s:", "(?-i:"])
    return f"{opener}{pattern})", sample


def repeated(rng: random.Random, pattern: str, sample: Sampler) -> tuple[str, Sampler]:
    low, high = rng.choice([(0, None), (1, None), (0, 1), (2, 2), (0, 3), (2, None), (1, 3), (0, 0)])
    suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
    if suffix is None:
        suffix = f"{{{low}}}" if low == high else f"{{{low},}}" if high is None else f"{{{low},{high}}}"
    if rng.random() < 0.2:
        suffix += "?"  # lazy
    top = high if high is not None else low + 3
    return pattern + suffix, lambda r: "".join(sample(r) for _ in range(r.randint(low, min(top, low + 3))))


def mutated(rng: random.Random, text: str) -> str:
    chars = list(text)
    op = rng.randrange(3)
    at = rng.randrange(len(chars) + 1)
    if op == 0 and chars:
        del chars[min(at, len(chars) - 1)]
    elif op == 1:
        chars.insert(at, rng.choice(CHARS))
    elif chars:
        chars[min(at, len(chars) - 1)] = rng.choice(CHARS)
    return "".join(chars)


# -- checking (in the worker) ---------------------------------------------------

RE_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}
RE_SECONDS = 2.0
"""The most one string's verdict by ``re`` may take (the oracle's own bound)."""
ENGINE_GROUP = re.compile(r"\(\?P<divisible_by_")
"""A group named ``divisible_by_D``: the engine's own construct, which means more to
structgen than to ``re`` (docs/regex.md), so such a pattern is compiled, not compared."""


def setup() -> Any:
    from structgen import TokenizerInfo

    return TokenizerInfo([bytes([b]) for b in range(256)] + [b""], stop_token_ids=[256])


def check(info: Any, case: dict[str, Any]) -> dict[str, Any]:
    import structgen
    from structgen.engine.regex import ends_at_first_match

    pattern, flags = case["pattern"], case["flags"]
    grammar = compiled(lambda: structgen.Grammar.from_regex(pattern, flags), "Grammar.from_regex")
    if grammar is None:
        return {"refused": 1}
    if ENGINE_GROUP.search(pattern):
        return {"engine_group": 1}  # means more to structgen than to re (docs/regex.md): compiled only
    try:
        python = re.compile(pattern, sum(RE_FLAGS[f] for f in flags))
    except RecursionError:  # re's compiler recurses per nested group: its limit, not the pattern's fault
        return {"re_too_deep": 1}
    except (re.error, OverflowError, ValueError) as exc:
        raise Failure("compiles", f"structgen compiles {pattern!r} (flags {flags!r}), which re refuses: {exc}",
                      key="re-refuses") from None
    first = ends_at_first_match(pattern, flags)
    program = compiled(lambda: structgen.compile(grammar, info), "compile")
    accepted_count = 0
    for text in case["strings"]:
        expected = re_verdict(python, text, first)
        if expected is None:
            continue  # re backtracks past RE_SECONDS on this string: no verdict
        accepted = stepped(lambda: grammar.accepts(text), "Grammar.accepts")
        if accepted is None:
            continue
        accepted_count += accepted
        if accepted != expected:
            how = "accepts" if accepted else "refuses"
            raise Failure("disagree", f"{pattern!r} (flags {flags!r}) {how} {text!r}, re.fullmatch says "
                          f"{'no' if accepted else 'yes'}", {"string": text, "first_match": first},
                          key=f"{how}{'-first' if first else ''}")
        if program is not None:
            masks_agree(program, info, text, accepted, f"{pattern!r} (flags {flags!r})")
    return {"compiled": 1, "accepted": accepted_count, "strings": len(case["strings"])}


class _TooSlow(Exception):
    pass


def re_verdict(python: re.Pattern[str], text: str, first: bool) -> bool | None:
    """Whether ``python`` fullmatches ``text`` (and, where the terminal ends at its
    first match, no proper prefix of it); None where ``re`` backtracks past
    ``RE_SECONDS`` (``(\\S{0,3}){2,}*`` on a string with a space is exponential;
    ``re`` looks at signals while it matches, so an alarm stops it)."""

    def ring(signum: int, frame: Any) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, RE_SECONDS)
    try:
        matched = python.fullmatch(text) is not None
        if matched and first:
            matched = not any(python.fullmatch(text[:end]) for end in range(len(text)))
        return matched
    except _TooSlow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def masks_agree(program: Any, info: Any, text: str, accepted: bool, what: str) -> None:
    """Byte by byte: the mask holds a byte exactly when the matcher takes it; the
    stop token is allowed at the end exactly when ``accepted``."""
    import structgen

    matcher = structgen.Matcher(program)
    stop = info.stop_token_ids[0]
    data = text.encode("utf-8")
    for at, byte in enumerate(data):
        allowed = stepped(lambda: set(matcher.allowed_tokens()), "Matcher.allowed_tokens")
        if allowed is None:
            return
        taken = stepped(lambda: matcher.accept_token(byte), "Matcher.accept_token")
        if taken is None:
            return
        if taken != (byte in allowed):
            raise Failure("mask", f"{what}: after {data[:at]!r}, byte {byte:#x} is {'' if byte in allowed else 'not '}"
                          f"in the mask but accept_token says {taken}", {"string": text, "at": at}, key="byte")
        if not taken:
            if accepted:
                raise Failure("mask", f"{what}: the matcher refuses byte {at} of {shown(text)}, which the grammar "
                              "accepts", {"string": text, "at": at}, key="refuses")
            return
    allowed = stepped(lambda: set(matcher.allowed_tokens()), "Matcher.allowed_tokens")
    if allowed is not None and (stop in allowed) != accepted:
        raise Failure("mask", f"{what}: after {shown(text)} the stop token is {'' if stop in allowed else 'not '}"
                      f"allowed, but the grammar {'accepts' if accepted else 'refuses'} it", {"string": text},
                      key="end")

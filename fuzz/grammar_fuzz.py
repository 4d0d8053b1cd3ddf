"""Grammar fuzzer: random lark grammars into ``Grammar.from_lark``, against lark.

Inputs: small rule sets (two to five rules, recursion, alternatives, empty ones,
``?`` ``*`` ``+``, ``[...]`` and ``(...)`` groups, ``%ignore``) of two shapes on
which structgen's lexer (contextless maximal munch, every terminal of the longest
match kept) and a lark parser must agree:

- *single*: terminals of one character (literals, and classes that may overlap
  them, as ``tests/engine/test_lr_stack.py``'s), compared with lark's Earley parser and
  its dynamic lexer, which considers every terminal at each character;
- *multi*: literals of several characters that no other one starts with, regex
  terminals each over an alphabet of its own (``/[0-9]+/``), ``%ignore``d
  spaces: every lexer cuts such a text the same way, so it is compared with
  Earley on lark's ``basic`` lexer.

And junk: no ``start``, undefined symbols, ``%import`` of modules that do not
exist, syntax errors, terminals matching the empty string or nothing.

Oracles: the compile succeeds or raises ``GrammarError`` (or another library
error) within the deadline; where lark builds the grammar too, ``accepts``
agrees with lark on sentences derived from the rules, mutations of them and
random strings; and the masks agree with ``accepts`` byte by byte (as in the
regex fuzzer).
"""

from __future__ import annotations

import random
from typing import Any

from common import Failure, compiled, shown, stepped

NAME = "grammar"
CASE_SECONDS = 60.0

JUNK = [
    'rule: "a"',  # no start
    'start: undefined_rule',
    'start: UNDEFINED',
    '%import nonexistent.THING\nstart: THING',
    '%import common.NOPE\nstart: NOPE',
    '%import common.WS\n%ignore WS\nstart: "a"+',
    'start: "a" (',
    'start: "a" | | "b"',
    'start: /a*/',
    'start: /[^\\s\\S]/',
    'start: A\nA: /(?<=a)b/',
    'start: start "a"',
    'start: "a"\nstart: "b"',
    'start: A\nA: B\nB: A',
    'start: "a"\n%declare X',
    'start: x{"a"}\nx{p}: p p',
    '?start: "a" ~ 3',
    'start: "a" ~ 2..1',
    'start: "a"i "B"i',
    'start: /a/x /b/q',
    'start: ""',
    '%ignore "a"\nstart: "a"',
    'start: A\nA.2: "a"\nB.-1: "a"',
    'start: "\\x"',
    'start: "a"\n%override start: "b"',
    '\n'.join(f"r{i}: r{i + 1} | \"a\"" for i in range(400)) + '\nstart: r0\nr400: "b"',
    'start: ' + '(' * 300 + '"a"' + ')' * 300,
]


def generate(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.12:
        return {"mode": "junk", "text": rng.choice(JUNK), "strings": ["", "a", "b", "ab", "aa", "ba"]}
    mode = rng.choice(["single", "single", "multi"])
    terminals = single_terminals(rng) if mode == "single" else multi_terminals(rng)
    count = rng.randint(1, 4)
    rules = {f"r{i}": [sequence(rng, terminals, count, 2) for _ in range(rng.randint(1, 3))] for i in range(count)}
    rules["start"] = [sequence(rng, terminals, count, 2) or [("sym", "r0", "")] for _ in range(rng.randint(1, 2))]
    lines = [f"{name}: " + " | ".join(spell(alt) for alt in rules[name]) for name in ["start", *list(rules)[:-1]]]
    lines += [f"{name}: {value}" for name, (value, _) in terminals["named"].items()]
    if terminals["ignore"]:
        lines.append(f"%ignore {terminals['ignore']}")
    sentences = []
    for _ in range(12):
        derived = derive(rng, terminals, rules, [("sym", "start", "")], 0, [200])
        if derived is not None and len(derived) <= 24:
            sentences.append(derived)
    alphabet = terminals["alphabet"]
    strings = sentences + [mutated(rng, s, alphabet) for s in sentences]
    strings += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(15)]
    return {"mode": mode, "text": "\n".join(lines), "strings": sorted(set(strings), key=lambda s: (len(s), s))}


def single_terminals(rng: random.Random) -> dict[str, Any]:
    chars = "abc"[: rng.randint(2, 3)]
    pool: list[tuple[str, list[str]]] = [(f'"{c}"', [c]) for c in chars]
    named: dict[str, tuple[str, list[str]]] = {}
    if rng.random() < 0.4:
        named["AB"] = ("/[ab]/", ["a", "b"])
    if rng.random() < 0.2:
        named["A"] = ('"a"', ["a"])
    pool += [(name, texts) for name, (_, texts) in named.items()]
    ignore = '" "' if rng.random() < 0.2 else ""
    return {"pool": pool, "named": named, "ignore": ignore, "alphabet": chars + (" " if ignore else "")}


def multi_terminals(rng: random.Random) -> dict[str, Any]:
    words: list[str] = []
    for _ in range(rng.randint(2, 5)):
        word = "".join(rng.choice("xyz") for _ in range(rng.randint(1, 3)))
        if all(not w.startswith(word) and not word.startswith(w) for w in words):
            words.append(word)
    pool: list[tuple[str, list[str]]] = [(f'"{w}"', [w]) for w in words]
    named: dict[str, tuple[str, list[str]]] = {}
    if rng.random() < 0.6:
        named["NUM"] = rng.choice([("/[0-9]+/", ["1", "42", "007"]), ("/[0-9]/", ["3"]),
                                   ("/[0-9]{1,2}/", ["5", "12"]), ("/1[0-2]*/", ["1", "120"])])
    if rng.random() < 0.4:
        named["WORD"] = rng.choice([("/p[pq]*/", ["p", "pq", "ppq"]), ("/q+/", ["q", "qq"])])
    pool += [(name, texts) for name, (_, texts) in named.items()]
    ignore = ""
    if rng.random() < 0.4:
        named["WS"] = rng.choice([("/ +/", [" "]), ('" "', [" "])])
        ignore = "WS"
    alphabet = "xyz" + ("0127" if "NUM" in named else "") + ("pq" if "WORD" in named else "") + (" " if ignore else "")
    return {"pool": pool, "named": named, "ignore": ignore, "alphabet": alphabet}


# A rule body is a list of items; an item is ("sym", name_or_literal, suffix) or
# ("group", [alternatives], suffix) or ("opt", sequence).


def sequence(rng: random.Random, terminals: dict[str, Any], rules: int, depth: int) -> list[Any]:
    """A random alternative: terminals, references to the ``rules`` rules, groups."""
    items: list[Any] = []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        roll = rng.random()
        suffix = rng.choice(["", "", "", "?", "*", "+"])
        if roll < 0.5:
            items.append(("sym", rng.choice(terminals["pool"])[0], suffix))
        elif roll < 0.8:
            items.append(("sym", f"r{rng.randrange(rules)}", suffix))
        elif roll < 0.9 and depth > 0:
            items.append(("group", [sequence(rng, terminals, rules, depth - 1) or [("sym", rng.choice(terminals["pool"])[0], "")]
                                    for _ in range(rng.randint(1, 3))], suffix))
        elif depth > 0:
            items.append(("opt", sequence(rng, terminals, rules, depth - 1) or [("sym", rng.choice(terminals["pool"])[0], "")]))
    return items


def spell(items: list[Any]) -> str:
    out = []
    for item in items:
        if item[0] == "sym":
            out.append(item[1] + item[2])
        elif item[0] == "group":
            out.append("(" + " | ".join(spell(alt) for alt in item[1]) + ")" + item[2])
        else:
            out.append("[" + spell(item[1]) + "]")
    return " ".join(out)


REPEATS = {"": (1, 1), "?": (0, 1), "*": (0, 2), "+": (1, 3)}


def derive(rng: random.Random, terminals: dict[str, Any], rules: dict[str, Any], items: list[Any], depth: int,
           budget: list[int]) -> str | None:
    """A random sentence of ``items`` (None past ``budget`` steps): past depth 6,
    the fewest repeats and the alternative with the fewest rule references."""
    texts = {name: values for name, values in terminals["pool"]}
    out: list[str] = []
    for item in items:
        budget[0] -= 1
        if budget[0] <= 0:
            return None
        if item[0] == "opt":
            if depth <= 6 and rng.random() < 0.5:
                part = derive(rng, terminals, rules, item[1], depth + 1, budget)
                if part is None:
                    return None
                out.append(part)
            continue
        low, high = REPEATS[item[2]]
        for _ in range(low if depth > 6 else rng.randint(low, high)):
            if item[0] == "group" or item[1] in rules:
                alternatives = item[1] if item[0] == "group" else rules[item[1]]
                alternative = min(alternatives, key=_references) if depth > 6 else rng.choice(alternatives)
                part = derive(rng, terminals, rules, alternative, depth + 1, budget)
                if part is None:
                    return None
            else:
                part = rng.choice(texts[item[1]])
                if terminals["ignore"] and rng.random() < 0.25:
                    part += " "
            out.append(part)
    return "".join(out)


def _references(items: list[Any]) -> int:
    return sum(1 if item[0] == "sym" and item[1].startswith("r") else
               sum(map(_references, item[1])) if item[0] == "group" else 0 for item in items)


def mutated(rng: random.Random, text: str, alphabet: str) -> str:
    chars = list(text)
    op = rng.randrange(3)
    at = rng.randrange(len(chars) + 1)
    if op == 0 and chars:
        del chars[min(at, len(chars) - 1)]
    elif op == 1:
        chars.insert(at, rng.choice(alphabet))
    elif len(chars) > 1:
        i = rng.randrange(len(chars) - 1)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


# -- checking (in the worker) ---------------------------------------------------


def setup() -> Any:
    from structgen import TokenizerInfo

    return TokenizerInfo([bytes([b]) for b in range(256)] + [b""], stop_token_ids=[256])


def check(info: Any, case: dict[str, Any]) -> dict[str, Any]:
    import structgen
    from lark import Lark
    from lark.exceptions import LarkError

    from regex_fuzz import masks_agree

    text = case["text"]
    grammar = compiled(lambda: structgen.Grammar.from_lark(text), "Grammar.from_lark")
    if grammar is None:
        return {"refused": 1}
    if case["mode"] == "junk":
        return {"compiled": 1}
    try:
        lark = Lark(text, parser="earley", lexer="dynamic" if case["mode"] == "single" else "basic")
    except Exception:  # noqa: BLE001 (lark refuses what structgen builds: nothing to compare)
        return {"compiled": 1, "lark_refused": 1}
    program = compiled(lambda: structgen.compile(grammar, info), "compile")
    stats = {"compiled": 1, "accepted": 0, "strings": 0}
    for string in case["strings"]:
        try:
            lark.parse(string)
            expected = True
        except LarkError:
            expected = False
        except Exception:  # noqa: BLE001 (lark failing on its own: no verdict)
            continue
        accepted = stepped(lambda: grammar.accepts(string), "Grammar.accepts")
        if accepted is None:
            continue
        stats["strings"] += 1
        stats["accepted"] += accepted
        if accepted != expected:
            how = "accepts" if accepted else "refuses"
            raise Failure("disagree", f"the grammar {how} {shown(string)}, lark ({case['mode']}) "
                          f"{'refuses' if accepted else 'accepts'} it", {"string": string}, key=f"{case['mode']}-{how}")
        if program is not None:
            masks_agree(program, info, string, accepted, "the grammar")
    return stats

"""LALR(1) tables with conflicts kept, and the persistent GLR stack, against lark.

Grammars here use one-character literal terminals, so a string is its own
terminal sequence: our parser and lark's (LALR where lark can build it, Earley for
every grammar) must agree on every string.
"""

from __future__ import annotations

import itertools
import random

import pytest
from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedInput

from structgen.engine.lr import ACCEPT, CHAIN_SHIFT, CHAIN_STATE, MAX_UNIT_CHAIN, LRTable, build_lalr
from structgen.engine.stack import AmbiguityLimitError, GLRParser, StackNode
from structgen.lark_rules import GrammarError, LarkRules, read_lark

LALR_GRAMMARS = {
    "arrays": 'start: v\nv: "[" [v ("," v)*] "]" | "n"',
    "arithmetic": 'start: e\ne: e "+" t | t\nt: t "*" f | f\nf: "(" e ")" | "x"',
    "optional_parts": 'start: a b c\na: "a"?\nb: "b"*\nc: "c" |',
    "balanced": 'start: s\ns: "(" s ")" s |',
    "trailing_comma": 'start: item ("," item)* ","?\nitem: "i" | "[" start "]"',
    "keywords": 'start: stmt+\nstmt: "i" "(" "x" ")" stmt | "x" ";" | "{" stmt* "}"',
}
CONFLICT_GRAMMARS = {
    "dangling_else": 'start: s\ns: "i" s | "i" s "e" s | "x"',
    "ambiguous_expr": 'start: e\ne: e "+" e | e "*" e | "(" e ")" | "x"',
    "very_ambiguous": 'start: s\ns: s s | "a" | "(" s ")"',
    "needs_two_lookahead": 'start: a "x" "y" | b "x" "z"\na: "p"\nb: "p"',
    "lr1_not_lalr": 'start: "a" a_ "d" | "b" b_ "d" | "a" b_ "e" | "b" a_ "e"\na_: "c"\nb_: "c"',
    "nullable_prefix": 'start: x "q"\nx: y "w" x | "w"\ny: |"v"',
    "cyclic": 'start: x "q"\nx: y x | "w"\ny: |"v"',  # x derives x: infinitely many parses
    "hidden_left_recursion": 'start: x\nx: y x "q" | "w"\ny: |"v"',
}
ALL_GRAMMARS = {**LALR_GRAMMARS, **CONFLICT_GRAMMARS}


class Recognizer:
    def __init__(self, text: str) -> None:
        self.rules = read_lark(text)
        self.table = build_lalr(len(self.rules.terminals), self.rules.rules, self.rules.start)
        self.parser = GLRParser(self.table)
        self.by_char = {t.value: i for i, t in enumerate(self.rules.terminals)}
        self.alphabet = "".join(self.by_char)

    def feed(self, tops: list[StackNode], text: str) -> list[StackNode]:
        for ch in text:
            tops = self.parser.feed(tops, self.by_char[ch])
            if not tops:
                break
        return tops

    def accepts(self, text: str) -> bool:
        tops = self.feed(self.parser.initial(), text)
        return bool(tops) and self.parser.accepts_end(tops)

    def first_error(self, text: str) -> int:
        tops = self.parser.initial()
        for position, ch in enumerate(text):
            tops = self.parser.feed(tops, self.by_char[ch])
            if not tops:
                return position
        return -1 if self.parser.accepts_end(tops) else len(text)


def sentences(rules: LarkRules, rng: random.Random, count: int) -> list[str]:
    """Random sentences of the grammar, by random derivation with bounded depth."""
    by_lhs: dict[int, list[list[int]]] = {}
    for lhs, rhs in rules.rules:
        by_lhs.setdefault(lhs, []).append(rhs)
    out = []
    for _ in range(count):
        text: list[str] = []
        stack: list[tuple[int, int]] = [(rules.start, 0)]
        steps = 0
        while stack:
            symbol, depth = stack.pop()
            if symbol < rules.end:
                text.append(rules.terminals[symbol].value)
                continue
            options = by_lhs[symbol]
            steps += 1
            if depth > 6 or steps > 60:
                rhs = min(options, key=lambda r: sum(1 for s in r if s > rules.end))
            else:
                rhs = rng.choice(options)
            stack.extend((s, depth + 1) for s in reversed(rhs))
        out.append("".join(text))
    return out


def texts_for(recognizer: Recognizer, seed: str) -> list[str]:
    rng = random.Random(seed)
    good = sentences(recognizer.rules, rng, 150)
    mutated = []
    for text in good:
        chars = list(text)
        op = rng.randrange(3)
        position = rng.randrange(len(chars) + 1)
        if op == 0 and chars:
            del chars[min(position, len(chars) - 1)]
        elif op == 1:
            chars.insert(position, rng.choice(recognizer.alphabet))
        elif len(chars) > 1:
            i = rng.randrange(len(chars) - 1)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        mutated.append("".join(chars))
    noise = ["".join(rng.choice(recognizer.alphabet) for _ in range(rng.randint(0, 8))) for _ in range(150)]
    return good + mutated + noise


def lark_accepts(parser: Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except LarkError:
        return False
    return True


@pytest.mark.parametrize("name", list(ALL_GRAMMARS))
def test_acceptance_equals_larks_earley(name: str) -> None:
    recognizer = Recognizer(ALL_GRAMMARS[name])
    earley = Lark(ALL_GRAMMARS[name], parser="earley", lexer="basic")
    texts = texts_for(recognizer, name)
    assert sum(recognizer.accepts(t) for t in texts) >= 150  # the sample has positives
    for text in texts:
        assert recognizer.accepts(text) == lark_accepts(earley, text), (name, text)


@pytest.mark.parametrize("name", list(LALR_GRAMMARS))
def test_error_position_equals_larks_lalr(name: str) -> None:
    """LR parsers detect an error at the first terminal no sentence can continue with."""
    recognizer = Recognizer(LALR_GRAMMARS[name])
    lalr = Lark(LALR_GRAMMARS[name], parser="lalr", lexer="basic")
    assert recognizer.table.conflicts() == 0
    types = {t.value: t.name for t in recognizer.rules.terminals}
    for text in texts_for(recognizer, name):
        interactive = lalr.parse_interactive("")
        expected = -1
        for position, ch in enumerate(text):
            try:
                interactive.feed_token(Token(types[ch], ch))
            except UnexpectedInput:
                expected = position
                break
        else:
            try:
                interactive.feed_eof()
            except UnexpectedInput:
                expected = len(text)
        assert recognizer.first_error(text) == expected, (name, text)


@pytest.mark.parametrize("name", list(CONFLICT_GRAMMARS))
def test_conflicts_are_kept_and_sentences_never_dead_end(name: str) -> None:
    recognizer = Recognizer(CONFLICT_GRAMMARS[name])
    assert recognizer.table.conflicts() > 0
    for text in sentences(recognizer.rules, random.Random(name), 100):
        tops = recognizer.parser.initial()
        for ch in text:
            tops = recognizer.parser.feed(tops, recognizer.by_char[ch])
            assert tops, (name, text)
        assert recognizer.parser.accepts_end(tops)


def test_rollback_and_fork_give_the_same_stacks_as_replaying() -> None:
    recognizer = Recognizer(CONFLICT_GRAMMARS["ambiguous_expr"])
    rng = random.Random(3)
    for text in sentences(recognizer.rules, rng, 40):
        history = [recognizer.parser.initial()]
        for ch in text:
            history.append(recognizer.feed(history[-1], ch))
        for _ in range(10):
            cut = rng.randrange(len(history))
            fork = history[cut]  # a snapshot is a fork: nothing mutates it
            rest = text[cut:]
            replayed = recognizer.feed(recognizer.parser.initial(), text[:cut])
            assert [n.uid for n in fork] == [n.uid for n in replayed]
            assert [n.uid for n in recognizer.feed(fork, rest)] == [n.uid for n in history[-1]]


def test_equal_stacks_are_one_node() -> None:
    """Hash-consing: reaching the same stack along two paths gives the same object."""
    recognizer = Recognizer(CONFLICT_GRAMMARS["ambiguous_expr"])
    parser = recognizer.parser
    first = recognizer.feed(parser.initial(), "(x)+x")
    again = recognizer.feed(recognizer.feed(parser.initial(), "(x)"), "+x")
    assert [id(n) for n in first] == [id(n) for n in again]
    nodes = list(parser._nodes.values())
    keys = {(n.state, *sorted(p.uid for p in n.parents)) for n in nodes}
    assert len(keys) == len(nodes) == len({n.uid for n in nodes})


def test_ambiguity_limit_is_explicit() -> None:
    recognizer = Recognizer(CONFLICT_GRAMMARS["very_ambiguous"])
    recognizer.parser.max_step_work = 50
    with pytest.raises(AmbiguityLimitError, match="more than 50 reductions"):
        recognizer.feed(recognizer.parser.initial(), "a" * 30)


def test_bad_grammar_is_a_clear_error() -> None:
    with pytest.raises(GrammarError, match="invalid lark grammar"):
        read_lark("start: undefined_rule")


def test_declared_terminals_are_a_clear_error() -> None:
    """Indentation grammars %declare _INDENT/_DEDENT for a postlexer we cannot run."""
    with pytest.raises(GrammarError, match=r"terminals \['_DEDENT', '_INDENT'\] have no pattern \(%declare\)"):
        read_lark('start: "a" _INDENT "b" _DEDENT\n%declare _INDENT _DEDENT')


@pytest.mark.parametrize("name", ["java", "sql"])
def test_tables_match_larks_on_real_grammars(name: str) -> None:
    """On SynCode's Java and SQL grammars (no reduce/reduce conflicts), lark's LALR
    tables and ours have the same states, the same filled (state, terminal) cells,
    and our conflicts are exactly the shift/reduce ones lark resolves by shifting."""
    import importlib.util
    import pathlib

    spec = importlib.util.find_spec("syncode")
    assert spec is not None and spec.submodule_search_locations
    text = next(pathlib.Path(list(spec.submodule_search_locations)[0]).rglob(f"{name}.lark")).read_text()
    lark_table = Lark(text, parser="lalr", lexer="basic").parser.parser._parse_table
    rules = read_lark(text)
    ours = build_lalr(len(rules.terminals), rules.rules, rules.start)
    terminal_names = {t.name for t in rules.terminals} | {"$END"}

    def cells(row: dict[str, object]) -> int:
        return sum(1 for symbol in row if symbol in terminal_names)

    def our_cells(row: dict[int, tuple[int, ...]]) -> int:  # lark's end state has no ACCEPT cell
        return sum(1 for acts in row.values() if acts != (ACCEPT,))

    assert ours.state_count == len(lark_table.states)
    assert sorted(our_cells(row) for row in ours.actions) == sorted(cells(row) for row in lark_table.states.values())
    shift_reduce = sum(1 for row in ours.actions for acts in row.values() if len(acts) > 1)
    assert shift_reduce == {"java": 17, "sql": 111}[name]


def random_nullable_grammar(rng: random.Random) -> str:
    """A small grammar with empty alternatives, cycles and ambiguity: the shapes on
    which a graph-structured stack goes wrong when it merges or re-follows badly."""
    nonterminals = ["s", "a", "b", "c"][: rng.randint(2, 4)]
    terminals = ['"x"', '"y"', '"z"'][: rng.randint(2, 3)]
    lines = ["start: s"]
    for name in nonterminals:
        alternatives = [rng.choice(terminals)]
        for _ in range(rng.randint(1, 3)):
            alternatives.append(" ".join(rng.choice(nonterminals + terminals) for _ in range(rng.randint(0, 3))))
        lines.append(f"{name}: " + " | ".join(alternatives))
    return "\n".join(lines)


REVIEW_CASES = [
    'start: s\ns: "y" | b a | a s "x"\na: "x" | s\nb: ',  # cycle nodes' parents
    'start: s\ns: "y" | b\na: s\nb: b | "y" "x" | s a "x"',  # two settled tops in one state
    'start: s\ns: "z" | a "x" | "x" a\na: | s b s\nb: "z" | ',  # a top under another top
    'start: s\ns: b b | c b s\nb: s | \nc: "y" b',  # a node standing on itself
]


@pytest.mark.parametrize("seed", range(4))
def test_random_nullable_grammars_match_earley_with_masks_taken_on_the_way(seed: int) -> None:
    """Completeness of every string up to four terminals equals lark's Earley parser,
    while masks are computed at each step (they feed probes through the same stack
    graph, so a node shared wrongly would show)."""
    import structgen
    from structgen import TokenizerInfo

    rng = random.Random(seed)
    texts = [""] + ["".join(p) for n in range(1, 5) for p in itertools.product("xyz", repeat=n)]
    grammars = REVIEW_CASES if seed == 0 else [random_nullable_grammar(rng) for _ in range(25)]
    info = TokenizerInfo([b"x", b"y", b"z", b""], stop_token_ids=[3])
    for text in grammars:
        earley = Lark(text, parser="earley", lexer="basic")
        compiled = structgen.compile(structgen.Grammar.from_lark(text), info)
        for word in texts:
            matcher = structgen.Matcher(compiled)
            alive = True
            for char in word:
                allowed = matcher.allowed_tokens()
                alive = matcher.accept_string(char)
                assert alive == ("xyz".index(char) in allowed), (text, word)
                if not alive:
                    break
            expected = lark_accepts(earley, word)
            assert (alive and matcher.can_terminate()) == expected, (text, word)


@pytest.mark.parametrize("seed", range(2))
def test_trial_stacks_answer_as_the_real_ones(seed: int) -> None:
    """Masks ask of many lexemes whether some stack takes them, on trial stacks
    that build no node (``Trial``): at every prefix of texts over the named and
    random nullable grammars, ``takes``, ``trial_takes`` and ``trial_feed`` followed
    by another terminal or the end agree with ``feed`` and ``accepts_end``."""
    from structgen.engine.stack import Trial

    rng = random.Random(seed)
    sources = list(ALL_GRAMMARS.values()) + REVIEW_CASES + [random_nullable_grammar(rng) for _ in range(12)]
    checked = unsure = 0
    for text in sources:
        recognizer = Recognizer(text)
        parser = recognizer.parser
        terminals = range(len(recognizer.rules.terminals))
        for word in texts_for(recognizer, f"{seed}-{text}")[::6]:
            tops = parser.initial()
            for ch in word:
                for terminal in terminals:
                    fed = parser.feed(tops, terminal)
                    assert parser.takes(tops, terminal) == bool(fed), (text, word, terminal)
                    answers = [parser.trial_takes(Trial(top, ()), terminal, False) for top in tops]
                    if -1 not in answers:
                        assert (1 in answers) == bool(fed), (text, word, terminal)
                    trials: list[Trial] = []
                    if not all(parser.trial_feed(Trial(top, ()), terminal, trials) for top in tops):
                        unsure += 1
                        continue
                    assert bool(trials) == bool(fed), (text, word, terminal)
                    for after in [*terminals, None]:
                        if after is None:
                            expected = bool(fed) and parser.accepts_end(fed)
                            answers = [parser.trial_takes(trial, recognizer.table.end, True) for trial in trials]
                        else:
                            expected = bool(fed) and bool(parser.feed(fed, after))
                            answers = [parser.trial_takes(trial, after, False) for trial in trials]
                        if -1 not in answers:
                            assert (1 in answers) == expected, (text, word, terminal, after)
                            checked += 1
                tops = parser.feed(tops, recognizer.by_char[ch])
                if not tops:
                    break
    assert checked > 5_000 and unsure < checked // 10, (checked, unsure)


def _unit_steps(table: LRTable, below: int, top: int, terminal: int) -> tuple[int, int]:
    """The unit reductions ``terminal`` makes over ``below``, one at a time on a stack."""
    stack = [below, top]
    count = 0
    while count < MAX_UNIT_CHAIN:
        actions = table.actions[stack[-1]].get(terminal, [])
        if len(actions) != 1 or actions[0] == ACCEPT or actions[0] & 1 == 0:
            break
        rule = actions[0] >> 1
        if table.rule_length[rule] != 1:
            break
        stack.pop()
        stack.append(table.gotos[stack[-1]][table.rule_lhs[rule]])
        count += 1
    return stack[-1], count


@pytest.mark.parametrize("name", ["arithmetic", "keywords", "dangling_else", "ambiguous_expr", "cyclic"])
def test_unit_chains_are_the_reductions_one_at_a_time(name: str) -> None:
    """``LRTable.unit_chain`` (a unit rule's reductions in a row, as one lookup) is
    where reducing one unit rule at a time leads, for every pair of states and
    terminal, within a memo far smaller than the pairs (emptied when full)."""
    recognizer = Recognizer(ALL_GRAMMARS[name])
    table = recognizer.table
    table.max_chains = 7
    longest = 0
    pairs = [
        (below, top)
        for below in range(table.state_count)
        for top in sorted(
            {a >> 1 for acts in table.actions[below].values() for a in acts if a != ACCEPT and a & 1 == 0}
            | set(table.gotos[below].values())
        )
    ]  # a state and one it moves to: two states a stack can hold
    for below, top in pairs:
        for terminal in range(table.end + 1):
            chain = table.unit_chain(below, top, terminal)
            state, count = _unit_steps(table, below, top, terminal)
            assert (chain & CHAIN_STATE, chain >> CHAIN_SHIFT) == (state, count)
            assert len(table._chains) <= 7
            longest = max(longest, count)
    if name == "arithmetic":
        assert longest == 4  # "x" at the end: to f, t, e and start


def test_a_deep_precedence_chain_parses_as_lark_does() -> None:
    """Fifteen precedence levels, as in Python's expressions: an operand reduces
    through all of them (one unit chain) before the loosest operator."""
    levels = [f"l{i}" for i in range(15)]
    rules = [f"start: {levels[0]}"]
    for i, level in enumerate(levels):
        lower = levels[i + 1] if i + 1 < len(levels) else "atom"
        rules.append(f'{level}: {level} "{chr(ord("a") + i)}" {lower} | {lower}')
    rules.append('atom: "x" | "(" l0 ")"')
    text = "\n".join(rules)
    recognizer = Recognizer(text)
    lark = Lark(text, parser="lalr")
    rng = random.Random(5)
    for _ in range(200):
        length = rng.randrange(1, 12)
        sentence = "".join(rng.choice(recognizer.alphabet) for _ in range(length))
        try:
            lark.parse(sentence)
            expected = True
        except LarkError:
            expected = False
        assert recognizer.accepts(sentence) == expected, sentence
    assert recognizer.accepts("x" + "".join(f"{chr(ord('a') + i)}x" for i in range(15)))
    assert recognizer.table.unit_chain(0, recognizer.feed(recognizer.parser.initial(), "x")[0].state, recognizer.by_char["a"]) >> CHAIN_SHIFT >= 14

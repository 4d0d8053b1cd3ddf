"""``Grammar``: a context-free grammar over bytes, from lark text or a regex.

The grammar is read by lark (``lark_rules``), each terminal becomes a byte
automaton (``engine.regex`` / ``engine.dfa``), all of them one maximal-munch lexer
(``engine.lexer``), and the rules LALR(1) tables with conflicts kept
(``engine.lr``). ``accepts`` is the exact language of docs/design.md §4: the bytes lex
(with equal-extent alternatives) into a terminal sequence the grammar derives.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, TypeVar

from structgen.engine.deadline import check_deadline
from structgen.engine.dfa import DEAD, AutomatonLimitError, build_dfa
from structgen.engine.lexer import START, Lexer, LexerError
from structgen.engine.lr import GrammarTooLargeError, LRTable, build_lalr
from structgen.engine.indentation import Indentation
from structgen.engine.regex import Node, RegexError, chars, last_line_width, literal
from structgen.engine.stack import GLRParser
from structgen.gc_pause import paused_gc
from structgen.indenter import Indenter, declared_indenter, indented
from structgen.composition import SELF, composed, literal_rules
from structgen.lark_rules import GrammarError, IndentTerminals, LarkRules, LexerTooLarge, ParserTooLarge, Terminal, read_lark
from structgen.lark_writer import write_lark
from structgen.pattern_caches import SHARED_AUTOMATA, TERMINAL_TREES
from structgen.productive import EmptyLanguage, productive_rules
from structgen.pydantic_schema import model_schema
from structgen.checks import TextCheck
from structgen.json.string_lengths import MarkedStrings, marked_strings
from structgen.json.unique_check import UniqueItemsCheck
from structgen.json.unique_items import UniqueItems
from schema2grammar import SchemaError

C = TypeVar("C")

LADDER_SECONDS = 30.0
"""Seconds after which ``Grammar.from_json_schema`` starts no new try with fewer
strings' automata: a failed try builds a lexer to its state limit, which took one
MaskBench schema (Github o79409) 16 s; three tries at most then stay within a
minute."""

PYDANTIC_OPTIONS = {"float_integers": False, "leap_seconds": False, "urls": "whatwg", "duration_digits": 6,
                    "multiple_of": "decimal"}
"""Translation options for Pydantic models: integers as digits (Pydantic reads
``1e+20`` as no ``int``), no second 60 (Python's ``datetime`` cannot hold one),
URLs that Pydantic's WHATWG parser reads (with ``pydantic_schema.model_schema``),
durations that a ``timedelta`` holds, ``multipleOf`` on the decimal written
(Pydantic checks a ``Decimal`` exactly and a ``float`` within a tolerance, so
``19.99`` is a multiple of ``0.01``, which jsonschema's division of doubles
refuses)."""


class Grammar:
    """A grammar ready for the engine: its lexer and its parse tables."""

    def __init__(self, rules: LarkRules, patterns: list[tuple[Node, bool]] | None = None) -> None:
        """``patterns``: each terminal's regex tree and whether it ends at its first
        match, where they are not the terminals' own (``structgen.spelling``: cut to
        what a vocabulary can spell). Only productive rules are kept
        (``structgen.productive``); ``EmptyLanguage`` when no finite text matches."""
        with paused_gc():
            self._build(rules, patterns)

    def _build(self, rules: LarkRules, patterns: list[tuple[Node, bool]] | None = None) -> None:
        self.rules = rules
        check_deadline()  # a compile under a time limit stops between phases (engine/deadline.py)
        read = patterns if patterns is not None else [_terminal_node(t) for t in rules.terminals]
        nodes = [node for node, _ in read]
        # a lazy repeat makes a terminal end at its first match, as re.match (lark) ends it
        shortest = [ends_at_first_match for _, ends_at_first_match in read]
        try:
            cache = SHARED_AUTOMATA.cache()
            self.lexer = Lexer(build_dfa(nodes, shortest=shortest, cache=cache), nodes, shortest, pattern_cache=cache)
        except LexerError as exc:
            names = [rules.terminals[i].name for i in _empty_terminals(nodes)]
            raise GrammarError(f"terminals {names} match the empty string") from exc
        except AutomatonLimitError as exc:
            raise LexerTooLarge(f"the terminals' automaton: {exc}") from None
        except RegexError as exc:
            raise GrammarError(f"the terminals' automaton: {exc}") from None
        # only rules that can be part of a whole derivation: none left for start, no text matches
        self.rules = rules = productive_rules(rules, list(self.lexer.reachable_terminals[START]) + _made_by_parser(rules))
        check_deadline()
        try:
            self.table: LRTable = build_lalr(len(rules.terminals), rules.rules, rules.start)
        except GrammarTooLargeError as exc:
            raise ParserTooLarge(f"the grammar is too large: {exc}") from None
        check_deadline()
        places = rules.indentation
        if places is not None:  # structgen.indenter: the parser reads the levels off its stack
            indentation = Indentation(places.newline, places.lexed, places.indents, places.dedent,
                                      places.opens, places.closes, len(rules.terminals), self.table.actions)
            self.table.indentation = indentation
            if places.starts_line is not False and _begins_line(self.lexer, self.table, places):
                indentation.line_start = b"\n"
            elif places.starts_line:
                name = rules.terminals[places.newline].name
                raise GrammarError(f"indenter: starts_line: the text cannot begin a line, as {name} matches no "
                                   f"text starting with a newline or the start rule cannot take {name} first")
        self.ignored = [False] * len(rules.terminals)  # per terminal: %ignore'd
        for terminal in rules.ignore:
            self.ignored[terminal] = True
        self.report: Any = None  # what the translation of the grammar's source reported (schema2grammar.Report)
        # conditions beyond the grammar, checked beside it (structgen.checks): the string maxima its
        # terminals mark for counting (structgen.json.string_lengths), and from_json_schema's uniqueItems
        self._marked = marked_strings(self.lexer, self.table, rules.terminals)
        self.checks: tuple[TextCheck, ...] = (self._marked.check,) if self._marked.check is not None else ()
        # structgen.compile's cache: id(TokenizerInfo) -> (that TokenizerInfo, CompiledGrammar)
        self.compiled_for: dict[int, tuple[Any, Any]] = {}

    def check(self, kind: type[C]) -> C | None:
        """The grammar's check of class ``kind`` (``structgen.checks``), if it has one."""
        return next((check for check in self.checks if isinstance(check, kind)), None)

    @classmethod
    def from_lark(cls, text: str, start: str = "start", indenter: Any = None) -> Grammar:
        """The grammar of lark text. ``indenter``: a ``structgen.Indenter`` (or a
        lark ``Indenter``) for a grammar whose ``_INDENT``/``_DEDENT`` a postlexer
        writes (docs/indentation.md); without one, a grammar that ``%declare``s
        both is read with lark's ``PythonIndenter`` (``declared_indenter``)."""
        if indenter is None:
            indenter = declared_indenter(text)
            if indenter is None:
                return cls(read_lark(text, start))
        chosen = Indenter.of(indenter)
        return cls(read_lark(text, start, lambda *read: indented(*read, chosen)))

    @classmethod
    def from_json_schema(cls, schema: Any, **options: Any) -> Grammar:
        """The grammar of a JSON Schema (a dict, a bool or JSON text); ``options`` are
        ``schema2grammar.Options``'s. What the translation enforced, approximated or
        rejected is ``grammar.report``. Where the strings' automata make the lexer
        pass its state limit, the schema is translated again with fewer of them
        (each reported): first bounds above ``LENGTH_BOUNDS[0]`` characters are not
        counted (a cap that valid values rarely come near, where a format is the
        shape of every value), then formats are any string (``format_grammars``),
        first where a length bound is beside them, then everywhere; then fewer
        characters still are counted (down ``LENGTH_BOUNDS``); last, ``multipleOf``
        steps with a factor prime to ten (``remainders``). A try that fails
        costs a lexer built to its limit (seconds), so no new one starts past
        ``LADDER_SECONDS``: the last failure is raised. Where a plain string's
        ``maxLength`` past ``lexer_max_length`` cannot be the matcher's
        (``uncounted_tags``), the schema is translated again with the lexer
        counting it, if the lexer fits."""
        from schema2grammar import FORMAT_GRAMMARS, LENGTH_BOUNDS, Options, translate_checked

        chosen = Options(**options)
        fewer_formats = FORMAT_GRAMMARS[FORMAT_GRAMMARS.index(chosen.format_grammars):]
        bounds = [chosen.length_bound] + [bound for bound in LENGTH_BOUNDS if bound < chosen.length_bound]
        caps = bounds[:1] + [bound for bound in bounds[1:] if bound >= LENGTH_BOUNDS[0]]
        stages = [{"format_grammars": fewer_formats[0], "length_bound": bound} for bound in caps]
        stages += [{"format_grammars": where, "length_bound": caps[-1]} for where in fewer_formats[1:]]
        stages += [{"format_grammars": fewer_formats[-1], "length_bound": bound} for bound in bounds[len(caps):]]
        if chosen.remainders:
            stages.append({**stages[-1], "remainders": False})
        stop = time.monotonic() + LADDER_SECONDS
        tried, failure = "", None
        with paused_gc():
            for stage in stages:  # fewer strings' automata: it may fit
                if failure is not None and time.monotonic() > stop:
                    raise failure
                translation = translate_checked(schema, Options(**{**options, **stage}))
                text, report, arrays = translation.lark, translation.report, translation.unique_arrays
                check_deadline()
                if text == tried:
                    continue  # this stage spells out the same automata: the same grammar
                try:
                    grammar = _schema_grammar(cls, text)
                    break
                except LexerTooLarge as exc:
                    tried, failure = text, exc
            else:
                assert failure is not None
                raise failure
            grammar, report, arrays, marked = cls._counted_by_lexer(schema, {**options, **stage}, (grammar, report, arrays))
        grammar.report = report
        if arrays is not None:
            grammar.checks = (UniqueItemsCheck(UniqueItems(arrays)),) + grammar.checks
        _uncounted_reported(report, marked, chosen.strict)
        return grammar

    @classmethod
    def _counted_by_lexer(cls, schema: Any, options: dict[str, Any], found: tuple[Grammar, Any, Any]
                          ) -> tuple[Grammar, Any, Any, MarkedStrings]:
        """``found`` (grammar, report, arrays) and its marked strings, or where a
        string the matcher would count may still be another kind of string
        (``structgen.json.string_lengths.mixed_strings``), the schema
        translated again with the lexer counting up to that string's maximum:
        exact where ``found`` reports those maxima approximated. Each try counts
        more in the lexer; the last that fits stands."""
        from schema2grammar import Options, translate_checked

        chosen = Options(**options)
        marked = found[0]._marked
        while marked.uncounted_tags and chosen.lexer_max_length < marked.longest_uncounted <= chosen.length_bound:
            chosen = Options(**{**options, "lexer_max_length": marked.longest_uncounted})
            translation = translate_checked(schema, chosen)
            text, report, arrays = translation.lark, translation.report, translation.unique_arrays
            check_deadline()
            try:
                grammar = cls.from_lark(text)
            except LexerTooLarge:
                break
            found, marked = (grammar, report, arrays), grammar._marked
        return found[0], found[1], found[2], marked

    @classmethod
    def from_pydantic(cls, model: Any, **options: Any) -> Grammar:
        """The grammar of a Pydantic v2 model's JSON Schema (``model_json_schema()``,
        with its URL types' schemes: ``pydantic_schema``), with
        ``PYDANTIC_OPTIONS``: what Pydantic cannot read stays out."""
        return cls.from_json_schema(model_schema(model), **{**PYDANTIC_OPTIONS, **options})

    @classmethod
    def builtin(cls, name: str) -> Grammar:
        """A grammar that ships with structgen: ``"json"`` (ECMA-404, ``grammars/json.lark``)
        or ``"python"`` (Python 3 with its indentation, ``grammars/python.lark``)."""
        from importlib import resources

        files = resources.files("structgen.grammars")
        shipped = sorted(f.name[: -len(".lark")] for f in files.iterdir() if f.name.endswith(".lark"))
        if name not in shipped:
            raise GrammarError(f"no built-in grammar {name!r}; there are {shipped}")
        return cls.from_lark((files / f"{name}.lark").read_text(encoding="utf-8"))

    # -- composition (structgen.composition): grammars made of grammars, rebuilt from their text

    @classmethod
    def literal(cls, text: str) -> Grammar:
        """The grammar of exactly ``text``."""
        return cls._from_rules(literal_rules(text))

    @classmethod
    def union(cls, *grammars: Grammar) -> Grammar:
        """A text of any one of ``grammars``."""
        return cls._from_rules(composed([g.rules for g in grammars], [[i] for i in range(len(grammars))]))

    @classmethod
    def sequence(cls, *grammars: Grammar) -> Grammar:
        """A text of each of ``grammars`` in turn."""
        return cls._from_rules(composed([g.rules for g in grammars], [list(range(len(grammars)))]))

    @classmethod
    def optional(cls, grammar: Grammar) -> Grammar:
        """A text of ``grammar``, or the empty text."""
        return cls._from_rules(composed([grammar.rules], [[0], []]))

    @classmethod
    def repeat(cls, grammar: Grammar, separator: Grammar | None = None) -> Grammar:
        """One or more texts of ``grammar``, a text of ``separator`` between two."""
        if separator is None:
            return cls._from_rules(composed([grammar.rules], [[0], [SELF, 0]]))
        return cls._from_rules(composed([grammar.rules, separator.rules], [[0], [SELF, 1, 0]]))

    @classmethod
    def _from_rules(cls, rules: LarkRules) -> Grammar:
        """The grammar of ``rules``, read back from their lark text, which it keeps as
        its ``source``: what is built here is what that text builds anywhere else
        (a vLLM worker, the constraint cache)."""
        text = write_lark(rules)
        grammar = cls.from_lark(text)
        grammar.source = ("lark", text)
        return grammar

    @classmethod
    def from_regex(cls, pattern: str, flags: str = "") -> Grammar:
        """The language of one regex (Python syntax), as a one-terminal grammar."""
        terminals = [Terminal("REGEX", "re", pattern, flags, 0)]
        start = len(terminals) + 1  # the first nonterminal, after the end marker
        return cls(LarkRules(terminals=terminals, nonterminals=["start"], rules=[(start, [0])], start=start, ignore=[]))

    def accepts(self, text: str | bytes) -> bool:
        """Whether ``text`` is in the grammar's language (docs/design.md §4) and keeps to the
        grammar's checks."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        if not all(check.text_kept(data) for check in self.checks):
            return False
        parser = GLRParser(self.table)
        state, tops = parser.start(self.lexer, self.ignored)
        start = 0  # where the lexeme in progress began
        for index, byte in enumerate(data):
            state, finished = self.lexer.step(state, byte)
            if state == DEAD:
                return False
            if finished:
                if not self._lengths_kept(finished, tops, data[start:index]):
                    return False
                start = index
                tops = parser.feed_lexeme(tops, finished, self.ignored)
                if not tops:
                    return False
        complete, finished = self.lexer.finish(state)
        if not complete:
            return False
        if finished:
            if not self._lengths_kept(finished, tops, data[start:]):
                return False
            tops = parser.feed_lexeme(tops, finished, self.ignored)
        return bool(tops) and parser.accepts_end(tops)

    def _lengths_kept(self, terminals: list[int], tops: list[Any], lexeme: bytes) -> bool:
        """Whether a lexeme that may be any of ``terminals`` keeps to the checks, as
        one of those the stacks topped by ``tops`` have an action for."""
        if not self.checks:
            return True
        taken = [t for t in terminals if any(t in self.table.actions[top.state] for top in tops)]
        return all(check.lexeme_kept(taken, lexeme) for check in self.checks)


class NoFiniteValue(EmptyLanguage, SchemaError):
    """A JSON Schema that no finite JSON value satisfies: a ``$ref`` cycle with no
    way out, or a property every value must have that holds the schema again."""


def _schema_grammar(cls: type[Grammar], text: str) -> Grammar:
    """The grammar of a schema's translation; ``NoFiniteValue`` where it is empty."""
    try:
        return cls.from_lark(text)
    except EmptyLanguage as exc:
        raise NoFiniteValue(
            "the schema has no finite value: every value would have to contain itself "
            "(a $ref cycle, or a required property that holds its own schema)"
        ) from exc


def _uncounted_reported(report: Any, marked: MarkedStrings, strict: bool) -> None:
    """The ``maxLength`` entries of markers the grammar leaves uncounted
    (``mixed_strings``), approximated in the report (or, strict, an error)."""
    from schema2grammar import APPROXIMATED, SchemaError, ReportEntry

    for tag in marked.uncounted_tags:
        if not 0 <= tag < len(report.entries):
            continue
        entry = report.entries[tag]
        if strict:
            raise SchemaError(f"{entry.pointer or '#'}: maxLength cannot be enforced exactly ({UNCOUNTED_NOTE})")
        report.entries[tag] = ReportEntry(entry.pointer, entry.keyword, APPROXIMATED, UNCOUNTED_NOTE)


UNCOUNTED_NOTE = ("past the length_bound the lexer counts to, and beside another kind of string the value may "
                  "still be written as: not counted")
"""Why a ``maxLength`` the matcher would count is not (``structgen.json.string_lengths.mixed_strings``)."""


def _made_by_parser(rules: LarkRules) -> list[int]:
    """The terminals no text matches that the parser writes itself (``structgen.indenter``)."""
    places = rules.indentation
    if places is None:
        return []
    return [places.newline, places.dedent] + [terminal for terminal in places.indents if terminal >= 0]


def _begins_line(lexer: Lexer, table: LRTable, places: IndentTerminals) -> bool:
    """Whether a newline can come before the text (``Indenter.starts_line``): the
    lexer reads ``\\n`` as the start of a lexed newline, and the start takes the
    grammar's newline first."""
    state, finished = lexer.step(START, ord("\n"))
    if state == DEAD or finished or not set(places.lexed) & set(lexer.reachable_terminals[state]):
        return False
    parser = GLRParser(table)
    return bool(parser.feed(parser.initial(), places.newline))


def _terminal_node(terminal: Terminal) -> tuple[Node, bool]:
    """The terminal's regex tree, and whether it ends at its first match."""
    try:
        if terminal.kind == "none":  # the parser writes it (structgen.indenter): no text is one
            return chars([]), False
        if terminal.width >= 0:
            node, shortest = _terminal_node(replace(terminal, width=-1, wider=False))
            return last_line_width(node, terminal.width, terminal.tab_len, terminal.wider), shortest
        if terminal.kind == "str":
            return literal(terminal.value, ignore_case="i" in terminal.flags), False
        return TERMINAL_TREES.parsed(terminal.value, terminal.flags)
    except RegexError as exc:
        shown = terminal.value if len(terminal.value) <= 200 else terminal.value[:200] + "..."  # a message, not a dump
        raise GrammarError(f"terminal {terminal.name} (/{shown}/): {exc}") from None


def _empty_terminals(nodes: list[Node]) -> list[int]:
    return [i for i, node in enumerate(nodes) if build_dfa([node]).accepts[0]]

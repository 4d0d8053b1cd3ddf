"""Strings: ``pattern``, ``format``, ``minLength``/``maxLength`` (and ``x-url``),
which one terminal says together (lookaheads the engine intersects), or, past
what the lexer counts, with the matcher counting a maximum."""

from __future__ import annotations

from typing import Any

from schema2grammar import automata, ecma, formats, regexes
from schema2grammar.core import ANNOTATION_IGNORED, TranslatorCore
from schema2grammar.report import ENFORCED
from schema2grammar.shared import NoValue, SchemaError
from schema2grammar.translation import CountedString

STRINGS_SPELLED = "characters in every JSON spelling but \\u escapes of printable ASCII (spellings)"
"""How a string's characters are matched (``spellings``): ``é`` and ``\\u00e9`` alike."""

COUNTED_NOTE = ("counted by structgen's matcher (structgen/json/string_lengths.py), past the lengths the lexer counts "
                "(lexer_max_length, length_bound); the grammar's text marks it with a max_length_N group, which "
                "other engines read as plain grouping")
"""Where a length bound is left to the matcher."""

MAX_CLOSING_DISTANCE = 16
"""The most characters a long enough text of a pattern may still need
(``automata.closing_distance``) for the matcher to count a ``maxLength`` beside
it: a mask near the maximum follows each token that ends within this many
characters of it to its lexer state; past it the lexer counts."""

URL_KEYWORD_READ = "read only where format 'uri' is spelled out with urls='whatwg'"
"""Why ``x-url`` is approximated elsewhere."""


def _joined(*notes: str) -> str:
    return "; ".join(note for note in notes if note)


class StringKeywords(TranslatorCore):
    """The terminal of a string place."""

    def type_string(self, schema: dict[str, Any], pointer: str) -> str:
        """One terminal: the pattern (within the lengths), else the format, else the
        length range; what one terminal cannot also say is approximated. A format
        goes before lengths: a value of the wrong shape is the likelier error, and
        lengths beside a format are mostly loose limits (``maxLength: 255`` on an
        e-mail address)."""
        report = self.report
        found = self.pattern(schema, pointer)
        if found is not None:
            pattern, tests = found
            body = '"' + pattern + '"'
            marked = self.counted_beside_pattern(schema, body, tests, pointer)
            if marked is not None:
                return marked
            lengths = self.pattern_lengths(schema, pointer)
            ahead = [lengths] if lengths else []  # the lookaheads: what else the terminal's strings meet
            ahead += self.format_beside(schema, [body, *ahead], pointer)
            if "x-url" in schema:
                self.approximate(pointer, "x-url", "not enforced beside pattern")
            return self.terminal("".join(tests) + "".join(f"(?={regex})" for regex in ahead) + body)
        fmt = schema.get("format")
        spelled = fmt if isinstance(fmt, str) and fmt in formats.FORMATS else None  # a format with a grammar
        where = self.options.format_grammars
        bounded = "minLength" in schema or "maxLength" in schema
        if spelled is not None and self.format_checked and (where == "always" or where == "unbounded" and not bounded):
            shortest, longest = self.count_value(schema, "minLength", pointer), self.count_value(schema, "maxLength", pointer)
            if shortest is not None and longest is not None and longest < shortest:
                raise NoValue(f"{pointer or '#'}: maxLength {longest} is below minLength {shortest}")
            lengths = self.lengths_beside_format(spelled, schema, shortest or 0, longest, pointer)
            return self.format(spelled, schema, pointer, lengths)
        low = self.count_value(schema, "minLength", pointer) or 0
        high = self.count_value(schema, "maxLength", pointer)
        if high is not None and high < low:
            raise NoValue(f"{pointer or '#'}: maxLength {high} is below minLength {low}")
        bound = self.options.length_bound
        # the matcher's count, where the lexer's would be too long or cost its steps many states' token groups
        counted = high is not None and high > min(bound, self.options.lexer_max_length)
        tag = len(self.report.entries)  # its report entry (structgen.grammar may revise it)
        if "maxLength" in schema:
            self.report.add(pointer, "maxLength", ENFORCED, COUNTED_NOTE if counted else "")
        if low > bound:
            self.approximate(pointer, "minLength", self.length_note())
        elif "minLength" in schema:
            self.report.add(pointer, "minLength", ENFORCED)
        low = min(low, bound)
        if "x-url" in schema:
            self.approximate(pointer, "x-url", URL_KEYWORD_READ)
        if fmt is not None and not self.format_checked:
            report.add(pointer, "format", ENFORCED, ANNOTATION_IGNORED)
        elif spelled is not None:
            self.approximate(pointer, "format", f"format {fmt!r} not spelled out here (format_grammars={where!r}, where "
                             "the lexer would pass its state limit with it): any string")
        elif fmt is not None:
            self.approximate(pointer, "format", f"format {fmt!r} is not enforced: any string")
        if counted and high is not None:
            return self.counted_terminal(CountedString(high, tag), regexes.string_of_length(low, None))
        return self.terminal(regexes.string_of_length(low, high))

    def format(self, fmt: str, schema: dict[str, Any], pointer: str, lengths: str = "") -> str:
        """The terminal of a format ``formats`` knows, reported as it is; ``lengths``:
        a quoted string's length bounds it meets too (``lengths_beside_format``;
        never beside WHATWG URLs)."""
        if fmt == "uri" and self.options.urls == "whatwg":
            schemes, host_required = self.url_keyword(schema, pointer)
            self.report.add(pointer, "format", ENFORCED, formats.NOTES["uri whatwg"])
            return self.terminal('"' + formats.whatwg_uri(schemes, host_required) + '"')  # no lengths beside it
        if "x-url" in schema:
            self.approximate(pointer, "x-url", URL_KEYWORD_READ)
        if fmt in formats.WIDER:
            self.approximate(pointer, "format", formats.WIDER[fmt])
        else:
            self.report.add(pointer, "format", ENFORCED, _joined(formats.NOTES.get(fmt, ""), self.format_note))
        return self.terminal((f"(?={lengths})" if lengths else "") + self.format_spelling(fmt))

    def format_spelling(self, fmt: str) -> str:
        """The quoted strings of a format ``formats`` spells (RFC 3986's ``uri``), as
        the options have it."""
        pattern = formats.FORMATS[fmt]
        if fmt == "duration" and self.options.duration_digits is not None:
            pattern = formats.duration(self.options.duration_digits)
        if not self.options.leap_seconds:
            pattern = pattern.replace(formats.LEAP_SECOND, ")")
        return '"' + pattern + '"'

    def lengths_beside_format(self, fmt: str, schema: dict[str, Any], low: int, high: int | None, pointer: str) -> str:
        """The quoted strings of ``low`` to ``high`` characters, when the format's
        strings meet them within the automata's limits (both reported enforced);
        else "" with the lengths reported approximated. One terminal says both as
        a lookahead, which the engine reads as the intersection."""
        keys = [key for key in ("minLength", "maxLength") if key in schema]
        if not keys:
            return ""
        lengths = regexes.string_of_length(low, high)
        why = ""
        if fmt == "uri" and self.options.urls == "whatwg":
            why = ": not with WHATWG URLs"
        elif max(low, high or 0) > self.options.length_bound:
            why = ": " + self.length_note()
        else:
            try:
                if not automata.regexes_meet((self.format_spelling(fmt), lengths)):
                    why = ": no string of the format has those lengths here"
            except ecma.Unsupported as exc:
                why = f": {exc}"
        for key in keys:
            if why:
                self.approximate(pointer, key, "not enforced beside format" + why)
            else:
                self.report.add(pointer, key, ENFORCED, "beside the format")
        return "" if why else lengths

    def format_beside(self, schema: dict[str, Any], others: list[str], pointer: str) -> list[str]:
        """``format`` beside what one terminal already says (``others``: the
        regexes of a ``pattern`` and its lengths): the format's quoted strings, to
        be written as a lookahead, where the automata of all of them meet within
        their limits; else none, with the format reported approximated (an
        annotation in this draft: reported so)."""
        fmt = schema.get("format")
        if fmt is None:
            return []
        if not self.format_checked:
            self.report.add(pointer, "format", ENFORCED, ANNOTATION_IGNORED)
            return []
        if not (isinstance(fmt, str) and fmt in formats.FORMATS):
            self.approximate(pointer, "format", f"format {fmt!r} is not enforced: any string")
            return []
        if fmt == "uri" and self.options.urls == "whatwg":
            self.approximate(pointer, "format", "WHATWG URLs are not enforced beside a pattern")
            return []
        spelled = self.format_spelling(fmt)
        try:
            met = automata.regexes_meet((spelled, *others))
        except ecma.Unsupported as exc:
            self.approximate(pointer, "format", f"not enforced beside pattern: {exc}")
            return []
        if not met:  # no value then; but ecma reads the regexes, not the engine: wider is the safe side
            self.approximate(pointer, "format", "not enforced beside pattern: no string of the format matches it here")
            return []
        if fmt in formats.WIDER:
            self.approximate(pointer, "format", formats.WIDER[fmt])
        else:
            self.report.add(pointer, "format", ENFORCED, _joined("beside the pattern", self.format_note))
        return [spelled]

    def url_keyword(self, schema: dict[str, Any], pointer: str) -> tuple[list[str] | None, bool]:
        """``x-url``'s schemes (None: any) and whether a host is required, reported
        enforced (None and False without it)."""
        value = schema.get("x-url", {})
        if not isinstance(value, dict) or set(value) - {"schemes", "host_required"}:
            raise SchemaError(
                f"{pointer or '#'}: x-url must be an object with 'schemes' and 'host_required', not {value!r}"
            )
        schemes = value.get("schemes")
        if schemes is not None and not (
            isinstance(schemes, list)
            and schemes
            and all(isinstance(v, str) and formats.SCHEME.fullmatch(v) for v in schemes)
        ):
            raise SchemaError(
                f"{pointer or '#'}/x-url: schemes must be a non-empty list of URI schemes, not {schemes!r}"
            )
        host_required = value.get("host_required", False)
        if not isinstance(host_required, bool):
            raise SchemaError(f"{pointer or '#'}/x-url: host_required must be true or false, not {host_required!r}")
        if "x-url" in schema:
            self.report.add(pointer, "x-url", ENFORCED, "the URL's schemes and host, as format 'uri' reads them")
        return (None if schemes is None else [v.lower() for v in schemes]), host_required

    def pattern(self, schema: dict[str, Any], pointer: str) -> tuple[str, list[str]] | None:
        """The regex for ``pattern``, and its leading lookaheads as the terminal's
        (each over the whole quoted string: the engine intersects, or takes away,
        their automata); None when there is none, or it cannot be exact."""
        if "pattern" not in schema:
            return None
        source = schema["pattern"]
        if not isinstance(source, str):
            raise SchemaError(f"{pointer or '#'}: pattern must be a string")
        try:
            [(_, rest), *lookaheads] = ecma.conjuncts(source)
            regex = ecma.json_string_regex(rest)
            tests = [f'{"(?=" if holds else "(?!"}"{ecma.json_string_regex(test)}")' for holds, test in lookaheads]
        except ecma.InvalidPattern as exc:
            raise SchemaError(f"{pointer or '#'}: pattern {source!r} is not a regular expression: {exc}") from None
        except ecma.Unsupported as exc:
            self.approximate(pointer, "pattern", f"{exc}: any string")
            return None
        self.report.add(pointer, "pattern", ENFORCED, STRINGS_SPELLED
                        + ("; its lookaheads as the terminal's" if tests else ""))
        return regex, tests

    def length_note(self) -> str:
        """Why a length bound is not counted: above ``Options.length_bound``."""
        bound = self.options.length_bound
        if bound == regexes.MAX_LENGTH_BOUND:
            return f"length bounds above {bound} are not enforced"
        return f"length bounds above {bound} are not enforced (length_bound={bound}, where the lexer would pass its state limit)"

    def counted_beside_pattern(self, schema: dict[str, Any], body: str, tests: list[str], pointer: str) -> str | None:
        """The terminal of a pattern whose ``maxLength`` the matcher counts (past
        ``lexer_max_length``): from some length on, a text the pattern can still
        complete needs at most ``late`` more characters (``automata.closing_distance``,
        at most ``MAX_CLOSING_DISTANCE``), and the maximum leaves room for them; the
        matcher keeps each text within its distance of the end. None (the lexer
        counts, ``pattern_lengths``) beside lookaheads or a format, or where a text
        may need more characters than the maximum leaves room for."""
        high = self.count_value(schema, "maxLength", pointer)
        low = self.count_value(schema, "minLength", pointer) or 0
        if high is None or high <= min(self.options.length_bound, self.options.lexer_max_length) or high < low \
                or low > self.options.length_bound or tests or "format" in schema or "x-url" in schema:
            return None
        try:
            closing = automata.closing_distance(ecma.parse(ecma.conjuncts(schema["pattern"])[0][1]), low)
        except ecma.Unsupported:
            return None
        if closing is None or closing[1] > MAX_CLOSING_DISTANCE or sum(closing) > high:
            return None
        tag = len(self.report.entries)  # its report entry (structgen.grammar may revise it)
        self.report.add(pointer, "maxLength", ENFORCED, COUNTED_NOTE)
        if "minLength" in schema:
            self.report.add(pointer, "minLength", ENFORCED, "beside the pattern")
        ahead = f"(?={regexes.string_of_length(low, None)})" if low else ""
        return self.counted_terminal(CountedString(high, tag, closing[1]), body, ahead)

    def pattern_lengths(self, schema: dict[str, Any], pointer: str) -> str:
        """The quoted strings within the length bounds beside a ``pattern`` (empty
        when there is none), to be written as a lookahead: the engine intersects
        the two automata, while the pattern's automaton counting characters stays
        small."""
        low = self.count_value(schema, "minLength", pointer) or 0
        high = self.count_value(schema, "maxLength", pointer)
        if high is not None and high < low:
            raise NoValue(f"{pointer or '#'}: maxLength {high} is below minLength {low}")
        if low == 0 and high is None:
            return ""
        keys = [key for key in ("minLength", "maxLength") if key in schema]
        if max(low, high or 0) > self.options.length_bound:  # as beside no pattern
            for key in keys:
                self.approximate(pointer, key, self.length_note())
            return ""
        try:
            rest = ecma.conjuncts(schema["pattern"])[0][1]  # its lookaheads aside: the terminal holds them
            found = automata.lengths_found(ecma.parse(rest), low, high)
        except ecma.Unsupported as exc:
            for key in keys:
                self.approximate(pointer, key, f"not enforced beside pattern: {exc}")
            return ""
        if not found:
            raise NoValue(f"{pointer or '#'}: no string of the lengths allowed matches the pattern")
        for key in keys:
            self.report.add(pointer, key, ENFORCED, "beside the pattern")
        return regexes.string_of_length(low, high)

"""Translation options: whitespace, strictness, property order."""

from __future__ import annotations

import re
from dataclasses import dataclass

from schema2grammar.regexes import MAX_LENGTH_BOUND

MAX_WHITESPACE = 64
"""Default bound on the whitespace of one gap: enough for ``json.dumps(indent=4)``
sixteen levels deep, never an endless run of newlines."""

MAX_INDENT_LEVELS = 32
"""With ``indent``, the deepest indentation a line may have (in levels)."""

FORMAT_GRAMMARS = ("always", "unbounded", "never")
"""Where formats are spelled out (``Options.format_grammars``), most first."""

LENGTH_BOUNDS = (256, 32)
"""``Options.length_bound`` values ``Grammar.from_json_schema`` goes down where the
lexer would pass its state limit: to the first before the formats
(``FORMAT_GRAMMARS``), to the others after them."""

LEXER_MAX_LENGTH = 8
"""The default ``Options.lexer_max_length``: the longest plain string's ``maxLength``
the lexer counts. Each character counted is some 20 automaton states, each with
token groups a step may wait for on first use (a ``maxLength: 1024`` made one
MaskBench schema's steps wait up to 160 ms; counts multiply with what runs beside
them, so short ones matter too: ``band-manifest``, maxima of 10 to 100, had 82
steps over a millisecond with the lexer counting them all, 65 with it counting up
to 16, none up to 8), while the matcher counts a longer one for a comparison of
arrays a step. Below the
longest token that opens a string (6 characters for DeepSeek's vocabulary) the
matcher reads such tokens one by one: 8 stays above it."""

MAX_DURATION_DIGITS = 100
"""The most ``Options.duration_digits`` (each digit of a bounded count is lexer states)."""

URLS = ("rfc3986", "whatwg")
"""The grammars of the ``uri`` format (``Options.urls``)."""

FORMAT_ANNOTATIONS = ("asserted", "ignored")
"""What a ``format`` that is an annotation in the schema's draft does (``Options.format_annotations``)."""

NUMBER_SPELLINGS = ("readable", "draft")
"""How numbers are written (``Options.numbers``)."""

MULTIPLE_OF_READINGS = ("double", "decimal")
"""How a ``multipleOf`` reads a readable number (``Options.multiple_of``)."""

DRAFT_SEMANTICS = {"numbers": "draft", "format_annotations": "ignored"}
"""The options under which a grammar accepts what the schema's draft accepts, as a
validator judges it (conformance measures this); the defaults are narrower, made
for generating: integers as digits, finite numbers, annotated formats asserted."""

_SEPARATOR = {0: re.compile(r"[ \t\n\r]*,[ \t\n\r]*"), 1: re.compile(r"[ \t\n\r]*:[ \t\n\r]*")}


@dataclass(frozen=True)
class Options:
    """``whitespace``: ``"flexible"`` (default: up to ``max_whitespace`` of JSON
    whitespace in every gap between tokens, and before the first one, so
    ``json.dumps`` output with default separators or ``indent=2``/``4`` is
    accepted) or ``"compact"`` (none).
    ``strict``: a keyword that cannot be enforced is an error (``SchemaError``)
    instead of an approximation listed in the report. ``property_order``:
    ``"declared"`` (default: the schema's order, as OpenAI's strict mode and every
    engine enforce it) or ``"any"`` (members in any order, each at most once, extra
    properties among them, as JSON Schema itself allows; an object whose states
    would pass ``MAX_UNORDERED_STATES``, about nine optional properties, keeps the
    declared order, reported). ``closed_objects``: an object schema that declares ``properties`` but no
    ``additionalProperties`` (or ``patternProperties``) gets no undeclared properties
    (one that declares none stays open: ``{"type": "object"}`` closed would be ``{}``), as XGrammar's and
    OpenAI's strict modes do; generation turns it on (a model left free to invent
    keys wanders), conformance leaves it off.

    Layouts that replace ``whitespace``: ``separators=(item, key)`` writes exactly
    these between items and between a key and its value (``(", ", ": ")`` is
    ``json.dumps``'s default, ``(",", ":")`` compact) and nothing else; ``indent=N``
    is ``json.dumps(indent=N)``'s layout: a newline and a multiple of N spaces after
    an opening bracket and after each item separator, and before a closing one
    (empty ``{}`` and ``[]`` stay tight), ``(",", ": ")`` unless ``separators`` says
    otherwise. The depth of the indentation is not checked against the nesting
    (up to ``MAX_INDENT_LEVELS`` levels are allowed anywhere).

    ``float_integers``: whether an integer may be written as ``json.dumps`` writes
    an integral float (``12.0``, ``1.2e+17``); None (default) follows the draft
    (yes from draft 6 on). ``Grammar.from_pydantic`` sets False: Pydantic reads
    ``1e+20`` as no ``int``. ``leap_seconds``: whether ``time`` and ``date-time``
    allow second 60 (RFC 3339 does; ``from_pydantic`` sets False: Python's
    ``datetime`` cannot hold one). ``format_assertion``: whether ``format`` is
    checked; None (default) follows the draft: an annotation only in a schema
    that declares draft 2019-09 or 2020-12, checked otherwise (drafts 4 to 7, and
    a schema that declares none, as most schemas written for generation).
    ``format_annotations``: what a ``format`` the draft makes an annotation does
    where it describes a value (not inside ``not`` or an ``if``, which keep the
    draft's reading): ``"asserted"`` (default) checks it as in the older drafts,
    so a generated ``date`` is a date (narrower than the draft: every output is
    still valid, and the report says which formats were asserted so), or
    ``"ignored"``, the draft's own behaviour.
    ``format_grammars``: where a checked format is spelled out by its RFC's
    grammar (``formats``): ``"always"`` (default; lengths beside it are then
    approximated), ``"unbounded"`` (only where no length bound is beside it, which
    is enforced instead) or ``"never"``; a format not spelled out is any string,
    reported approximated. ``Grammar.from_json_schema`` goes down these where the
    lexer would pass its state limit. ``urls``: the ``uri`` format as RFC 3986
    writes it (``"rfc3986"``, default) or only the URIs a WHATWG URL parser reads
    too (``"whatwg"``, ``formats.whatwg_uri``; ``from_pydantic`` sets it, with the
    schemes and host its URL types require as ``x-url``). ``duration_digits``: the
    most digits of each number in a ``duration`` (None, default: any;
    ``from_pydantic`` sets 6, as Python's ``timedelta`` holds at most 999,999,999
    days and six digits in every part stay below that). ``length_bound``: the
    largest ``minLength``/``maxLength`` counted (each character counted is some 20
    lexer states); larger ones are reported approximated (default and most:
    ``regexes.MAX_LENGTH_BOUND``, 2,048; ``Grammar.from_json_schema`` goes down
    ``LENGTH_BOUNDS`` where the lexer would pass its state limit); a larger
    ``maxLength`` of a plain string is counted by structgen's matcher instead.
    ``lexer_max_length``: the longest ``maxLength`` of a plain string (no pattern,
    no format; or a pattern whose long enough texts are a few characters from
    their end at most, with room for them, ``automata.closing_distance``) the
    lexer counts (default ``LEXER_MAX_LENGTH``, 8); the matcher
    counts a longer one (``structgen/json/string_lengths.py``), the same strings with
    far fewer lexer states. Where the matcher cannot count one (a value that may
    still be another kind of string, or have another maximum),
    ``Grammar.from_json_schema`` translates
    again with the lexer counting up to that string's maximum.
    ``numbers``: ``"readable"`` (default) writes numbers as a JSON reader reads
    them back: an integer as digits (no ``1.0``, no ``1e+20``), every number
    finite as a double (``json.loads`` and ``JSON.parse`` give no infinity, at
    most 308 digits before the point: ``regexes.UNREADABLE``), a listed number as
    ``json.dumps`` spells it; ``"draft"`` spells numbers as the draft allows
    (``float_integers``, any exponent). Both accept only valid values: readable
    is the narrower language, which a model cannot leave.
    ``multiple_of``: how ``multipleOf`` reads a readable number: ``"decimal"``
    (default) as the decimal written, as the draft means it and Pydantic checks it
    (``19.99`` is a multiple of ``0.01``, ``7e300`` one of 7); ``"double"`` as the
    double a JSON reader reads, for outputs that ``jsonschema`` or ajv must accept
    (they check ``value % step`` or ``value / step`` on doubles: ``7e300`` is no
    multiple of 7, ``19.99`` none of ``0.01``, ``0.3`` none of ``0.1``): only
    multiples that a double holds exactly and whose quotient is exact are taken
    (``multiples.as_doubles``: below 1e15 for 7, those of ``0.25`` for ``0.01``;
    reported narrower where that leaves some out, approximated where it finds no
    step). ``numbers="draft"`` reads decimals.
    ``remainders``: whether a ``multipleOf`` with a factor prime to ten (``3``,
    ``0.7``) is enforced by a remainder automaton in its number's terminal
    (default); ``Grammar.from_json_schema`` gives it up last where the lexer would
    pass its state limit (numbers of several such steps in one place run their
    remainders side by side)."""

    whitespace: str = "flexible"
    max_whitespace: int = MAX_WHITESPACE
    strict: bool = False
    property_order: str = "declared"
    closed_objects: bool = False
    separators: tuple[str, str] | None = None
    indent: int | None = None
    float_integers: bool | None = None
    leap_seconds: bool = True
    format_assertion: bool | None = None
    format_annotations: str = "asserted"
    format_grammars: str = "always"
    urls: str = "rfc3986"
    duration_digits: int | None = None
    length_bound: int = MAX_LENGTH_BOUND
    lexer_max_length: int = LEXER_MAX_LENGTH
    remainders: bool = True
    numbers: str = "readable"
    multiple_of: str = "decimal"

    def __post_init__(self) -> None:
        if self.whitespace not in ("flexible", "compact"):
            raise ValueError(f"whitespace must be 'flexible' or 'compact', not {self.whitespace!r}")
        if not 0 <= self.max_whitespace <= 1024:
            raise ValueError(f"max_whitespace must be between 0 and 1024, not {self.max_whitespace}")
        if self.format_grammars not in FORMAT_GRAMMARS:
            raise ValueError(f"format_grammars must be one of {FORMAT_GRAMMARS}, not {self.format_grammars!r}")
        if self.duration_digits is not None and not (
            isinstance(self.duration_digits, int) and 1 <= self.duration_digits <= MAX_DURATION_DIGITS
        ):
            raise ValueError(f"duration_digits must be between 1 and {MAX_DURATION_DIGITS}, not {self.duration_digits!r}")
        if not (isinstance(self.length_bound, int) and 0 <= self.length_bound <= MAX_LENGTH_BOUND):
            raise ValueError(f"length_bound must be between 0 and {MAX_LENGTH_BOUND}, not {self.length_bound!r}")
        if not (isinstance(self.lexer_max_length, int) and 0 <= self.lexer_max_length <= MAX_LENGTH_BOUND):
            raise ValueError(
                f"lexer_max_length must be between 0 and {MAX_LENGTH_BOUND}, not {self.lexer_max_length!r}"
            )
        if self.urls not in URLS:
            raise ValueError(f"urls must be one of {URLS}, not {self.urls!r}")
        if self.format_annotations not in FORMAT_ANNOTATIONS:
            raise ValueError(f"format_annotations must be one of {FORMAT_ANNOTATIONS}, not {self.format_annotations!r}")
        if self.numbers not in NUMBER_SPELLINGS:
            raise ValueError(f"numbers must be one of {NUMBER_SPELLINGS}, not {self.numbers!r}")
        if self.multiple_of not in MULTIPLE_OF_READINGS:
            raise ValueError(f"multiple_of must be one of {MULTIPLE_OF_READINGS}, not {self.multiple_of!r}")
        if self.property_order not in ("declared", "any"):
            raise ValueError(f"property_order must be 'declared' or 'any', not {self.property_order!r}")
        if self.separators is not None:
            if len(self.separators) != 2 or not all(
                isinstance(text, str) and _SEPARATOR[i].fullmatch(text) for i, text in enumerate(self.separators)
            ):
                raise ValueError(
                    f"separators must be (item, key): ',' and ':' with JSON whitespace around them, not {self.separators!r}"
                )
        if self.indent is not None and not (isinstance(self.indent, int) and 0 <= self.indent <= 16):
            raise ValueError(f"indent must be an integer between 0 and 16, not {self.indent!r}")

    @property
    def gap(self) -> int:
        """The most whitespace bytes allowed in one gap."""
        return 0 if self.whitespace == "compact" else self.max_whitespace

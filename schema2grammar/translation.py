"""``Translation``: what translating a schema hands to the grammar, as typed data.

The rules are lark text (the grammar's portable form: it is cached, composed and
sent to vLLM as text); beside them come the report, the arrays whose
``uniqueItems`` the matcher checks, and the string maxima it counts, by terminal.

A counted maximum also travels inside its terminal's regex, as a named group
(``CountedString.group``) that ``re``, lark and the engine read as plain grouping,
so a grammar's text alone still carries it wherever the text goes (a composed
tool-call grammar, a vLLM worker). ``CountedString.group`` writes that name and
``CountedString.read`` reads it back; nothing else spells or parses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from schema2grammar.report import Report
from schema2grammar.unique_arrays import UniqueArrays

_GROUP_NAME: Final = re.compile(r"max_length_([0-9]+)(?:_([0-9]+)(?:_([0-9]+))?)?")


@dataclass(frozen=True)
class CountedString:
    """A JSON string's ``maxLength`` that the matcher counts (past what the lexer
    counts): ``maximum`` characters, ``tag`` the index of its ``maxLength`` report
    entry (-1: none), ``late`` the most characters a long enough text may still
    need before it can end (beside a pattern: ``automata.closing_distance``)."""

    maximum: int
    tag: int = -1
    late: int = 0

    def group(self, quoted: str) -> str:
        """``quoted`` (a JSON string's regex) inside the group that carries this."""
        assert self.tag >= 0 or not self.late, "a late count needs its tag"
        tag = f"_{self.tag}" if self.tag >= 0 else ""
        late = f"_{self.late}" if self.late else ""
        return f"(?P<max_length_{self.maximum}{tag}{late}>{quoted})"

    @staticmethod
    def read(group_name: str) -> CountedString | None:
        """The counted maximum a regex group's name carries (None: it carries none)."""
        found = _GROUP_NAME.fullmatch(group_name)
        if found is None:
            return None
        tag, late = found.group(2), found.group(3)
        return CountedString(int(found.group(1)), int(tag) if tag is not None else -1, int(late) if late is not None else 0)


@dataclass(frozen=True)
class Translation:
    """One schema's translation: ``lark`` (the rules; ``start`` is the schema's
    value), the ``report`` of every keyword, the ``unique_arrays`` the matcher
    checks (None: none, or the translation was asked for without checks), and
    ``counted_strings``: terminal name -> the maximum the matcher counts."""

    lark: str
    report: Report
    unique_arrays: UniqueArrays | None = None
    counted_strings: dict[str, CountedString] = field(default_factory=dict)

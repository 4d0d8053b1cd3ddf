"""What a translation did with every keyword: enforced, approximated or rejected.

A program reads ``Report.entries`` (or ``as_dicts()``); a person prints the report.
Annotations (``title``, ``description``, ...) constrain nothing and are listed as
enforced, so that every keyword of the schema appears exactly once per place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ENFORCED = "enforced"
APPROXIMATED = "approximated"
REJECTED = "rejected"


@dataclass(frozen=True)
class ReportEntry:
    pointer: str  # JSON pointer of the schema object holding the keyword
    keyword: str
    status: str  # ENFORCED, APPROXIMATED or REJECTED
    note: str = ""
    narrower: bool = False  # approximated by taking fewer values: every value the grammar takes is valid


@dataclass
class Report:
    entries: list[ReportEntry] = field(default_factory=list)

    def add(self, pointer: str, keyword: str, status: str, note: str = "", narrower: bool = False) -> None:
        self.entries.append(ReportEntry(pointer, keyword, status, note, narrower))

    def with_status(self, status: str) -> list[ReportEntry]:
        return [entry for entry in self.entries if entry.status == status]

    @property
    def exact(self) -> bool:
        """Whether the grammar accepts exactly the schema's instances (in declared
        property order): nothing was approximated or rejected."""
        return all(entry.status == ENFORCED for entry in self.entries)

    @property
    def sound(self) -> bool:
        """Whether every value the grammar accepts is an instance: nothing was
        approximated but by taking fewer values (``ReportEntry.narrower``: closed
        objects, a declared order kept), nothing rejected. A generator can then
        promise valid outputs without checking them afterwards."""
        return all(entry.status == ENFORCED or entry.narrower for entry in self.entries)

    def widened(self) -> list[ReportEntry]:
        """The entries that make the grammar take values the schema refuses."""
        return [entry for entry in self.entries if entry.status != ENFORCED and not entry.narrower]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [asdict(entry) for entry in self.entries]

    def __str__(self) -> str:
        lines = [f"{len(self.entries)} keywords: " + ", ".join(
            f"{len(self.with_status(s))} {s}" for s in (ENFORCED, APPROXIMATED, REJECTED)
        )]
        for entry in self.entries:
            if entry.status != ENFORCED or (entry.note and entry.note != "annotation"):
                note = f": {entry.note}" if entry.note else ""
                lines.append(f"  {entry.status:12} {entry.pointer or '#'} {entry.keyword}{note}")
        return "\n".join(lines)

"""Translation options: whitespace, strictness, property order."""

from __future__ import annotations

from dataclasses import dataclass

MAX_WHITESPACE = 64
"""Default bound on the whitespace of one gap: enough for ``json.dumps(indent=4)``
sixteen levels deep, never an endless run of newlines."""


@dataclass(frozen=True)
class Options:
    """``whitespace``: ``"flexible"`` (default: up to ``max_whitespace`` of JSON
    whitespace in every gap between tokens, so ``json.dumps`` output with default
    separators or ``indent=2``/``4`` is accepted) or ``"compact"`` (none).
    ``strict``: a keyword that cannot be enforced is an error (``SchemaError``)
    instead of an approximation listed in the report. ``property_order``: only
    ``"declared"`` (the schema's order, as OpenAI's strict mode and every engine
    enforce it). ``closed_objects``: an object schema without ``additionalProperties``
    (or ``patternProperties``) gets no undeclared properties, as XGrammar's and
    OpenAI's strict modes do; generation turns it on (a model left free to invent
    keys wanders), conformance leaves it off."""

    whitespace: str = "flexible"
    max_whitespace: int = MAX_WHITESPACE
    strict: bool = False
    property_order: str = "declared"
    closed_objects: bool = False

    def __post_init__(self) -> None:
        if self.whitespace not in ("flexible", "compact"):
            raise ValueError(f"whitespace must be 'flexible' or 'compact', not {self.whitespace!r}")
        if not 0 <= self.max_whitespace <= 1024:
            raise ValueError(f"max_whitespace must be between 0 and 1024, not {self.max_whitespace}")
        if self.property_order != "declared":
            raise ValueError(f"property_order must be 'declared', not {self.property_order!r}")

    @property
    def gap(self) -> int:
        """The most whitespace bytes allowed in one gap."""
        return 0 if self.whitespace == "compact" else self.max_whitespace

"""Listed values judged by a validator where the complement's reading cannot tell.

An ``enum`` or ``const`` beside a ``not`` keeps the values the negated schema
refuses (``applicators.listed_by_not``). ``complement.accepts`` reads the negated
schema kind by kind and has no verdict for some keywords (``additionalProperties``
with a schema, ``patternProperties``, ``additionalItems``...). A listed value is
a concrete JSON value, so a validator can judge it: ``jsonschema``, on the
negated schema inside the whole document (its references resolve there).

The verdict is taken only where the readings this translator could mean agree:
the document's declared draft (both draft 7 and 2020-12 where it declares none
that jsonschema knows),
with formats checked and not (where ``format`` is an assertion and the document
has one: the format grammars here are not jsonschema's checkers, so only a
verdict that does not depend on them counts). A value holding an integral float
is not judged where ``float_integers`` says otherwise than the draft. Anything
else, an error included (a remote reference), is no verdict.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema import FormatChecker, validators

_UNDECLARED = (jsonschema.Draft7Validator, jsonschema.Draft202012Validator)
"""The readings of a document that declares no draft: these two must agree."""

_FLOAT_INTEGERS_FROM = (jsonschema.Draft6Validator, jsonschema.Draft7Validator, jsonschema.Draft201909Validator,
                        jsonschema.Draft202012Validator)
"""The drafts in which ``1.0`` is an integer."""


class Judge:
    """Judges listed values against subschemas of one document."""

    def __init__(self, root: Any, float_integers: bool, format_assertion: bool) -> None:
        self.root = root
        self.float_integers = float_integers
        named = isinstance(root, dict) and isinstance(root.get("$schema"), str)
        declared = validators.validator_for(root, default=None) if named else None
        classes = [declared] if declared is not None else list(_UNDECLARED)
        checkers: list[FormatChecker | None] = [None]
        if format_assertion and '"format"' in json.dumps(root):
            checkers.append(FormatChecker())
        self._validators: list[Any] | None = None
        self._plan = [(cls, checker) for cls in classes for checker in checkers]

    def accepts(self, schema: Any, value: Any) -> bool | None:
        """Whether ``schema`` (a subschema of the document) accepts ``value``; None
        where the readings disagree or cannot tell."""
        if _holds_integral_float(value) and any(
                (cls in _FLOAT_INTEGERS_FROM) != self.float_integers for cls, _ in self._plan):
            return None
        verdicts = set()
        try:
            for validator in self._document_validators():
                verdicts.add(validator.evolve(schema=schema).is_valid(value))
        except Exception:  # noqa: BLE001 - jsonschema's many errors (an unresolvable reference, a bad schema): no verdict
            return None
        return verdicts.pop() if len(verdicts) == 1 else None

    def _document_validators(self) -> list[Any]:
        if self._validators is None:
            self._validators = [cls(self.root, format_checker=checker) for cls, checker in self._plan]
        return self._validators


def _holds_integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(_holds_integral_float(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_integral_float(item) for item in value.values())
    return False

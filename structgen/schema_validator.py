"""A ``jsonschema`` validator that means what structgen's grammars enforce.

Python's ``jsonschema`` reads ``pattern`` with Python's ``re``, divides doubles for
``multipleOf`` and does not assert the time formats without an optional package; the
grammar follows the JSON Schema drafts (ECMA-262 patterns, decimal multiples, RFC 3339
times). Generation re-checks approximated keywords, and ``validate_tool_call`` judges
calls, with this validator, so the two verdicts never disagree.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["decimal_multiple", "format_checker", "json_schema_validator"]


def json_schema_validator(schema: Any) -> Any:
    """A ``jsonschema`` validator for ``schema`` that means what the grammar
    enforces: ``pattern`` as ECMA-262 (``\\d`` is ASCII, ``$`` the very end, not
    Python's ``re``), and the formats asserted, ``date``, ``date-time`` and ``time`` by RFC
    3339 even where the optional rfc3339-validator is not installed."""
    from jsonschema import validators

    base = validators.validator_for(schema, default=validators.Draft202012Validator)
    return validators.extend(base, {"pattern": _pattern, "multipleOf": _multiple_of})(schema, format_checker=format_checker(base))


def format_checker(base: Any) -> Any:
    """``base``'s format checker with ``date``, ``date-time``, ``time`` and ``regex`` (an
    ECMA-262 pattern, such as ``[^]``, that Python's ``re`` may not read) as JSON Schema means them."""
    from jsonschema import FormatChecker

    checker = FormatChecker(())
    checker.checkers = {**base.FORMAT_CHECKER.checkers, "date-time": (_is_date_time, ()), "date": (_is_date, ()),
                        "time": (_is_time, ()), "regex": (_is_pattern, ())}
    return checker


def _multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
    """``multipleOf`` on the decimals written, as the draft means it and the grammar
    enforces it by default (``Options.multiple_of="decimal"``): jsonschema divides
    doubles, and ``19.99 / 0.01`` is ``1998.9999999999998``. A float is read as the
    shortest decimal that gives it back (what a writer writes for it); a
    ``Decimal`` (``json.loads(..., parse_float=Decimal)``) as itself."""
    from decimal import Decimal, InvalidOperation

    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "number") or not validator.is_type(step, "number"):
        return
    try:
        value = instance if isinstance(instance, Decimal) else Decimal(repr(instance) if isinstance(instance, float) else instance)
        divisor = step if isinstance(step, Decimal) else Decimal(repr(step) if isinstance(step, float) else step)
    except (InvalidOperation, ValueError):
        return
    if not decimal_multiple(value, divisor):
        yield ValidationError(f"{instance!r} is not a multiple of {step}")


def decimal_multiple(value: Any, step: Any) -> bool:
    """Whether the ``Decimal`` ``value`` is an integer times ``step``, exactly and
    for any exponent (``7E+300`` of 7: ``Decimal``'s own ``%`` would need 300
    digits of precision): ``m1 * 10**e1`` over ``m2 * 10**e2`` in integers, the
    power of ten reduced modulo ``m2``."""
    if not value.is_finite() or not step.is_finite() or step == 0:
        return False
    if value == 0:
        return True
    _, digits, e1 = value.as_tuple()
    _, step_digits, e2 = step.as_tuple()
    m1, m2 = int("".join(map(str, digits))), int("".join(map(str, step_digits)))
    if e1 >= e2:
        return (m1 % m2) * pow(10, e1 - e2, m2) % m2 == 0
    shift = e2 - e1  # m1 must hold m2 * 10**shift
    return shift <= len(digits) and m1 % (m2 * 10**shift) == 0


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@lru_cache(maxsize=1024)
def _ecma(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with ECMA-262's meaning; one the translator cannot read
    (a lookaround, a backreference: the grammar approximates those) as Python reads it."""
    from schema2grammar import ecma

    try:
        return re.compile(ecma.python_regex(pattern))
    except ecma.Unsupported:
        return re.compile(pattern)


def _is_pattern(instance: Any) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        _ecma(instance)
    except re.error:
        return False
    return True


_TIME = r"([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]|60)(?:\.[0-9]+)?(?:[zZ]|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))"
_DATE_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[tT]" + _TIME)


def _is_time(instance: Any) -> bool:
    """RFC 3339 ``full-time``; second 60 only where it is 23:59 in UTC (a leap second)."""
    if not isinstance(instance, str):
        return True
    found = re.fullmatch(_TIME, instance)
    return found is not None and _leap_second_ok(found.groups())


def _is_date_time(instance: Any) -> bool:
    """RFC 3339 ``date-time`` (``T``, not a space, between date and time)."""
    if not isinstance(instance, str):
        return True
    found = _DATE_TIME.fullmatch(instance)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups()[:3])
    return _real_date(year, month, day) and _leap_second_ok(found.groups()[3:])


def _is_date(instance: Any) -> bool:
    """RFC 3339 ``full-date``, years 0001-9999 as the grammar enforces them (and
    as Python and Pydantic read dates)."""
    if not isinstance(instance, str):
        return True
    found = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", instance, re.ASCII)
    return found is not None and _real_date(*(int(part) for part in found.groups()))


def _real_date(year: int, month: int, day: int) -> bool:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return year >= 1 and 1 <= month <= 12 and 1 <= day <= days[month - 1]


def _leap_second_ok(groups: tuple[str | None, ...]) -> bool:
    hour, minute, second, sign, offset_hour, offset_minute = groups
    if second != "60":
        return True
    minutes = int(hour or 0) * 60 + int(minute or 0)
    if sign is not None:
        offset = int(offset_hour or 0) * 60 + int(offset_minute or 0)
        minutes += -offset if sign == "+" else offset
    return minutes % 1440 == 23 * 60 + 59

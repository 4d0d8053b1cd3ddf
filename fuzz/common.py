"""What the four fuzzers share: the failure they raise, the errors the library may
raise, random JSON values, and a compile under a deadline.

Nothing here imports structgen at module level: the parent process (``run.py``)
only generates inputs, which needs no library; each fuzzer's checks run in a
worker process (``worker.py``) that imports what it needs.
"""

from __future__ import annotations

import json
import random
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

COMPILE_SECONDS = 20.0
"""The deadline of one compile (``structgen.engine.deadline``): past it a
``CompileTimeout``, which is no failure but a *slow* case, saved apart."""


class Failure(Exception):
    """What a check found wrong: ``kind`` names the oracle that failed (a short
    word, the case file's name starts with it), ``message`` says how, ``key``
    tells failures of one kind apart (the keyword jsonschema refused, the status
    code...): a run saves one case per (fuzzer, kind, key)."""

    def __init__(self, kind: str, message: str, detail: Any = None, key: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.detail = detail
        self.key = key


class Slow(Exception):
    """A compile that ran past its deadline: no failure, but worth keeping."""


def compile_errors() -> tuple[type[BaseException], ...]:
    """The errors a compile (a schema, a regex, a lark grammar) may raise: the
    library's own, as its docs name them (docs/limits.md, docs/regex.md,
    docs/grammar.md). Anything else (``KeyError``, ``TypeError``,
    ``RecursionError``, a plain ``ValueError``...) is a bug."""
    from schema2grammar import SchemaError
    from structgen.engine.lr import GrammarTooLargeError
    from structgen.engine.regex import RegexError
    from structgen.lark_rules import GrammarError

    return (SchemaError, GrammarError, RegexError, GrammarTooLargeError)


def step_errors() -> tuple[type[BaseException], ...]:
    """The errors one step of parsing may raise (``AmbiguityLimitError``: a GLR
    step past ``MAX_STEP_WORK``, docs/limits.md)."""
    from structgen.engine.stack import AmbiguityLimitError

    return (AmbiguityLimitError,)


def compiled(build: Callable[[], T], what: str, seconds: float = COMPILE_SECONDS) -> T | None:
    """``build()`` under a deadline: its value; None where it raised one of the
    library's errors; ``Slow`` past the deadline; ``Failure("exception")`` for
    any other exception."""
    from structgen.engine.deadline import CompileTimeout, Deadline, run_within

    try:
        return run_within(Deadline(seconds), build)
    except CompileTimeout as exc:
        raise Slow(f"{what}: {exc}") from None
    except compile_errors():
        return None
    except Exception as exc:  # noqa: BLE001 (the oracle: only the library's own errors)
        raise Failure("exception", f"{what} raised {type(exc).__name__}: {exc}"[:2000],
                      {"traceback": traceback.format_exc()}) from exc


def stepped(step: Callable[[], T], what: str) -> T | None:
    """``step()`` (``accepts``, a mask, a token): its value; None where it raised a
    documented step error; ``Failure("exception")`` for anything else."""
    try:
        return step()
    except step_errors():
        return None
    except Exception as exc:  # noqa: BLE001
        raise Failure("exception", f"{what} raised {type(exc).__name__}: {exc}"[:2000],
                      {"traceback": traceback.format_exc()}) from exc


# -- random JSON values ---------------------------------------------------------

STRINGS = ["", "a", "ab", "abc", "x y", "0", "-1", "1.5", "true", "null", "é", "日本", "\n", "\"", "\\",
           "2024-02-29", "2023-02-29", "12:30:00Z", "2024-01-01T00:00:00Z", "a@b.co", "http://x.org/p",
           "127.0.0.1", "::1", "00000000-0000-0000-0000-000000000000", "P1D", "aaaaaaaaaaaaaaaaaaaaaaaaa"]
NUMBERS = [0, 1, -1, 2, 3, 7, 10, 100, -100, 0.5, -0.5, 1.5, 2.0, 1e-7, 1e20, 123456789012345678901234567890,
           -9007199254740993, 0.1, 3.14, 1e308, -1e308, 5e-324]
KEYS = ["a", "b", "c", "name", "id", "x", "type", "items", "", "é", "A1", "aa", "foo", "bar"]


def random_json(rng: random.Random, depth: int = 3) -> Any:
    """A small random JSON value (finite numbers only: JSON has no others)."""
    roll = rng.random()
    if depth <= 0 or roll < 0.55:
        kind = rng.randrange(6)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return rng.choice(NUMBERS) if rng.random() < 0.5 else rng.randint(-20, 20)
        if kind == 3:
            return round(rng.uniform(-50, 50), rng.randint(0, 3))
        return rng.choice(STRINGS) if rng.random() < 0.7 else random_text(rng, rng.randint(0, 6))
    if roll < 0.78:
        return [random_json(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): random_json(rng, depth - 1) for _ in range(rng.randint(0, 4))}


def random_text(rng: random.Random, length: int, alphabet: str = "ab0 -_.xé") -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def json_ok(value: Any) -> bool:
    """Whether ``value`` survives a JSON round trip as it is (case inputs are JSON)."""
    try:
        return json.loads(json.dumps(value)) == value
    except (ValueError, TypeError, RecursionError):
        return False


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses duplicate keys (``DuplicateKey``) and
    non-finite numbers (``ValueError``)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise DuplicateKey(key)
            seen[key] = value
        return seen

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


class DuplicateKey(ValueError):
    pass


def shown(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""``structgen.json_scan.JsonScan`` as a JSON syntax scanner, against independent oracles.

With the schema ``{}`` (no constraint) the scanner only follows JSON syntax, so:

- valid texts (``json.dumps`` of random nested values, with random whitespace, every
  escape spelling, non-ASCII characters raw and escaped, numbers in every spelling
  RFC 8259 allows) fed byte by byte or in random chunks never get an error, and the
  scanner reaches its end state exactly at the value's last byte;
- for any byte string, the index of the first error the scanner reports equals the
  first byte at which no valid JSON text can go on, as a small recursive-descent
  parser written here finds it (it raises ``_Incomplete`` when the input ends before
  the text does: a prefix some completion makes valid). Its UTF-8 checks use
  Python's incremental UTF-8 decoder; a key written twice in one object (by its
  decoded value) counts as invalid, as the scanner says it is.

A last test: with a real schema, a value ``jsonschema`` accepts never gets an error
(the scanner's schema checks are necessary conditions only).
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import jsonschema
import pytest

from structgen.json_scan import END, NUMBER, JsonScan

WS = b" \t\n\r"


# -- the oracle: a recursive-descent parser that tells "ends too early" from "wrong byte"


class _Incomplete(Exception):
    """The input ended where the text could still go on."""


class _Bad(Exception):
    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.at = at


class _Oracle:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def peek(self, i: int) -> int:
        if i >= len(self.data):
            raise _Incomplete
        return self.data[i]

    def ws(self, i: int) -> int:
        while i < len(self.data) and self.data[i] in WS:
            i += 1
        return i

    def value(self, i: int) -> int:
        i = self.ws(i)
        b = self.peek(i)
        if b == ord("{"):
            return self.obj(i + 1)
        if b == ord("["):
            return self.arr(i + 1)
        if b == ord('"'):
            return self.string(i + 1)[0]
        if b == ord("-") or ord("0") <= b <= ord("9"):
            return self.number(i)
        for word in (b"true", b"false", b"null"):
            if b == word[0]:
                for k, expected in enumerate(word):
                    if self.peek(i + k) != expected:
                        raise _Bad(i + k)
                return i + len(word)
        raise _Bad(i)

    def obj(self, i: int) -> int:
        keys: set[str] = set()
        i = self.ws(i)
        if self.peek(i) == ord("}"):
            return i + 1
        while True:
            i = self.ws(i)
            if self.peek(i) != ord('"'):
                raise _Bad(i)
            i, key = self.string(i + 1)
            if key in keys:
                raise _Bad(i - 1)  # the closing quote of the repeated key
            keys.add(key)
            i = self.ws(i)
            if self.peek(i) != ord(":"):
                raise _Bad(i)
            i = self.ws(self.value(i + 1))
            b = self.peek(i)
            if b == ord("}"):
                return i + 1
            if b != ord(","):
                raise _Bad(i)
            i += 1

    def arr(self, i: int) -> int:
        i = self.ws(i)
        if self.peek(i) == ord("]"):
            return i + 1
        while True:
            i = self.ws(self.value(i))
            b = self.peek(i)
            if b == ord("]"):
                return i + 1
            if b != ord(","):
                raise _Bad(i)
            i += 1

    def string(self, i: int) -> tuple[int, str]:
        """From after the opening quote: the index after the closing one, and the text."""
        start = i
        pending = b""  # the bytes of a multi-byte character so far
        while True:
            b = self.peek(i)
            if pending or b >= 0x80:
                pending += bytes([b])
                if _decodes(pending):
                    pending = b""
                elif not _utf8_viable(pending):
                    raise _Bad(i)
                i += 1
                continue
            if b == ord('"'):
                return i + 1, json.loads(self.data[start - 1:i + 1])
            if b < 0x20:
                raise _Bad(i)
            if b == ord("\\"):
                e = self.peek(i + 1)
                if e not in b'"\\/bfnrtu':
                    raise _Bad(i + 1)
                if e == ord("u"):
                    for k in range(4):
                        if self.peek(i + 2 + k) not in b"0123456789abcdefABCDEF":
                            raise _Bad(i + 2 + k)
                    i += 6
                else:
                    i += 2
                continue
            i += 1

    def number(self, i: int) -> int:
        """``-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?``; the end of the
        input after a complete number is the end of the text, not "incomplete"."""
        n = len(self.data)

        def digits(j: int, least: int) -> int:
            k = j
            while k < n and 48 <= self.data[k] <= 57:
                k += 1
            if k - j < least:
                if k >= n:
                    raise _Incomplete
                raise _Bad(k)
            return k

        if self.peek(i) == ord("-"):
            i += 1
        b = self.peek(i)
        if b == ord("0"):
            i += 1
        elif 49 <= b <= 57:
            i = digits(i, 1)
        else:
            raise _Bad(i)
        if i < n and self.data[i] == ord("."):
            i = digits(i + 1, 1)
        if i < n and self.data[i] in b"eE":
            i += 1
            if i < n and self.data[i] in b"+-":
                i += 1
            i = digits(i, 1)
        return i

    def text(self) -> int | None:
        """The first byte no valid text goes on with (None: every byte is fine),
        and, as an attribute, whether the whole input is one complete text."""
        self.complete = False
        try:
            i = self.ws(self.value(0))
        except _Incomplete:
            return None
        except _Bad as bad:
            return bad.at
        self.complete = True
        return None if i == len(self.data) else i


def _decodes(sequence: bytes) -> bool:
    try:
        sequence.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def _utf8_viable(sequence: bytes) -> bool:
    """Whether some bytes after ``sequence`` make it UTF-8 (Python's strict decoder):
    a character has at most 4 bytes, its later ones 0x80-0xBF."""
    return _decodes(sequence) or len(sequence) < 4 and any(_utf8_viable(sequence + bytes([b])) for b in range(0x80, 0xC0))


def oracle_error(data: bytes) -> int | None:
    return _Oracle(data).text()


def oracle_complete(data: bytes) -> bool:
    o = _Oracle(data)
    return o.text() is None and o.complete


def scanner_error(data: bytes, chunks: list[int] | None = None) -> tuple[int | None, JsonScan]:
    """The index the scanner reports first, fed in the given chunk sizes (default: one call)."""
    scan = JsonScan({})
    sizes = chunks or [len(data)]
    at = 0
    for size in sizes:
        found = scan.feed(data[at:at + size])
        if found is not None:
            return at + found[0], scan
        at += size
    return None, scan


# -- random valid texts


ALPHABET = ['a', 'Z', ' ', '"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\x00', '\x1f', '\x7f', 'é', 'ß', '\u2028',
            '€', '\uffff', '😀', '\U0010ffff', '\ud800']  # a lone surrogate: JSON may write it as an escape


def random_string(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(6)))


def random_number(rng: random.Random) -> str:
    """Any spelling RFC 8259 allows."""
    sign = rng.choice(["", "-"])
    whole = rng.choice(["0", str(rng.randrange(1, 10)), str(rng.randrange(1, 10**12))])
    frac = rng.choice(["", "", "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 5)))])
    exp = rng.choice(["", "", rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 400)).zfill(rng.randrange(1, 4))])
    return sign + whole + frac + exp


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 4 and roll < 0.2:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 4 and roll < 0.4:
        return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    if roll < 0.6:
        return random_string(rng)
    if roll < 0.8:
        return _Number(random_number(rng))
    return rng.choice([True, False, None])


class _Number:
    """A number in a chosen spelling (written as is by ``spell``)."""

    def __init__(self, text: str) -> None:
        self.text = text


def spell(rng: random.Random, value: Any) -> str:
    """JSON text of ``value`` with random whitespace, escapes and separators."""
    def gap() -> str:
        return "".join(rng.choice(" \t\n\r") for _ in range(rng.choice([0, 0, 0, 1, 2])))

    if isinstance(value, _Number):
        return value.text
    if isinstance(value, str):
        return spell_string(rng, value)
    if isinstance(value, list):
        if not value:
            return "[" + gap() + "]"
        return "[" + ",".join(gap() + spell(rng, v) + gap() for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{" + gap() + "}"
        return "{" + ",".join(gap() + spell_string(rng, k) + gap() + ":" + gap() + spell(rng, v) + gap()
                              for k, v in value.items()) + "}"
    return json.dumps(value)


def spell_string(rng: random.Random, text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        choices = [json.dumps(char, ensure_ascii=rng.random() < 0.5)[1:-1]]
        if code <= 0xFFFF:
            choices.append(rng.choice(["\\u%04x", "\\u%04X"]) % code)
        else:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            choices.append(f"\\u{high:04x}\\u{low:04X}")
        if char == "/":
            choices.append("\\/")
        if 0xD800 <= code <= 0xDFFF:
            choices = [f"\\u{code:04x}"]  # no raw spelling
        out.append(rng.choice(choices))
    return '"' + "".join(out) + '"'


def valid_texts(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        value = random_value(rng)
        if rng.random() < 0.6:  # mostly containers: tool-call arguments are objects
            value = {random_string(rng): value} if rng.random() < 0.5 else [value]
        lead = "".join(rng.choice(" \n") for _ in range(rng.randrange(2)))
        texts.append((lead + spell(rng, value)).encode())
    return texts


VALID = valid_texts(20240601, 400)


def test_the_oracle_reads_the_valid_texts_as_python_does() -> None:
    """The generated texts are JSON (``json.loads``), and the oracle says so too."""
    for text in VALID:
        json.loads(text)
        assert oracle_complete(text), text


def _last_significant(text: bytes) -> int:
    return len(text.rstrip(WS)) - 1


def _ended(scan: JsonScan) -> bool:
    """A top-level number has no byte that ends it: it ends with the input."""
    return scan.mode == END or scan.mode == NUMBER and scan.lexeme[-1:].isdigit()


@pytest.mark.parametrize("tail", [b"", b" \n"])
def test_valid_texts_byte_by_byte_reach_the_end_exactly_at_their_last_byte(tail: bytes) -> None:
    for text in VALID:
        data = text + tail
        scan = JsonScan({})
        last = _last_significant(data)
        for index, byte in enumerate(data):
            assert scan.feed_byte(byte) is None, (data, index)
            if index < last:
                assert scan.mode != END, (data, index)
            elif index == last and data[last] in b"]}\"el":  # a closing byte ends the value at once
                assert scan.mode == END, (data, index)
        assert _ended(scan), data
        if tail:
            assert scan.mode == END


def test_valid_texts_in_random_chunks_get_no_error() -> None:
    rng = random.Random(7)
    for text in VALID:
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randrange(0, 6)))) if len(text) > 1 else []
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, len(text)])]
        found, scan = scanner_error(text, sizes)
        assert found is None, text
        assert _ended(scan)


def test_truncations_of_valid_texts_are_no_error_and_not_the_end() -> None:
    rng = random.Random(11)
    for text in VALID:
        cut = rng.randrange(len(text))
        prefix = text[:cut]
        found, scan = scanner_error(prefix)
        assert found is None, prefix
        assert oracle_error(prefix) is None
        if cut <= _last_significant(text):
            assert scan.mode != END, prefix


CORRUPTIONS = b'{}[]:,"\\ \t\x00\x1f\x7f0123456789-+.eEtfnulrsabx/\x80\xbf\xc0\xc2\xe0\xed\xf0\xf4\xf5\xff'


def corrupted(seed: int, count: int) -> list[bytes]:
    """Valid texts with one byte replaced, inserted or deleted at a random place
    (then cut short half of the time)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = bytearray(rng.choice(VALID))
        at = rng.randrange(len(text))
        how = rng.randrange(3)
        if how == 0:
            text[at] = rng.choice(CORRUPTIONS)
        elif how == 1:
            text.insert(at, rng.choice(CORRUPTIONS))
        elif len(text) > 1:
            del text[at]
        if rng.random() < 0.5:
            text = text[:rng.randrange(at, len(text) + 1)]
        out.append(bytes(text))
    return out


CORRUPTED = corrupted(99, 3000)


def test_corrupted_texts_fail_at_the_first_byte_no_valid_text_goes_on_with() -> None:
    errors = 0
    for data in CORRUPTED:
        expected = oracle_error(data)
        found, _ = scanner_error(data)
        assert found == expected, (data, found, expected)
        errors += expected is not None
    assert errors > 1000  # most corruptions are errors: the comparison is not vacuous


def test_corrupted_texts_fed_byte_by_byte_fail_at_the_same_byte() -> None:
    for data in CORRUPTED[:600]:
        found, _ = scanner_error(data, [1] * len(data))
        assert found == oracle_error(data), data


@pytest.mark.parametrize("data, at", [
    (b"01", 1), (b"-", None), (b"-a", 1), (b"1.", None), (b"1.e", 2), (b"1e+", None), (b"1e+-", 3), (b".5", 0),
    (b"[1,]", 3), (b"[,1]", 1), (b'{"a" 1}', 5), (b'{"a":1,}', 7), (b'{"a":1 "b":2}', 7), (b"[1}", 2),
    (b'{"a":1]', 6), (b"tru", None), (b"trUe", 2), (b"nul", None), (b'"\\x"', 2), (b'"\\u12G4"', 5),
    (b'"a\nb"', 2), (b'"\xc3"', 2), (b'"\xc3', None), (b'"\xc0\x80"', 1), (b'"\xed\xa0\x80"', 2),
    (b'"\xf4\x90\x80\x80"', 2), (b'"\xe2\x82"', 3), (b"[] []", 3), (b"{} x", 3), (b'{"a":1,"a":2}', 9),
    (b'{"a":1,"\\u0061":2}', 14), (b"[[[[", None), (b"[1 2]", 3), (b"\xef\xbb\xbf{}", 0),
])
def test_hand_picked_texts(data: bytes, at: int | None) -> None:
    """Cases checked by hand, for the oracle and the scanner alike."""
    assert oracle_error(data) == at
    assert scanner_error(data)[0] == at


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "count": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "é"]}},
        "mode": {"const": "fast"},
        "nested": {"type": "object", "properties": {"x": {"type": ["number", "null"]}}, "required": ["x"]},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_values_jsonschema_accepts_get_no_error() -> None:
    """The schema's checks are necessary conditions: never an error on a valid value."""
    rng = random.Random(3)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    accepted = 0
    pools: dict[str, list[Any]] = {
        "name": ["", "abc", "é😀\n", "12345678", "123456789"],
        "count": [0, 3, 10**20, -1, 2.0, "3"],
        "tags": [[], ["a", "é"], ["b", "b", "a"], ["c"]],
        "mode": ["fast", "slow"],
        "nested": [{"x": 1.5}, {"x": None}, {}, {"x": "s"}],
        "other": [1],
    }
    for _ in range(1500):
        keys = ["name"] + rng.sample(list(pools)[1:], rng.randrange(5))
        rng.shuffle(keys)
        value: dict[str, Any] = {key: rng.choice(pools[key]) for key in keys}
        if not validator.is_valid(value):
            continue
        accepted += 1
        text = spell(rng, {k: _Number(json.dumps(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                           for k, v in value.items()}).encode()
        scan = JsonScan(SCHEMA)
        assert scan.feed(text) is None, text
        assert scan.mode == END
    assert accepted > 100

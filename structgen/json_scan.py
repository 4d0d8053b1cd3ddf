"""``JsonScan``: JSON text followed byte by byte, with the schema's necessary conditions.

The streaming validator's second lane (docs/tool_calls.md). It knows where in
the document each byte falls (which property or item, key or value), checks
JSON syntax exactly, and asks ``schema_places`` whether the value being written
can still be valid, in any property order. O(1) work a byte outside keys and
constant-constrained strings, O(properties) inside those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from structgen.json import syntax
from structgen.schema_places import Places, spelled
from structgen.validation import ToolCallError, pointer_token

WHITESPACE = b" \t\n\r"

# what the next byte may be
VALUE, KEY_OR_CLOSE, KEY, COLON, COMMA_OR_CLOSE, VALUE_OR_CLOSE, END, STRING, NUMBER, LITERAL = range(10)

_LITERALS = {ord("t"): (b"true", True), ord("f"): (b"false", False), ord("n"): (b"null", None)}
_KIND_OF_FIRST = {ord('"'): "string", ord("{"): "object", ord("["): "array", ord("t"): "boolean", ord("f"): "boolean", ord("n"): "null"}


@dataclass
class Frame:
    """An open object or array: its schema, the keys written, the item count."""

    is_object: bool
    schema: Any
    pointer: str
    keys: set[str] = field(default_factory=set)
    key: str = ""
    count: int = 0


class JsonScan:
    """Follows one JSON value; ``feed`` returns the error a byte makes certain."""

    def __init__(self, schema: Any) -> None:
        self.places = Places(schema)
        self.frames: list[Frame] = []
        self.mode = VALUE
        self.place: Any = schema  # the conditions on the value being written
        self.pointer = ""  # where that value is
        self.lexeme = bytearray()  # the string (without quotes), number or literal so far
        self.is_key = False
        self.escaped = False  # the string so far has an escape (its spelling may differ)
        self.string_state = syntax.PLAIN  # where inside a character the string is (``structgen.json.syntax``)
        self.number_state = syntax.NUMBER_START
        self.literal: tuple[bytes, Any] = (b"", None)

    def feed(self, data: bytes) -> tuple[int, ToolCallError] | None:
        """Take bytes; at the first that no valid text can follow, its index and why."""
        for index, byte in enumerate(data):
            error = self.feed_byte(byte)
            if error is not None:
                return index, error
        return None

    def feed_byte(self, byte: int) -> ToolCallError | None:
        mode = self.mode
        if mode == STRING:
            return self._string_byte(byte)
        if mode == NUMBER:
            following = syntax.number_next(self.number_state, byte)
            if following != syntax.ERROR:
                self.number_state = following
                self.lexeme.append(byte)
                return None
            if not syntax.number_ended(self.number_state):
                return self._syntax(byte, "a digit")
            error = self._finish_scalar(json.loads(self.lexeme))
            return error if error is not None else self.feed_byte(byte)
        if mode == LITERAL:
            spelling, value = self.literal
            if byte != spelling[len(self.lexeme)]:
                return self._syntax(byte, f"{spelling.decode()!r}")
            self.lexeme.append(byte)
            return self._finish_scalar(value) if len(self.lexeme) == len(spelling) else None
        if byte in WHITESPACE:
            return None
        if mode in (VALUE, VALUE_OR_CLOSE):
            if mode == VALUE_OR_CLOSE and byte == ord("]"):
                return self._close(byte)
            return self._start_value(byte)
        if mode in (KEY, KEY_OR_CLOSE):
            if mode == KEY_OR_CLOSE and byte == ord("}"):
                return self._close(byte)
            if byte != ord('"'):
                return self._syntax(byte, "a property name in double quotes")
            frame = self.frames[-1]
            if not self.places.key_ok(frame.schema, b"", False, frame.keys):
                return self._unknown_key(frame, b"")
            self._start_string(is_key=True)
            return None
        if mode == COLON:
            if byte != ord(":"):
                return self._syntax(byte, "':'")
            frame = self.frames[-1]
            self._expect_value(self.places.child(frame.schema, frame.key), f"{frame.pointer}/{pointer_token(frame.key)}", VALUE)
            return None
        if mode == COMMA_OR_CLOSE:
            frame = self.frames[-1]
            if byte in b"}]":
                return self._close(byte)
            if byte != ord(","):
                return self._syntax(byte, "',' or a closing bracket")
            if frame.is_object:
                if not self.places.key_ok(frame.schema, b"", False, frame.keys):
                    return self._error(frame.pointer, "additionalProperties", sorted(frame.keys), ",",
                                       f"no more arguments are allowed in {frame.pointer or 'the arguments'}")
                self.mode = KEY
            else:
                self._expect_value(self.places.item(frame.schema, frame.count), f"{frame.pointer}/{frame.count}", VALUE)
            return None
        return self._syntax(byte, "nothing after the arguments' closing bracket")

    def _start_value(self, byte: int) -> ToolCallError | None:
        kind = _KIND_OF_FIRST.get(byte, "number" if byte == ord("-") or 48 <= byte <= 57 else "")
        if not kind:
            return self._syntax(byte, "a value")
        if not self.places.kind_ok(self.place, kind):
            return self.refusal(kind, f"{_at(self.pointer)} cannot be {_a(kind)}")
        if kind == "object" or kind == "array":
            self.frames.append(Frame(kind == "object", self.place, self.pointer))
            if kind == "object":
                self.mode = KEY_OR_CLOSE
            else:
                self._expect_value(self.places.item(self.place, 0), f"{self.pointer}/0", VALUE_OR_CLOSE)
        elif kind == "string":
            self._start_string(is_key=False)
        elif kind == "number":
            self.mode, self.number_state = NUMBER, syntax.number_next(syntax.NUMBER_START, byte)
            self.lexeme = bytearray([byte])
        else:
            self.mode, self.literal, self.lexeme = LITERAL, _LITERALS[byte], bytearray([byte])
        return None

    def _start_string(self, is_key: bool) -> None:
        self.mode, self.is_key, self.escaped, self.string_state = STRING, is_key, False, syntax.PLAIN
        self.lexeme = bytearray()

    def _string_byte(self, byte: int) -> ToolCallError | None:
        state = self.string_state
        following = syntax.string_next(state, byte)
        if following == syntax.ERROR:
            return self._syntax(byte, syntax.string_expected(state, byte))
        if following == syntax.CLOSED:
            return self._close_string()
        self.string_state = following
        self.lexeme.append(byte)
        if byte == ord("\\"):
            self.escaped = True
        if self.escaped:
            return None
        written = bytes(self.lexeme)
        if self.is_key:
            frame = self.frames[-1]
            if not self.places.key_ok(frame.schema, written, False, frame.keys):
                return self._unknown_key(frame, written)
        elif not self.places.string_prefix_ok(self.place, written):
            return self.refusal(written.decode(errors="replace"), f"{_at(self.pointer)} cannot begin with {_quoted(written)}")
        return None

    def _close_string(self) -> ToolCallError | None:
        text = json.loads(b'"' + self.lexeme + b'"')
        if not self.is_key:
            return self._finish_scalar(text)
        frame = self.frames[-1]
        if text in frame.keys:
            return self._error(f"{frame.pointer}/{pointer_token(text)}", "json", "each key once", text,
                               f"the key {json.dumps(text, ensure_ascii=False)} is written twice")
        if not self.places.key_ok(frame.schema, spelled(text), True, frame.keys):
            return self._unknown_key(frame, bytes(self.lexeme))
        frame.keys.add(text)
        frame.key = text
        self.mode = COLON
        return None

    def _finish_scalar(self, value: Any) -> ToolCallError | None:
        if not self.places.scalar_ok(self.place, value):
            return self.refusal(value, f"{_at(self.pointer)} cannot be {json.dumps(value, ensure_ascii=False)}")
        self._after_value()
        return None

    def _close(self, byte: int) -> ToolCallError | None:
        frame = self.frames[-1]
        if frame.is_object != (byte == ord("}")):
            return self._syntax(byte, "'}'" if frame.is_object else "']'")
        if frame.is_object:
            missing = self.places.missing(frame.schema, frame.keys)
            if missing:
                names = ", ".join(json.dumps(n, ensure_ascii=False) for n in missing)
                return self._error(f"{frame.pointer}/{pointer_token(missing[0])}", "required", missing, None,
                                   f"the required argument {names} is missing in {frame.pointer or 'the arguments'}")
        self.frames.pop()
        self.pointer = frame.pointer
        self._after_value()
        return None

    def _after_value(self) -> None:
        if not self.frames:
            self.mode = END
            return
        frame = self.frames[-1]
        frame.count += 1
        self.mode = COMMA_OR_CLOSE

    def _expect_value(self, place: Any, pointer: str, mode: int) -> None:
        self.place, self.pointer, self.mode = place, pointer, mode

    def refusal(self, got: Any, message: str) -> ToolCallError:
        """The error for a value refused here, naming the keywords that constrain it."""
        found = self.places.constraints(self.place)
        keyword = next(iter(found), "schema")
        rules = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in found.items())
        return self._error(self.pointer, keyword, found, got, f"{message} (it must satisfy {rules})" if rules else message)

    def _unknown_key(self, frame: Frame, written: bytes) -> ToolCallError:
        names = [n for n in self.places.names(frame.schema) if n not in frame.keys]
        allowed = f"; still allowed: {', '.join(names)}" if names else "; no more are allowed"
        begins = f"is named {_quoted(written)}..." if written else "can come"
        return self._error(f"{frame.pointer}/{pointer_token(written.decode(errors='replace'))}", "additionalProperties",
                           names, written.decode(errors="replace"), f"no argument {begins}{allowed}")

    def _syntax(self, byte: int, expected: str) -> ToolCallError:
        got = chr(byte) if 0x20 <= byte < 0x7F else f"byte 0x{byte:02x}"
        return self._error(self.pointer, "json", expected, got, f"not JSON: expected {expected}, got {got!r}")

    @staticmethod
    def _error(pointer: str, keyword: str, expected: Any, got: Any, message: str) -> ToolCallError:
        return ToolCallError(pointer, keyword, expected, got, message[0].upper() + message[1:] + ".")

    def spelled_freely(self, byte: int) -> bool:
        """Whether ``byte`` falls where a valid value may be spelled in a way the
        grammar does not take (an escape in a string, a fraction or exponent in a
        number, a constant holding numbers or containers): a refusal there is not final."""
        if self.mode == STRING and (self.escaped or byte == ord("\\")):
            return True
        if self.mode == NUMBER and (self.number_state >= syntax.DOT or byte in b".eE"):
            return True
        places = [self.place] + [frame.schema for frame in self.frames]
        return any(self.places.spelling_varies(place) for place in places)


def _at(pointer: str) -> str:
    return f"argument {pointer}" if pointer else "the arguments"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _quoted(written: bytes) -> str:
    return '"' + written.decode(errors="replace")



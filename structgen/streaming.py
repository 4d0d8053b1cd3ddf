"""``ToolCallValidator``: a tool call's arguments checked while they stream in.

The arguments are followed in two lanes (docs/tool_calls.md). The exact lane is
the tool schema's grammar (the same translation generation uses) fed byte by
byte: while the call keeps the schema's declared property order, it stops at
the first byte no valid text can follow. A refusal there is final unless the
byte is one the grammar is narrower than JSON Schema about — a key out of
declared order, whitespace it does not take, an escape, a fraction in an
integer, a constant spelled another way, anything inside an object whose
``anyOf`` branch the grammar may have picked by key order; then the call goes on in the second
lane, ``JsonScan``, which checks JSON syntax and the schema's necessary
conditions in any order. So ``feed`` never stops a call that ``finish`` (and
``validate_tool_call``) would accept.
"""

from __future__ import annotations

from structgen.byte_matcher import ByteMatcher
from structgen.grammar import Grammar
from structgen.json_scan import COMMA_OR_CLOSE, END, KEY, KEY_OR_CLOSE, NUMBER, STRING, WHITESPACE, JsonScan
from structgen.lark_rules import GrammarError
from structgen.tool_calls import Call, Tool, ToolSet
from structgen.validation import ToolCallError, ValidationResult, check_call, not_an_object, unknown_tool


class ToolCallValidator:
    """Streams one call at a time: ``start(name)`` (or ``name=``), ``feed(chunk)``
    with argument text as it arrives, ``finish()``. Grammars are built once per
    tool and kept for the next calls."""

    def __init__(self, tools: object, name: str | None = None) -> None:
        self.toolset = ToolSet.read(tools)
        self._grammars: dict[str, Grammar | None] = {}
        self._tool: Tool | None = None
        self._result: ValidationResult | None = None
        self._text = bytearray()
        self._exact: ByteMatcher | None = None
        self._scan: JsonScan | None = None
        self._started = False  # a byte other than leading whitespace has come (to the exact lane)
        self._opened = False  # a byte other than leading whitespace has come
        self._call_id: str | None = None
        self._name: str | None = None
        if name is not None:
            self.start(name)

    def start(self, name: str, call_id: str | None = None) -> ValidationResult | None:
        """Begin a call to tool ``name``: None, or the invalid result when no tool has that name."""
        self._name, self._call_id, self._text, self._started, self._opened = name, call_id, bytearray(), False, False
        self._tool = self.toolset.tools.get(name)
        self._result = None
        self._exact = self._scan = None
        if self._tool is None:
            self._result = ValidationResult(name, (unknown_tool(self.toolset, name),), call_id=call_id)
            return self._result
        grammar = self.grammar(name)
        if grammar is None:
            self._scan = JsonScan(self._tool.schema)
        else:
            self._exact = ByteMatcher(grammar)
        return None

    def grammar(self, name: str) -> Grammar | None:
        """The grammar of tool ``name``'s arguments (None when its schema has
        none: the call is then followed by ``JsonScan`` alone)."""
        if name not in self._grammars:
            from schema2grammar import SchemaError

            try:
                self._grammars[name] = Grammar.from_json_schema(self.toolset.tools[name].schema)
            except (SchemaError, GrammarError):
                self._grammars[name] = None
        return self._grammars[name]

    @property
    def offset(self) -> int:
        """Bytes of arguments fed so far."""
        return len(self._text)

    def feed(self, chunk: str | bytes) -> ValidationResult | None:
        """Take the next piece of the arguments' text. None while it can still
        become a valid call; otherwise the (falsy) result, whose ``offset`` is the
        byte at which that became certain. Once invalid, the same result again."""
        if self._result is not None:
            return self._result
        if self._tool is None:
            raise RuntimeError("call start(name) before feed()")
        data = chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
        base = len(self._text)
        self._text += data
        if not self._opened:
            rest = data.lstrip(WHITESPACE)
            self._opened = bool(rest)
            if rest and rest[0] in _NOT_OBJECTS:  # a value that is no object: arguments are one, whatever the schema allows
                return self._stop(base + len(data) - len(rest), not_an_object(_NOT_OBJECTS[rest[0]]))
        index = 0
        if self._exact is not None:
            while not self._started and index < len(data) and data[index] in WHITESPACE:
                index += 1
            self._started = self._started or index < len(data)
            index += self._exact.accept(data[index:])
            if index == len(data):
                return None
            error = self._leave_exact_lane(base + index)
            if error is not None:
                return self._stop(base + index, error)
        assert self._scan is not None  # the exact lane hands over to the scan
        stopped = self._scan.feed(data[index:])
        if stopped is not None:
            return self._stop(base + index + stopped[0], stopped[1])
        return None

    def finish(self) -> ValidationResult:
        """The verdict on the whole call (``validate_tool_call``'s)."""
        if self._result is not None:
            return self._result
        if self._tool is None:
            raise RuntimeError("call start(name) before finish()")
        try:
            text = self._text.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = ToolCallError("", "json", "UTF-8 text", f"byte 0x{self._text[exc.start]:02x}",
                                  f"The arguments are not UTF-8 text (byte {exc.start}).")
            return self._stop(exc.start, error)
        self._result = check_call(self.toolset, Call(self._name, text=text, id=self._call_id))
        return self._result

    def _leave_exact_lane(self, offset: int) -> ToolCallError | None:
        """The grammar refused the byte at ``offset``: the error when that is final,
        else None, with the scan caught up to go on from that byte."""
        assert self._tool is not None
        scan = JsonScan(self._tool.schema)
        caught_up = scan.feed(bytes(self._text[:offset]))
        if caught_up is not None:  # the grammar took what JSON does not: never expected
            return caught_up[1]
        self._exact, self._scan = None, scan
        byte = self._text[offset]
        if _may_differ_in_order_or_spelling(scan, byte):
            return None  # the scan decides, from this byte on
        written = bytes(scan.lexeme + bytes([byte])).decode(errors="replace") if scan.mode in (STRING, NUMBER) else chr(byte)
        error = scan.feed_byte(byte)
        if error is None:  # the scan sees nothing wrong yet: name what the grammar enforced here
            where = f"argument {scan.pointer}" if scan.pointer else "the arguments"
            error = scan.refusal(written, f"{where} cannot go on with {written!r}")
        return error

    def _stop(self, offset: int, error: ToolCallError) -> ValidationResult:
        self._result = ValidationResult(self._name, (error,), call_id=self._call_id, offset=offset)
        return self._result


_NOT_OBJECTS: dict[int, object] = {ord('"'): "", ord("["): [], ord("t"): True, ord("f"): False, ord("n"): None,
                                   **{ord(c): 0 for c in "-0123456789"}}
"""First bytes of JSON values that are no object, with a value of their kind."""


def _may_differ_in_order_or_spelling(scan: JsonScan, byte: int) -> bool:
    """Whether a refusal of ``byte`` may be the grammar's declared order or
    canonical spelling rather than the schema: whitespace between values, an
    object key (or the comma before one), anything inside an object whose
    ``anyOf`` branch the grammar may have picked by key order, a freely spelled
    value (a number constant's first byte too: ``5e-1`` is ``0.5``)."""
    mode = scan.mode
    if any(frame.is_object and scan.places.has_alternatives(frame.schema) for frame in scan.frames):
        return True
    if byte in WHITESPACE and mode != STRING:
        return True
    if mode in (KEY, KEY_OR_CLOSE) and byte != ord("}"):
        return True
    if mode == STRING and scan.is_key:
        return True
    if mode == COMMA_OR_CLOSE and byte == ord(",") and scan.frames and scan.frames[-1].is_object:
        return True
    return mode != END and scan.spelled_freely(byte)

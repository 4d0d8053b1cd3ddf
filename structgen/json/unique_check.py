"""``uniqueItems`` as a ``structgen.checks.TextCheck``: the compiled
``UniqueItems`` (its state is the text's ``Scan``) behind the matcher's protocol."""

from __future__ import annotations

from typing import Any

from structgen.checks import REFUSED
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.json.unique_items import DUP, Scan, SearchMemo, UniqueItems, comma_tokens

__all__ = ["UniqueItemsCheck"]


class UniqueItemsCheck:
    """Arrays whose items must not repeat, checked as the text is written."""

    def __init__(self, unique: UniqueItems) -> None:
        self.unique = unique

    def prepare(self, vocab: list[bytes]) -> None:
        comma_tokens(vocab)  # once per vocabulary, now rather than in a mask

    def start(self) -> Scan:
        return self.unique.start()

    def shared(self) -> SearchMemo:
        return SearchMemo()  # a matcher's forks share node ids, which the memo's keys hold

    def refuse(self, scan: Scan, engine: EngineMatcher, row: bytes, vocab: list[bytes], memo: SearchMemo) -> bytes:
        refused = self.unique.refused(scan, engine, row, memo)
        if not refused:
            return row
        cleared = bytearray(row)
        for token in refused:
            cleared[token >> 3] &= ~(1 << (token & 7)) & 0xFF
        return bytes(cleared)

    def before(self, scan: Scan, engine: EngineMatcher, data: bytes, judged: bool) -> Any:
        after = self.unique.feed(scan, data)
        return REFUSED if after is None or after is DUP else after

    def after(self, scan: Scan, engine: EngineMatcher, memo: SearchMemo, judged: bool) -> bool:
        """Unless a mask judged the token: refused where it leaves an item that can
        only end as a repeat (no continuation the grammar allows avoids one)."""
        if judged or not self.unique.may_end_as_repeat(scan):
            return True
        return self.unique.avoidable(engine.fork(), scan, memo)

    def text_kept(self, data: bytes) -> bool:
        return self.unique.feed(self.unique.start(), data) is not DUP

    def lexeme_kept(self, terminals: list[int], lexeme: bytes) -> bool:
        return True

    def for_grammar(self, lexer: Any, table: Any, terminals: list[Any]) -> UniqueItemsCheck:
        return self  # it reads the text, not the grammar's terminals

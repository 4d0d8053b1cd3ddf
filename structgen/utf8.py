"""Text from bytes that may end in the middle of a UTF-8 character.

A matcher or a sequence shows its output as text while bytes still arrive; the
shown text must only ever grow, so an incomplete character at the end waits.
"""

from __future__ import annotations

import codecs

__all__ = ["whole_characters"]


def whole_characters(data: bytes) -> str:
    """``data`` decoded, less an incomplete UTF-8 character at its end; bytes that
    can never be UTF-8 (free text a model wrote) read as U+FFFD."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)

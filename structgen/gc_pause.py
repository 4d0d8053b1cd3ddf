"""Compiling with the cyclic garbage collector paused.

A compile allocates hundreds of thousands of long-lived objects (automata, token
groups, table entries) and almost no garbage. Each allocation burst triggers
collections, and the oldest generation's scans walk everything the process holds,
the tokenizer's vocabulary and other compiled grammars included: in a process
that has loaded a 128k vocabulary that was about half of a JSON Schema's compile
time. The collector is back on when the outermost compile ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    if not gc.isenabled():  # paused by an enclosing compile, or by the application
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()

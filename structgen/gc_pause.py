"""Compiling with the cyclic garbage collector paused, its survivors promoted at the end.

A compile allocates hundreds of thousands of long-lived objects (automata, token
groups, table entries) and almost no garbage. Each allocation burst triggers
collections, and the oldest generation's scans walk everything the process holds,
the tokenizer's vocabulary and other compiled grammars included: in a process
that has loaded a 128k vocabulary that was about half of a JSON Schema's compile
time. The collector is back on when the outermost compile ends.

Everything the compile built is then still in the youngest generation, so the
first collections after it would scan all of it, inside whichever mask happened
to trigger them (on MaskBench, every 40th schema: a step's p99.5 of 1.2 ms, 0.47 ms
with the promotion). The outermost compile therefore ends with one collection of
the two young generations, which moves its survivors to the oldest: their scan is
paid once, in the compile (0.3 ms at the median schema), and no mask pays it.
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
        gc.collect(1)

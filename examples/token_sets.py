"""What token-set operations cost at DeepSeek's size (129,280 tokens), compiled engine:
the numbers behind docs/tables.md's choice of ints for sets and vec[u8] for bits.

Run: .venv/bin/python examples/token_sets.py
"""

import random
import timeit

from librt.vecs import vec
from mypy_extensions import i32

from structgen.engine.tokenset import add_to_row, empty_buffer, to_row, word_count

VOCAB = 129_280
rng = random.Random(0)
first, second = rng.getrandbits(VOCAB), rng.getrandbits(VOCAB)
ids = vec[i32]([i32(token) for token in rng.sample(range(VOCAB), 50_000)])
words = word_count(VOCAB)


def per_call(statement, number=2000):  # type: ignore[no-untyped-def]
    return timeit.timeit(statement, number=number) / number * 1e6


print(f"union of two sets (int |):          {per_call(lambda: first | second):8.2f} µs")
print(f"set to bitmask row (int.to_bytes):  {per_call(lambda: to_row(first, words)):8.2f} µs")
print(f"50,000 bits into a vec[u8]:          {per_call(lambda: add_to_row(empty_buffer(VOCAB), ids), 50):8.2f} µs")


def bytearray_bits() -> None:
    row = bytearray((VOCAB + 7) >> 3)
    for token in ids:
        row[token >> 3] |= 1 << (token & 7)


print(f"50,000 bits into a bytearray:        {per_call(bytearray_bits, 5):8.2f} µs  (interpreted loop)")

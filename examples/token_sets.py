"""What token-set operations cost at DeepSeek's size (129,280 tokens), compiled engine:
the numbers behind docs/tables.md's choice of ints for group sets and words
(``vec[i64]``, the bitmask row's own memory) for entries and masks.

Run: .venv/bin/python examples/token_sets.py

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import random
import timeit

from librt.vecs import vec
from mypy_extensions import i32

from structgen.engine.tokenset import add_ids, add_words, empty_words, int_words, row_words, word_count, words_row

VOCAB = 129_280
rng = random.Random(0)
first, second = rng.getrandbits(VOCAB), rng.getrandbits(VOCAB)
ids = vec[i32]([i32(token) for token in rng.sample(range(VOCAB), 50_000)])
row_size = word_count(VOCAB)
words = int_words(first, VOCAB)
row = words_row(words, row_size)


def per_call(statement, number=2000):  # type: ignore[no-untyped-def]
    return timeit.timeit(statement, number=number) / number * 1e6


print(f"union of two int sets (|):           {per_call(lambda: first | second):8.2f} µs")
print(f"int set to bitmask row (to_bytes):   {per_call(lambda: first.to_bytes(row_size * 4, 'little')):8.2f} µs")
print(f"bitmask row to int set (from_bytes): {per_call(lambda: int.from_bytes(row, 'little')):8.2f} µs")
print(f"hash of an int set:                  {per_call(lambda: hash(first)):8.2f} µs")
print(f"bitmask row to words (copy):         {per_call(lambda: row_words(row, VOCAB)):8.2f} µs")
print(f"words to bitmask row (copy):         {per_call(lambda: words_row(words, row_size)):8.2f} µs")
print(f"union of two word sets (add_words):  {per_call(lambda: add_words(words, words)):8.2f} µs")
print(f"copy and hash of a bitmask row:      {per_call(lambda: hash(bytes(memoryview(row)))):8.2f} µs")
print(f"50,000 bits into words (add_ids):    {per_call(lambda: add_ids(empty_words(VOCAB), ids), 50):8.2f} µs")


def bytearray_bits() -> None:
    buffer = bytearray(row_size * 4)
    for token in ids:
        buffer[token >> 3] |= 1 << (token & 7)


print(f"50,000 bits into a bytearray:        {per_call(bytearray_bits, 5):8.2f} µs  (interpreted loop)")

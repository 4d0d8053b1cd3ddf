"""Token bitmasks: numpy int32 rows, XGrammar's layout.

Row ``index`` of a ``(batch, (vocab_size + 31) // 32)`` int32 array; token ``i`` is
allowed when bit ``i % 32`` of word ``i // 32`` is set (words little-endian, so
the layout does not depend on the machine). The engine never sees numpy; this
module is the boundary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A bitmask for ``batch_size`` rows that allows every token (XGrammar's default:
    rows without a grammar leave the logits alone)."""
    return np.full((batch_size, (vocab_size + 31) // 32), -1, dtype=np.int32)


_INT32 = np.dtype(np.int32)
_ROW = np.dtype("<i4")  # a row's words, little-endian


def check_bitmask(bitmask: Any, words: int, vocab_size: int, index: int = 0) -> None:
    """A ``ValueError`` (``TypeError`` for what is no array) unless ``bitmask`` is a
    writable int32 array of one row or ``(batch, words)`` rows with a row ``index``:
    written as it comes, an int8 or float64 array would hold a wrong mask. ``write_row``
    asks only off its usual path, so the checks go in the order of their messages."""
    if not isinstance(bitmask, np.ndarray):
        raise TypeError(f"the bitmask must be a numpy array (allocate_token_bitmask), not {type(bitmask).__name__}")
    if bitmask.dtype != np.int32:
        raise ValueError(f"the bitmask must be int32 (allocate_token_bitmask), not {bitmask.dtype}")
    if bitmask.ndim not in (1, 2):
        raise ValueError(f"the bitmask must be one row or (batch, words) rows, not of shape {bitmask.shape}")
    if bitmask.shape[-1] < words:
        raise ValueError(f"the bitmask has {bitmask.shape[-1]} words a row; {vocab_size} tokens need {words}")
    if bitmask.ndim == 2 and not -bitmask.shape[0] <= index < bitmask.shape[0]:
        raise ValueError(f"row {index} is not in a bitmask of {bitmask.shape[0]} rows")
    if not bitmask.flags.writeable:
        raise ValueError("the bitmask is read-only")


def write_row(bitmask: Any, row: bytes, words: int, vocab_size: int, index: int = 0) -> None:
    """Write one allowed-tokens ``row`` (``words`` little-endian 32-bit words) into
    row ``index`` of ``bitmask``, the words past it cleared: what every matcher's
    ``fill_next_token_bitmask`` does."""
    # every step passes here: the usual (batch, words) int32 array is judged by the cheap
    # tests alone (a dtype compared by identity, not ``!=``, which costs a numpy call), and
    # a read-only one by numpy's refusal to write, after which check_bitmask names it; the
    # row is read with a dtype object, not "<i4", which numpy would parse at each call
    if (type(bitmask) is np.ndarray and bitmask.dtype is _INT32 and bitmask.ndim == 2
            and (shape := bitmask.shape)[1] >= words and 0 <= index < shape[0]):
        target = bitmask[index]
    else:
        check_bitmask(bitmask, words, vocab_size, index)
        target = bitmask if bitmask.ndim == 1 else bitmask[index]
    try:
        target[:words] = np.frombuffer(row, _ROW)
    except ValueError:
        check_bitmask(bitmask, words, vocab_size, index)
        raise
    if target.shape[0] > words:
        target[words:] = 0


def ids_row(token_ids: Any, words: int) -> int:
    """The row of ``token_ids`` as one int (bit ``i`` for token ``i``), built with
    numpy: or-ing bits into an int one by one copies the whole row each time."""
    bits = np.zeros(32 * words, dtype=np.uint8)
    bits[np.asarray(token_ids, dtype=np.int64)] = 1
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def allowed_in_row(bitmask: npt.NDArray[np.int32], index: int, vocab_size: int) -> list[int]:
    """The token ids allowed by row ``index`` (for tests and debugging)."""
    words = np.ascontiguousarray(bitmask[index]).astype("<i4")
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab_size]
    return np.flatnonzero(bits).tolist()


def apply_token_bitmask_inplace(logits: Any, bitmask: npt.NDArray[np.int32]) -> None:
    """Set disallowed logits to -inf, in place (torch tensors, CPU or CUDA).

    ``logits`` is ``(batch, vocab)`` with a ``(batch, words)`` mask, or ``(vocab,)``
    with a ``(words,)`` or one-row mask. Logits wider than the mask (padded
    vocabularies) are disallowed past it. The bits are unpacked by torch on the
    logits' device (0.2 ms for 49k tokens on a CPU).
    """
    import torch

    words = torch.from_numpy(np.ascontiguousarray(bitmask, dtype="<i4")).to(logits.device)
    if words.dim() == 1:
        words = words[None, :]
    rows = 1 if logits.dim() == 1 else logits.shape[0]
    if words.shape[0] != rows:
        raise ValueError(f"the bitmask has {words.shape[0]} rows for logits of shape {tuple(logits.shape)}")
    vocab = logits.shape[-1]
    shifts = torch.arange(32, dtype=torch.int32, device=logits.device)
    bits = words.unsqueeze(-1).bitwise_right_shift(shifts).bitwise_and_(1).view(rows, -1)
    width = min(vocab, bits.shape[1])
    target = logits.unsqueeze(0) if logits.dim() == 1 else logits  # views: filled in place
    target[:, :width].masked_fill_(bits[:, :width] == 0, float("-inf"))
    if vocab > width:
        target[:, width:] = float("-inf")

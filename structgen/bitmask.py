"""Token bitmasks: numpy int32 rows, XGrammar's layout.

Row ``index`` of a ``(batch, (vocab_size + 31) // 32)`` int32 array; token ``i`` is
allowed when bit ``i % 32`` of word ``i // 32`` is set. The engine never sees
numpy; this module is the boundary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A zeroed bitmask for ``batch_size`` rows of ``vocab_size`` tokens."""
    return np.zeros((batch_size, (vocab_size + 31) // 32), dtype=np.int32)


def write_row(bitmask: npt.NDArray[np.int32], index: int, token_ids: list[int]) -> None:
    """Set row ``index`` to exactly ``token_ids``."""
    row = np.zeros(bitmask.shape[1] * 32, dtype=np.bool_)
    row[np.asarray(token_ids, dtype=np.int64)] = True
    bitmask[index] = np.packbits(row, bitorder="little").view(np.int32)


def allowed_in_row(bitmask: npt.NDArray[np.int32], index: int, vocab_size: int) -> list[int]:
    """The token ids allowed by row ``index`` (for tests and debugging)."""
    bits = np.unpackbits(bitmask[index].view(np.uint8), bitorder="little")[:vocab_size]
    return np.flatnonzero(bits).tolist()


def apply_token_bitmask_inplace(logits: Any, bitmask: npt.NDArray[np.int32]) -> None:
    """Set disallowed logits to -inf, in place (torch tensors, CPU or CUDA).

    ``logits`` is ``(batch, vocab)`` or ``(vocab,)``; its vocabulary may be wider
    than the mask's (padded logits): the extra columns are disallowed.
    """
    import torch

    vocab = logits.shape[-1]
    bits = np.unpackbits(np.ascontiguousarray(bitmask).view(np.uint8), axis=-1, bitorder="little")
    allowed = np.zeros((bits.shape[0], vocab), dtype=np.bool_)
    width = min(vocab, bits.shape[1])
    allowed[:, :width] = bits[:, :width].astype(np.bool_)
    mask = torch.from_numpy(allowed).to(logits.device)
    if logits.dim() == 1:
        mask = mask[0]
    logits.masked_fill_(~mask, float("-inf"))

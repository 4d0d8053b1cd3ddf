"""Joining and trimming the KV cache of a running batch (continuous batching).

Rows of a transformers ``DynamicCache`` are sequences, columns cache slots; a
sequence's tokens sit at the right end of its row, padding on the left, masked
out by the batch's 2-D attention mask (``0`` for a padded slot). Sequences that
join are prefilled in a cache of their own; the shorter of the two caches is
then left-padded to the other's length and the rows concatenated. When every
remaining row has padding on the left, those columns go.
"""

from __future__ import annotations

from typing import Any


def join_rows(cache: Any, attention: Any, joining: Any, joining_attention: Any) -> tuple[Any, Any]:
    """``cache`` with ``joining``'s rows appended below, and the joined attention mask.

    Either cache may be None (no slot filled yet): its rows are all padding, as
    many as its attention mask has."""
    import torch

    width = max(attention.shape[1], joining_attention.shape[1])
    if cache is None and joining is None:
        return None, torch.cat([_pad(attention, width), _pad(joining_attention, width)])
    target = cache if cache is not None else joining
    for index, layer in enumerate(target.layers):
        _check_plain(layer)
        upper = _rows(cache, index, attention.shape[0], layer)
        lower = _rows(joining, index, joining_attention.shape[0], layer)
        layer.keys = torch.cat([_pad(upper[0], width), _pad(lower[0], width)])
        layer.values = torch.cat([_pad(upper[1], width), _pad(lower[1], width)])
    return target, torch.cat([_pad(attention, width), _pad(joining_attention, width)])


def drop_leading_padding(cache: Any, attention: Any) -> tuple[Any, Any]:
    """Without the columns on the left that are padding in every row."""
    used = attention.any(dim=0).nonzero()
    first = int(used[0]) if used.numel() else attention.shape[1]
    if first == 0:
        return cache, attention
    if cache is not None:
        for layer in cache.layers:
            _check_plain(layer)
            if layer.keys is not None and layer.keys.dim() == 4:
                layer.keys = layer.keys[:, :, first:, :]
                layer.values = layer.values[:, :, first:, :]
    return cache, attention[:, first:]


def _rows(cache: Any, index: int, rows: int, like: Any) -> tuple[Any, Any]:
    """Layer ``index``'s keys and values, or empty ones of ``rows`` rows when there is no cache."""
    if cache is not None:
        layer = cache.layers[index]
        return layer.keys, layer.values
    keys, values = like.keys, like.values
    return keys.new_zeros((rows, keys.shape[1], 0, keys.shape[3])), values.new_zeros((rows, values.shape[1], 0, values.shape[3]))


def _pad(tensor: Any, width: int) -> Any:
    """Zeros on the left of the sequence axis (the last of a mask, the third of keys)."""
    import torch.nn.functional as F

    axis = tensor.dim() - 1 if tensor.dim() == 2 else 2
    missing = width - tensor.shape[axis]
    if missing == 0:
        return tensor
    padding = [0, 0] * (tensor.dim() - 1 - axis) + [missing, 0]
    return F.pad(tensor, padding)


def _check_plain(layer: Any) -> None:
    """Only full-attention layers keep every slot: a sliding window would drop the wrong ones."""
    if getattr(layer, "is_sliding", False) or not hasattr(layer, "keys"):
        raise NotImplementedError(
            f"continuous batching needs a plain DynamicCache; this model's cache has a {type(layer).__name__}"
        )

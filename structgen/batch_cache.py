"""Joining and trimming the KV cache of a running batch (continuous batching).

Rows of a transformers ``DynamicCache`` are sequences, columns cache slots; a
sequence's tokens sit at the right end of its row, padding on the left, masked
out by the batch's 2-D attention mask (``0`` for a padded slot). Sequences that
join are prefilled in a cache of their own; the shorter of the two caches is
then left-padded to the other's length and the rows concatenated. When every
remaining row has padding on the left, those columns go.

Layer kinds (``transformers.cache_utils``, the layers ``DynamicCache(config=...)``
makes for a text model):

- ``DynamicLayer`` (full attention): keys hold every slot of the mask.
- ``DynamicSlidingWindowLayer`` (sliding window; Mistral, Gemma 2/3, Qwen 2 with
  ``use_sliding_window``): keys hold only the last ``sliding_window - 1`` slots and
  ``cumulative_length`` counts every slot, which must equal the mask's width
  (transformers sizes the window's part of the mask from it). Joining left-pads
  both sides to the kept slots of the joined width; trimming lowers the count.
  The window is counted in cache slots, so a row's tokens must stay contiguous
  (no padding between them): ``Decoder`` then feeds every row that already has
  tokens in the cache the same number of tokens per step (``contiguous``).
- ``DummyLayer`` (a layer reading another layer's cache): nothing to do.

Every other layout — recurrent / linear-attention states (``LinearAttention*``,
Mamba-style hybrids, MiniMax's linear cache), sparse-attention indexer keys
(``DynamicIndexedLayer``), past recording, quantized or static caches — is not
``joinable``: the scheduler then lets a request join only an empty batch (it waits
for the running one to drain) instead of failing.
"""

from __future__ import annotations

from typing import Any

FULL, SLIDING, DUMMY = "full", "sliding", "dummy"


def layer_kind(layer: Any) -> str | None:
    """``FULL``, ``SLIDING`` or ``DUMMY`` for a layer this module can join, else None."""
    from transformers.cache_utils import DummyLayer, DynamicLayer, DynamicSlidingWindowLayer

    kind = type(layer)
    if kind is DynamicLayer:
        return FULL
    if kind is DynamicSlidingWindowLayer and not layer.record_past:
        return SLIDING
    if kind is DummyLayer:
        return DUMMY
    return None


def joinable(cache: Any) -> bool:
    """Whether rows can be appended to ``cache`` (None: nothing cached yet, always)."""
    if cache is None:
        return True
    from transformers.cache_utils import DynamicCache

    return type(cache) is DynamicCache and all(layer_kind(layer) is not None for layer in cache.layers)


def contiguous(cache: Any) -> bool:
    """Whether a row's tokens must stay contiguous in ``cache`` (a sliding window
    counts cache slots, so padding between a row's tokens would shrink its window)."""
    return cache is not None and any(getattr(layer, "is_sliding", False) for layer in getattr(cache, "layers", ()))


def join_rows(cache: Any, attention: Any, joining: Any, joining_attention: Any) -> tuple[Any, Any]:
    """``cache`` with ``joining``'s rows appended below, and the joined attention mask.

    Either cache may be None (no slot filled yet): its rows are all padding, as
    many as its attention mask has. Both must be ``joinable``."""
    import torch

    width = max(attention.shape[1], joining_attention.shape[1])
    joined_attention = torch.cat([_pad(attention, width), _pad(joining_attention, width)])
    if cache is None and joining is None:
        return None, joined_attention
    for side in (cache, joining):
        if not joinable(side):
            raise NotImplementedError(f"continuous batching cannot join rows to a {describe_cache(side)}")
    target = cache if cache is not None else joining
    for index, layer in enumerate(target.layers):
        kind = layer_kind(layer)
        if kind == DUMMY:
            continue
        upper = _rows(cache, index, attention, layer)
        lower = _rows(joining, index, joining_attention, layer)
        slots = width if kind == FULL else min(width, layer.sliding_window - 1)
        layer.keys = torch.cat([_pad(upper[0], slots), _pad(lower[0], slots)])
        layer.values = torch.cat([_pad(upper[1], slots), _pad(lower[1], slots)])
        if kind == SLIDING:
            layer.cumulative_length = width
    return target, joined_attention


def drop_leading_padding(cache: Any, attention: Any) -> tuple[Any, Any]:
    """Without the columns on the left that are padding in every row (a cache that
    is not ``joinable`` keeps them)."""
    used = attention.any(dim=0).nonzero()
    first = int(used[0]) if used.numel() else attention.shape[1]
    if first == 0:
        return cache, attention
    if cache is not None:
        if not joinable(cache):
            return cache, attention
        for layer in cache.layers:
            kind = layer_kind(layer)
            if kind == DUMMY or not _has_keys(layer):
                continue
            if kind == FULL:
                layer.keys = layer.keys[:, :, first:, :]
                layer.values = layer.values[:, :, first:, :]
            else:  # the kept slots are the last ones; fewer may be left
                left = layer.cumulative_length - first
                kept = min(layer.keys.shape[2], left)
                layer.keys = layer.keys[:, :, layer.keys.shape[2] - kept :, :]
                layer.values = layer.values[:, :, layer.values.shape[2] - kept :, :]
                layer.cumulative_length = left
    return cache, attention[:, first:]


def select_rows(cache: Any, index: Any) -> None:
    """Keep only the rows ``index`` (a 1-D long tensor) of ``cache``, of any layout:
    recurrent states go through ``reorder_cache``, which selects them too."""
    from transformers.cache_utils import Cache

    if type(cache).batch_select_indices is not Cache.batch_select_indices or not hasattr(cache, "layers"):
        cache.batch_select_indices(index)  # a cache class with state of its own (MiniMax's)
        return
    from transformers.cache_utils import LinearAttentionCacheLayerMixin

    for layer in cache.layers:
        if isinstance(layer, LinearAttentionCacheLayerMixin):
            layer.reorder_cache(index)  # batch_select_indices would miss the conv/recurrent states
        else:
            layer.batch_select_indices(index)


def _has_keys(layer: Any) -> bool:
    return layer.keys is not None and layer.keys.dim() == 4


def _rows(cache: Any, index: int, attention: Any, like: Any) -> tuple[Any, Any]:
    """Layer ``index``'s keys and values (checked against the mask's width), or
    empty ones of the mask's rows when there is no cache."""
    rows = attention.shape[0]
    if cache is not None:
        layer = cache.layers[index]
        if _has_keys(layer):
            if layer_kind(layer) == SLIDING and layer.cumulative_length != attention.shape[1]:
                raise RuntimeError(
                    f"internal error: a sliding-window layer holds {layer.cumulative_length} slots, its mask {attention.shape[1]}"
                )
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
    if missing < 0:
        raise RuntimeError(f"internal error: {tensor.shape[axis]} cache slots do not fit in {width}")
    padding = [0, 0] * (tensor.dim() - 1 - axis) + [missing, 0]
    return F.pad(tensor, padding)


def describe_cache(cache: Any) -> str:
    kinds = sorted({type(layer).__name__ for layer in getattr(cache, "layers", ())})
    return f"{type(cache).__name__} of {', '.join(kinds) or 'no layers'}"

"""One vLLM request's matcher, kept in step with the output tokens vLLM really sampled.

vLLM hands a logits processor a reference to each request's output-token list and
appends to it as it samples; the list can also shrink or be rewritten (tokens
discarded after a failed KV load, a request re-added after preemption), and under
async scheduling it may end in ``-1`` placeholders until the sampled ids arrive.
So the matcher is never advanced blindly: before each mask the list is compared
with what the matcher consumed, the matcher is rolled back to the common prefix
and fed the rest. Nothing here imports vLLM.
"""

from __future__ import annotations

import logging
from typing import Iterable

import numpy as np
import numpy.typing as npt

from structgen.matcher import Matcher

PLACEHOLDER = -1
"""vLLM's id for a sampled token not yet copied back (async scheduling)."""

CHECKED_TAIL = 64
"""How many of the last consumed tokens are compared with vLLM's list before each
mask (the whole list would cost O(length) a step). vLLM rewrites a list only at
its end: it drops tokens, then appends one a step (custom logits processors are
refused with speculative decoding). So between two masks the list either got
shorter (then it is compared in full) or lost at most one token and gained one,
which the last position shows."""

logger = logging.getLogger(__name__)


def token_row(token_ids: Iterable[int], vocab_size: int) -> npt.NDArray[np.int32]:
    """A bitmask row that allows exactly ``token_ids`` (those below ``vocab_size``)."""
    words: npt.NDArray[np.uint32] = np.zeros((vocab_size + 31) // 32, dtype=np.uint32)
    for token_id in token_ids:
        if 0 <= token_id < vocab_size:
            words[token_id // 32] |= np.uint32(1 << (token_id % 32))
    return words.view(np.int32)


class RequestMatcher:
    """A matcher that follows ``output_ids``, vLLM's live output-token list.

    ``consumed`` is the part of the list already seen; the matcher accepted its
    first ``fed`` tokens. Tokens past ``fed`` came after a stop token vLLM did not
    stop on, or after a token the matcher refused (``refused``): from then on only
    ``ends`` are allowed, so the request ends.

    ``ends`` are the tokens allowed once the output is complete (the ones vLLM
    stops on, where it stops on any); every other stop token, the grammar's or
    vLLM's, is cleared from the rows before that (``not_stops``): a token vLLM
    stops on but the grammar also allows as text would end the output early.
    """

    def __init__(
        self,
        matcher: Matcher,
        params: object,
        output_ids: list[int],
        ends: npt.NDArray[np.int32],
        not_stops: npt.NDArray[np.int32],
    ) -> None:
        self.matcher = matcher
        self.params = params  # the request's own sampling parameters: identifies it
        self.output_ids = output_ids
        self.ends = ends
        self.not_stops = not_stops
        self.consumed: list[int] = []
        self.fed = 0
        self.refused = False

    def sync(self) -> None:
        """Catch up with ``output_ids``: roll back what vLLM took back, feed what is new."""
        current = self.output_ids
        end = len(current)
        while end and current[end - 1] == PLACEHOLDER:
            end -= 1
        seen = len(self.consumed)
        tail = max(0, seen - CHECKED_TAIL)
        if end >= seen and current[tail:seen] == self.consumed[tail:]:
            common = seen
        else:
            common = _common_prefix_length(current, self.consumed, min(end, seen))
            self._rollback_to(common)
        for token_id in current[common:end]:
            self._advance(token_id)

    def fill(self, bitmask: npt.NDArray[np.int32], index: int) -> None:
        """Row ``index``: what the grammar allows next, with ``ends`` only where the
        output is complete; only ``ends`` once it stopped or was left."""
        if self.refused or self.matcher.is_terminated():
            bitmask[index, :] = 0
            bitmask[index, : self.ends.shape[0]] = self.ends
            return
        self.matcher.fill_next_token_bitmask(bitmask, index)
        row = bitmask[index, : self.not_stops.shape[0]]
        row &= self.not_stops
        if self.matcher.can_terminate():
            row |= self.ends
        elif not row.any():
            # nothing can follow (a grammar with no string, or whose only way on is a
            # token vLLM stops on): an all -inf row would be sampled as garbage or NaN
            logger.warning("structgen: no token can continue this output; the request is ended")
            row[:] = self.ends

    def _advance(self, token_id: int) -> None:
        following = self.fed == len(self.consumed) and not self.refused
        self.consumed.append(token_id)
        if not following or self.matcher.is_terminated():
            return
        if self.matcher.accept_token(token_id):
            self.fed += 1
        else:
            self.refused = True
            logger.warning(
                "structgen: token %d was sampled although the grammar does not allow it "
                "(another logits processor or a sampler bypassing the mask?); the request "
                "is now limited to stop tokens",
                token_id,
            )

    def _rollback_to(self, length: int) -> None:
        if length < self.fed:
            self.matcher.rollback(self.fed - length)
            self.fed = length
        if length <= self.fed:
            self.refused = False
        del self.consumed[length:]


def _common_prefix_length(a: list[int], b: list[int], limit: int) -> int:
    for index in range(limit):
        if a[index] != b[index]:
            return index
    return limit

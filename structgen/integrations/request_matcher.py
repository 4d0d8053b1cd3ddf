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
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import numpy.typing as npt

from structgen.engine.matcher import CompiledGrammar
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


@dataclass(frozen=True)
class NextPhase:
    """A second grammar that takes over once the output ends with ``after`` and the
    first allows nothing but stopping; it is fed ``after`` first."""

    compiled: CompiledGrammar
    after: str
    join_bytes: Callable[[list[int]], bytes]  # token ids to their bytes (TokenizerInfo.join_bytes)
    stops: frozenset[int]  # the grammar's stop tokens


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

    With ``next_phase``, the matcher is replaced by the next phase's once the
    first phase is over (``switched`` tokens in); a rollback to before that point
    takes the first phase back. A request whose constraint failed to compile is
    ``failed``: only ``ends`` are ever allowed, so it ends at once.
    """

    def __init__(
        self,
        matcher: Matcher,
        params: object,
        output_ids: list[int],
        ends: npt.NDArray[np.int32],
        not_stops: npt.NDArray[np.int32],
        next_phase: NextPhase | None = None,
        failed: bool = False,
    ) -> None:
        self.matcher = matcher
        self.params = params  # the request's own sampling parameters: identifies it
        self.output_ids = output_ids
        self.ends = ends
        self.not_stops = not_stops
        self.consumed: list[int] = []
        self.fed = 0
        self.refused = failed
        self.failed = failed
        self.next_phase = next_phase
        self.first = matcher  # the first phase's matcher
        self.switched: int | None = None  # tokens fed when the next phase took over

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
        if not self.refused and self.next_phase is not None and self.switched is None:
            self._maybe_switch()
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

    def _maybe_switch(self) -> None:
        """Hand over to the next phase when the first one is over: it can end, the
        output ends with the phase's text, and only stop tokens are left."""
        phase = self.next_phase
        assert phase is not None
        if self.fed != len(self.consumed) or not self.matcher.can_terminate():
            return
        after = phase.after.encode("utf-8")
        tail = b""
        for start in range(self.fed - 1, -1, -1):  # the last tokens, as many as ``after`` needs
            tail = phase.join_bytes(self.consumed[start:self.fed])
            if len(tail) >= len(after):
                break
        if not tail.endswith(after) or not set(self.matcher.allowed_tokens()) <= phase.stops:
            return
        matcher = Matcher(phase.compiled)
        if not matcher.accept_string(phase.after):
            logger.warning("structgen: the next phase's grammar refuses %r; the request is ended", phase.after)
            self.refused = True
            return
        self.matcher, self.switched = matcher, self.fed

    def _advance(self, token_id: int) -> None:
        following = self.fed == len(self.consumed) and not self.refused
        if following and self.next_phase is not None and self.switched is None:
            self._maybe_switch()  # several new tokens at once (a replay) may cross into the next phase
            following = not self.refused
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
        if self.switched is not None and length < self.switched:
            # back into the first phase, as it was when the next one took over
            self.matcher, self.fed, self.switched = self.first, self.switched, None
        if length < self.fed:
            self.matcher.rollback(self.fed - length)
            self.fed = length
        if length <= self.fed and not self.failed:
            self.refused = False
        del self.consumed[length:]


def _common_prefix_length(a: list[int], b: list[int], limit: int) -> int:
    for index in range(limit):
        if a[index] != b[index]:
            return index
    return limit

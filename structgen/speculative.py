"""Checking a draft (speculative decoding) against the grammar in one pass.

A draft model proposes several tokens; the target model scores them all at once.
``verify_draft`` says how many of them the grammar accepts and gives the mask for
every position up to the first refused one, so the target's logits at each
position can be masked before its own acceptance test. The matcher is advanced
through the draft and rolled back, so it is unchanged afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from structgen.bitmask import allocate_token_bitmask
from structgen.matcher import Matcher


@dataclass
class DraftCheck:
    """``accepted`` tokens of the draft are valid; ``bitmask[i]`` is the mask before
    draft position ``i``, for ``i`` in ``0..accepted`` (one row more than accepted)."""

    accepted: int
    bitmask: npt.NDArray[np.int32]


def verify_draft(matcher: Matcher, draft: Sequence[int]) -> DraftCheck:
    """The longest valid prefix of ``draft`` and the masks along it."""
    compiled = matcher.compiled
    bitmask = allocate_token_bitmask(len(draft) + 1, compiled.vocab_size)
    accepted = 0
    matcher.fill_next_token_bitmask(bitmask, 0)
    for token_id in draft:
        if not matcher.accept_token(token_id):
            break
        accepted += 1
        matcher.fill_next_token_bitmask(bitmask, accepted)
    if accepted:
        matcher.rollback(accepted)
    return DraftCheck(accepted, bitmask[: accepted + 1])

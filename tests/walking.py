"""Random walks over a compiled grammar, shared by the tests that follow one:
each step a random allowed token (``test_exactness.choose``), a closing bias
late in the walk, and a hook at every step and at every finished text."""

from __future__ import annotations

import random
from typing import Any, Callable

from structgen import Matcher, TokenizerInfo
from test_exactness import choose


def walk(compiled: Any, info: TokenizerInfo, rng: random.Random, walks: int, steps: int, closing_from: int,
         at_step: Callable[[Matcher, list[int], bytes], None], finished: Callable[[bytes], None]) -> int:
    """``walks`` walks of up to ``steps`` tokens; ``at_step(matcher, mask, text)``
    before each token is chosen, ``finished(text)`` where a stop token ends one.
    How many ended."""
    ended = 0
    for _ in range(walks):
        matcher = Matcher(compiled)
        text = b""
        for step in range(steps):
            allowed = sorted(matcher.allowed_tokens())
            assert allowed, text  # never a dead end
            at_step(matcher, allowed, text)
            token = choose(matcher, allowed, info, rng, closing=step >= closing_from)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                finished(text)
                ended += 1
                break
            text += info.decoded_vocab[token]
    return ended

"""A ``transformers.LogitsProcessor`` for users who call ``model.generate`` themselves.

transformers hands a processor only the token ids so far, with no word about which
row continues which (beam search reorders rows every step). So matchers are kept
per generated prefix: a row's matcher is its prefix-minus-one's matcher, forked,
that accepted the new token. Forks share their parse stacks, so this costs O(1)
per row and step, and sampling, batching and beams all work unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from transformers import LogitsProcessor

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.constraint import make_constraint
from structgen.generate import tokenizer_info_for
from structgen.matcher import Matcher, compile


class StructgenLogitsProcessor(LogitsProcessor):  # type: ignore[misc]
    """Masks logits so ``model.generate`` only produces what the constraint allows.

    ``schema=`` / ``grammar=`` / ``regex=`` / ``choices=`` as for ``structgen.generate``;
    ``vocab_size`` is the model's logits size when it differs from the tokenizer's.
    Use a new processor per ``generate`` call: the first call marks where the
    prompt ends. After the output is complete only stop tokens are allowed, so a
    row that ended on a stop token transformers does not stop on (give it
    ``eos_token_id=info.stop_token_ids``) only repeats stop tokens, which decoding
    with ``skip_special_tokens=True`` drops.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        schema: Any = None,
        grammar: Any = None,
        regex: str | None = None,
        choices: list[str] | None = None,
        vocab_size: int | None = None,
        **schema_options: Any,
    ) -> None:
        constraint = make_constraint(
            schema=schema, grammar=grammar, regex=regex, choices=choices, schema_options=schema_options
        )
        if constraint.grammar is None:
            raise ValueError("give one of schema=, grammar=, regex=, choices=")
        self.constraint = constraint
        self.info = tokenizer_info_for(tokenizer, vocab_size)
        self.compiled = compile(constraint.grammar, self.info)
        self._stop_ids = frozenset(self.info.stop_token_ids)
        self._stops_only = allocate_token_bitmask(1, self.info.vocab_size)[0] * 0
        for token_id in self.info.stop_token_ids:
            self._stops_only[token_id // 32] |= np.int32(np.uint32(1 << (token_id % 32)).view(np.int32))
        self._prompt_length: int | None = None
        self._matchers: dict[tuple[int, ...], Matcher | None] = {}

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._prompt_length is None:
            self._prompt_length = int(input_ids.shape[1])
        rows = input_ids[:, self._prompt_length :].tolist()
        matchers: dict[tuple[int, ...], Matcher | None] = {}
        bitmask = allocate_token_bitmask(len(rows), self.compiled.vocab_size)
        for index, row in enumerate(rows):
            prefix = tuple(row)
            if prefix not in matchers:
                matchers[prefix] = self._matcher_for(prefix)
            matcher = matchers[prefix]
            if matcher is None:
                continue  # padding after the end: anything
            if matcher.is_terminated():
                # transformers stops only on its own eos ids: any stop token may follow
                bitmask[index] = self._stops_only
            else:
                matcher.fill_next_token_bitmask(bitmask, index)
        self._matchers = matchers
        apply_token_bitmask_inplace(scores, bitmask)
        return scores

    def _matcher_for(self, prefix: tuple[int, ...]) -> Matcher | None:
        """The matcher after ``prefix``; None once a finished row is padded with a
        token that is not a stop token (its scores no longer matter)."""
        if prefix and prefix[:-1] in self._matchers:
            return self._step(self._matchers[prefix[:-1]], prefix[-1])
        # not a row of the last call (assisted generation drops rejected draft tokens): replay
        matcher: Matcher | None = Matcher(self.compiled)
        for token_id in prefix:
            matcher = self._step(matcher, token_id)
        return matcher

    def _step(self, parent: Matcher | None, token_id: int) -> Matcher | None:
        if parent is None:
            return None
        if parent.is_terminated():
            # a stop token transformers does not stop on: the row goes on with stop tokens only
            return parent if token_id in self._stop_ids else None
        matcher = parent.fork()
        return matcher if matcher.accept_token(token_id) else None

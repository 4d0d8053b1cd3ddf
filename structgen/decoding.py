"""The constrained decoding loop: one forward pass per step for a whole batch.

Each sequence has its own matcher. A step feeds every sequence the tokens it got
since the last step — one sampled token, or several when jump-forward appended
forced text — in one forward pass over a shared KV cache: sequences that feed
fewer tokens are padded on the left of the step, and padded cache slots are
masked out of attention, with explicit position ids, so each sequence sees
exactly its own tokens. The masks of the step are computed on a worker thread
while the forward pass runs (torch releases the GIL inside its kernels; on CUDA
the launch returns at once), and the two meet at sampling.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.completion import shortest_completion
from structgen.constraint import Constraint
from structgen.matcher import Matcher, compile
from structgen.sampling import SamplingParams, make_generator, penalize_repeats, sample
from structgen.token_encoder import TokenEncoder
from structgen.tokenizer_info import TokenizerInfo

_mask_worker: ThreadPoolExecutor | None = None


def mask_worker() -> ThreadPoolExecutor:
    """The one thread that computes masks while the forward pass runs."""
    global _mask_worker
    if _mask_worker is None:
        _mask_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="structgen-mask")
    return _mask_worker


@dataclass
class Sequence:
    """One generation in a batch: its constraint, matcher and tokens so far."""

    prompt_ids: list[int]
    constraint: Constraint
    matcher: Matcher | None
    max_tokens: int
    output: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # accepted, not yet fed to the model
    forced: set[int] = field(default_factory=set)  # positions in output appended by jump-forward
    positions: int = 0  # tokens of this sequence in the KV cache
    forward_passes: int = 0
    finish_reason: str | None = None
    stop_string: str | None = None  # the stop= string that ended it
    cut: int | None = None  # characters of the decoded output kept when a stop string ended it

    def text(self, info: TokenizerInfo) -> str:
        # cut counts characters, not bytes: a replaced invalid byte is one character of three bytes
        return info.join_bytes(self.output).decode("utf-8", errors="replace")[: self.cut]

    @property
    def done(self) -> bool:
        return self.finish_reason is not None


@dataclass(frozen=True)
class DecodeOptions:
    sampling: SamplingParams
    jump_forward: bool = True
    stop: tuple[str, ...] = ()
    close_within_max_tokens: bool = False


CLOSE_HORIZON = 64
"""With ``close_within_max_tokens``: how many tokens before the budget the shortest
completion starts being computed (a search per step from there on)."""
CLOSE_SLACK = 4
"""Close once the shortest completion needs this many tokens fewer than are left:
the next sampled token could make the completion longer."""


def check_request(prompt_ids: list[int], max_tokens: int) -> None:
    """A clear error for what the model would otherwise fail on deep inside torch."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if not prompt_ids:
        raise ValueError("the prompt is empty")


class Decoder:
    """Runs a batch of sequences on one model to the end."""

    def __init__(self, model: Any, tokenizer: Any, info: TokenizerInfo, encoder: TokenEncoder) -> None:
        self.model = model
        self.info = info
        self.encoder = encoder
        self.stop_ids = frozenset(info.stop_token_ids)
        pad = getattr(tokenizer, "pad_token_id", None)
        self.pad_id = pad if pad is not None else (info.stop_token_ids or [0])[0]

    def new_sequence(self, prompt_ids: list[int], constraint: Constraint, max_tokens: int) -> Sequence:
        check_request(prompt_ids, max_tokens)
        matcher = Matcher(compile(constraint.grammar, self.info)) if constraint.grammar is not None else None
        return Sequence(list(prompt_ids), constraint, matcher, max_tokens, pending=list(prompt_ids))

    def run(
        self, sequences: list[Sequence], options: DecodeOptions, on_step: Callable[[list[Sequence]], None] | None = None
    ) -> float:
        """Decode until every sequence has finished; returns the seconds spent.

        ``on_step`` sees the sequences after each step (to stream their new text); a
        sequence it marks done (``finish_reason`` set, e.g. ``"cancelled"``) leaves
        the batch before the next forward pass."""
        import torch

        started = time.perf_counter()
        device = self.model.device
        generator = make_generator(options.sampling, device)
        for sequence in sequences:
            if options.jump_forward:
                self._jump_forward(sequence, None)
            self._check_end(sequence, options)  # the forced start may already fill max_tokens
        active = [s for s in sequences if not s.done]
        cache: Any = None
        attention = torch.zeros((len(active), 0), dtype=torch.long, device=device)
        with torch.inference_mode():
            while active:
                masks = mask_worker().submit(self._fill_masks, active)
                logits, cache, attention = self._forward(active, cache, attention)
                penalize_repeats(logits, [s.output for s in active], options.sampling.repetition_penalty)
                apply_token_bitmask_inplace(logits, masks.result())
                chosen = sample(logits, options.sampling, generator).tolist()
                for sequence, token_id in zip(active, chosen):
                    sequence.forward_passes += 1
                    self._advance(sequence, int(token_id), options)
                if on_step is not None:
                    on_step(sequences)
                keep = [i for i, s in enumerate(active) if not s.done]
                if len(keep) < len(active):
                    if keep:
                        index = torch.tensor(keep, device=device)
                        cache.batch_select_indices(index)
                        attention = attention[index]
                    active = [active[i] for i in keep]
        return time.perf_counter() - started

    def _fill_masks(self, active: list[Sequence]) -> npt.NDArray[np.int32]:
        bitmask = allocate_token_bitmask(len(active), self.info.vocab_size)
        for row, sequence in enumerate(active):
            if sequence.matcher is not None:
                sequence.matcher.fill_next_token_bitmask(bitmask, row)
        return bitmask

    def _forward(self, active: list[Sequence], cache: Any, attention: Any) -> tuple[Any, Any, Any]:
        """Feed each sequence its pending tokens, left-padded to the longest."""
        import torch

        width = max(len(s.pending) for s in active)
        ids = [[self.pad_id] * (width - len(s.pending)) + s.pending for s in active]
        step_mask = [[0] * (width - len(s.pending)) + [1] * len(s.pending) for s in active]
        positions = [
            [s.positions] * (width - len(s.pending)) + list(range(s.positions, s.positions + len(s.pending)))
            for s in active
        ]
        device = self.model.device
        attention = torch.cat([attention, torch.tensor(step_mask, device=device)], dim=1)
        out = self.model(
            input_ids=torch.tensor(ids, device=device),
            attention_mask=attention,
            position_ids=torch.tensor(positions, device=device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        for sequence in active:
            sequence.positions += len(sequence.pending)
            sequence.pending = []
        return out.logits[:, -1, :].float(), out.past_key_values, attention

    def _advance(self, sequence: Sequence, token_id: int, options: DecodeOptions) -> None:
        """Take the sampled token; then jump forward, and see whether the sequence ended."""
        if token_id in self.stop_ids:
            if sequence.matcher is not None and not sequence.matcher.accept_token(token_id):
                raise RuntimeError(f"internal error: stop token {token_id} was allowed by the mask, then refused")
            sequence.finish_reason = "stop"
            return
        if sequence.matcher is not None and not sequence.matcher.accept_token(token_id):
            raise RuntimeError(f"internal error: token {token_id} was allowed by the mask, then refused")
        sequence.output.append(token_id)
        sequence.pending.append(token_id)
        if options.jump_forward and sequence.matcher is not None:
            self._jump_forward(sequence, token_id)
        self._check_end(sequence, options)

    def _check_end(self, sequence: Sequence, options: DecodeOptions) -> None:
        """End the sequence on a stop string, on ``max_tokens``, or when only stopping is left."""
        if options.stop and self._cut_at_stop(sequence, options.stop):
            sequence.finish_reason = "stop"
            return
        if len(sequence.output) >= sequence.max_tokens:
            sequence.finish_reason = "length"
            return
        if options.close_within_max_tokens and self._close_near_budget(sequence):
            sequence.finish_reason = "length"
            return
        self._finish_if_only_stop(sequence)

    def _close_near_budget(self, sequence: Sequence) -> bool:
        """Append the output's shortest completion (as forced tokens) when the token
        budget is about to run out before the output can end; True if it was."""
        matcher = sequence.matcher
        left = sequence.max_tokens - len(sequence.output)
        if matcher is None or left > CLOSE_HORIZON or matcher.can_terminate():
            return False
        completion = shortest_completion(matcher)
        if completion is None:
            return False
        tokens = self.encoder.encode(completion)
        if len(tokens) + CLOSE_SLACK < left or len(tokens) > left:
            return False  # room to go on; or too late to fit (the output stays incomplete)
        trial = matcher.fork()
        if not all(trial.accept_token(t) for t in tokens):
            return False
        sequence.matcher = trial
        for token_id in tokens:
            sequence.forced.add(len(sequence.output))
            sequence.output.append(token_id)
        return True

    def _jump_forward(self, sequence: Sequence, last: int | None) -> None:
        """Append the text the grammar forces, re-encoded with the last sampled token
        (which is not fed yet) so the model sees its tokenizer's own split."""
        matcher = sequence.matcher
        if matcher is None:
            return
        forced = matcher.find_jump_forward_string().encode("utf-8")
        if not forced:
            return
        tail = [] if last is None else [last]
        tokens = self.encoder.encode(self.info.join_bytes(tail) + forced)
        room = sequence.max_tokens - len(sequence.output) + len(tail)
        tokens = tokens[:room]
        kept = 1 if tail and tokens and tokens[0] == tail[0] else 0
        trial = matcher.fork()
        if len(tail) > kept:
            trial.rollback(1)
        if not all(trial.accept_token(t) for t in tokens[kept:]):
            return  # cannot happen for a correct encoder; then simply no jump
        sequence.matcher = trial
        replaced = len(tail) > kept
        if replaced:
            sequence.output.pop()
            sequence.pending.pop()
        for index, token_id in enumerate(tokens[kept:]):
            if index or not replaced:  # a token replacing the sampled one cost its forward pass
                sequence.forced.add(len(sequence.output))
            sequence.output.append(token_id)
            sequence.pending.append(token_id)

    def _finish_if_only_stop(self, sequence: Sequence) -> None:
        """End without another forward pass when the grammar allows nothing but stopping."""
        matcher = sequence.matcher
        if sequence.done or matcher is None or not matcher.can_terminate():
            return
        if matcher.find_jump_forward_string():
            return
        if all(t in self.stop_ids for t in matcher.allowed_tokens()):
            sequence.finish_reason = "stop"

    def _cut_at_stop(self, sequence: Sequence, stop: tuple[str, ...]) -> bool:
        text = sequence.text(self.info)
        found = [(text.find(s), s) for s in stop if s in text]
        if not found:
            return False
        sequence.cut, sequence.stop_string = min(found)
        return True

"""Runs generations for the server: one at a time, off the event loop.

The decode blocks (torch), so it runs in a worker thread (``asyncio.to_thread``)
while the event loop keeps serving; an ``asyncio.Lock`` lets one request decode
at a time (continuous batching across requests is a later increment). After every
step the decoder calls back: a cancelled request's sequences are marked
``"cancelled"`` (they leave the batch), an ``auto`` sequence that has written the
call trigger switches to the calls' grammar, and a stream gets a snapshot.
"""

from __future__ import annotations

import asyncio
import codecs
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from structgen.decoding import DecodeOptions, Decoder, Sequence
from structgen.generate import tokenizer_info_for
from structgen.matcher import Matcher, compile
from structgen.token_encoder import TokenEncoder
from structgen.tokenizer_info import TokenizerInfo

from server.grammars import OutputPlan


@dataclass
class Job:
    prompt_ids: list[int]
    plan: OutputPlan
    n: int
    max_tokens: int
    options: DecodeOptions
    on_step: Callable[[list[str]], None] | None = None  # each sequence's text so far, on the worker thread
    cancel: threading.Event = field(default_factory=threading.Event)


class Engine:
    """One model, one tokenizer, one decode at a time."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        info = tokenizer_info_for(tokenizer, _logits_size(model))
        self.info: TokenizerInfo = info
        self.decoder = Decoder(model, tokenizer, info, TokenEncoder(tokenizer, info))
        self.context = int(getattr(model.config, "max_position_embeddings", 0) or 0)  # 0: unknown
        self._lock = asyncio.Lock()

    async def run(self, job: Job) -> list[Sequence]:
        """The job's finished sequences. Cancelling the caller cancels the decode;
        the lock is held until the worker has really stopped."""
        async with self._lock:
            task = asyncio.ensure_future(asyncio.to_thread(self._run, job))
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                job.cancel.set()
                await asyncio.wait([task])
                raise

    def text_so_far(self, sequence: Sequence) -> str:
        """The text of whole characters only: one split across tokens waits for the rest."""
        if sequence.cut is not None:
            return sequence.text(self.info)
        return _whole_characters(self.info.join_bytes(sequence.output))

    def _run(self, job: Job) -> list[Sequence]:
        sequences = [self.decoder.new_sequence(job.prompt_ids, job.plan.constraint, job.max_tokens) for _ in range(job.n)]
        self.decoder.run(sequences, job.options, on_step=lambda batch: self._step(job, batch))
        return sequences

    def _step(self, job: Job, sequences: list[Sequence]) -> None:
        for sequence in sequences:
            if job.cancel.is_set() and not sequence.done:
                sequence.finish_reason = "cancelled"
            elif job.plan.trigger is not None and self._triggered(job.plan, sequence):
                self._switch_to_calls(job.plan, sequence)
        if job.on_step is not None:
            job.on_step([self.text_so_far(s) for s in sequences])

    def _triggered(self, plan: OutputPlan, sequence: Sequence) -> bool:
        """The free-text phase ended because it wrote the trigger (the phase's grammar
        then allows only stopping, so the decoder ended it without sampling)."""
        return (
            sequence.finish_reason == "stop"
            and sequence.stop_string is None
            and sequence.constraint is plan.constraint
            and sequence.text(self.info).endswith(plan.trigger or "")
        )

    def _switch_to_calls(self, plan: OutputPlan, sequence: Sequence) -> None:
        """Revive ``sequence`` under the calls' grammar, fed the trigger it wrote."""
        assert plan.calls is not None and plan.calls.grammar is not None and plan.trigger is not None
        text = sequence.text(self.info)
        matcher = Matcher(compile(plan.calls.grammar, self.info))
        if not matcher.accept_string(text[len(text) - len(plan.trigger) :]):
            raise RuntimeError("internal error: the calls' grammar refused the call trigger")
        sequence.matcher = matcher
        sequence.constraint = plan.calls
        sequence.finish_reason = None


def _whole_characters(data: bytes) -> str:
    """``data`` decoded as ``Sequence.text`` decodes it, less an incomplete UTF-8
    character at its end (so that the text only ever grows)."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)


def _logits_size(model: Any) -> int:
    embeddings = model.get_output_embeddings()
    if embeddings is not None and hasattr(embeddings, "weight"):
        return int(embeddings.weight.shape[0])
    return int(model.config.vocab_size)

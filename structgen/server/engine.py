"""The model behind the endpoints: requests' sequences in, finished sequences out.

``prepare`` builds a request's sequences (grammars compiled: it blocks, so the
endpoints run it in a worker thread, under the compile-time limit); ``submit``
hands them to the scheduler's shared batch (``scheduler.py``) and returns a
``Handle`` to await, or to cancel when the client goes away. For an ``auto``
tool choice, each sequence's next phase switches it to the calls' grammar once
its free text wrote the call trigger.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Protocol

from structgen.constraint import Constraint
from structgen.decoding import DecodeOptions, Decoder, Escape, NextPhase, Sequence, StepStats
from structgen.generate import tokenizer_info_for
from structgen.matcher import Matcher, compile
from structgen.token_encoder import TokenEncoder
from structgen.tokenizer_info import TokenizerInfo
from structgen.utf8 import whole_characters

from structgen.server.grammars import OutputPlan
from structgen.server.scheduler import Job, Scheduler


class JobRunner(Protocol):
    """What runs submitted jobs, and cancels them: ``Engine``'s ``Scheduler``, or
    ``engine_vllm.VLLMEngine``."""

    def cancel(self, job: Any) -> None:
        """Stop ``job``, one of this runner's own (from any thread)."""


class Handle:
    """A submitted job, awaited on the event loop: ``job`` is the runner's own (a
    ``scheduler.Job``, or an ``engine_vllm.VLLMJob``), whose ``done`` future the
    runner resolves to the finished sequences."""

    def __init__(self, runner: JobRunner, job: Any) -> None:
        self._runner = runner
        self.job = job

    async def result(self) -> list[Sequence]:
        """The finished sequences. Cancelling the caller cancels the job, and waits
        until it has ended (its sequences have left the batch; on vLLM, its requests
        are aborted)."""
        done = asyncio.wrap_future(self.job.done)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            self.cancel()
            await asyncio.wait([done])
            raise

    def cancel(self) -> None:
        self._runner.cancel(self.job)


class Engine:
    """One model and tokenizer; every request decoded in one shared batch."""

    structural_tags = True
    """Its decoder follows structural tags (``TaggedMatcher``): ``auto`` calls may
    come between texts (``grammars.tagged_calls``)."""

    special_tag_tokens = True
    """A tool-call tag that is one special token is written as that token: the
    decoder lets it through the grammar (``Escape``, ``_calls_after_token``)."""

    def __init__(self, model: Any, tokenizer: Any, max_batch: int, observe: Callable[[StepStats], None] | None = None) -> None:
        info = tokenizer_info_for(tokenizer, _logits_size(model))
        self.info: TokenizerInfo = info
        self.decoder = Decoder(model, tokenizer, info, TokenEncoder(tokenizer, info))
        self.context = int(getattr(model.config, "max_position_embeddings", 0) or 0)  # 0: unknown
        self.scheduler = Scheduler(self.decoder, max_batch, observe)

    def prepare(
        self, prompts: list[list[int]], plan: OutputPlan, n: int, max_tokens: int, options: DecodeOptions
    ) -> list[Sequence]:
        """``n`` sequences per prompt, prompt by prompt, drawing from one random
        stream (blocking: grammars are compiled here)."""
        generator = self.decoder.new_generator(options.sampling)
        next_phase = self._calls_after_trigger(plan)
        escape = self._calls_after_token(plan)
        shown = {token_id: text.encode("utf-8") for token_id, text in plan.shown}
        sequences = []
        for prompt_ids in prompts:
            for _ in range(n):
                sequence = self.decoder.new_sequence(prompt_ids, plan.constraint, max_tokens, options, generator, plan.reasoning)
                sequence.next_phase = next_phase
                sequence.escape = escape
                sequence.shown = shown
                sequence.stop_scope = plan.stop_scope if plan.tools is not None else None  # not in a call
                for token_id in plan.start_tokens:  # the tag token, before the calls' grammar
                    sequence.forced.add(len(sequence.output))
                    sequence.output.append(token_id)
                    sequence.pending.append(token_id)
                sequences.append(sequence)
        return sequences

    def submit(self, sequences: list[Sequence], on_step: Callable[[list[Sequence]], None] | None = None) -> Handle:
        job = Job(sequences, on_step)
        self.scheduler.submit(job)
        return Handle(self.scheduler, job)

    def text_so_far(self, sequence: Sequence) -> str:
        """The text of whole characters only: one split across tokens waits for the rest."""
        if sequence.cut is not None:
            return sequence.text(self.info)
        return whole_characters(sequence.output_bytes(self.info))

    def _calls_after_trigger(self, plan: OutputPlan) -> NextPhase | None:
        """In ``auto``: once the free text ends with the call trigger (the phase's
        grammar then allows only stopping), the calls' grammar takes over, fed the trigger."""
        if plan.trigger is None:
            return None
        assert plan.calls is not None and plan.calls.grammar is not None
        calls, trigger = plan.calls, plan.trigger
        compiled = compile(plan.calls.grammar, self.info)

        def next_phase(sequence: Sequence) -> tuple[Constraint, Matcher] | None:
            if not sequence.text(self.info).endswith(trigger):
                return None
            matcher = Matcher(compiled)
            if not matcher.accept_string(trigger):
                raise RuntimeError("internal error: the calls' grammar refused the call trigger")
            return calls, matcher

        return next_phase

    def _calls_after_token(self, plan: OutputPlan) -> Escape | None:
        """In ``auto`` with the tag as a special token: the token the model may write
        (at the start, or anywhere free text could stop), then the calls' grammar."""
        if plan.escape_token is None:
            return None
        assert plan.calls is not None and plan.calls.grammar is not None
        calls = plan.calls
        compiled = compile(plan.calls.grammar, self.info)
        return Escape(plan.escape_token, not plan.text_first, lambda _: (calls, Matcher(compiled)))



def _logits_size(model: Any) -> int:
    embeddings = model.get_output_embeddings()
    if embeddings is not None and hasattr(embeddings, "weight"):
        return int(embeddings.weight.shape[0])
    return int(model.config.vocab_size)

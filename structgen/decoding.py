"""The constrained decoding loop: one forward pass per step for a whole batch.

Each sequence has its own matcher and its own decoding options (sampling, stop
strings, jump-forward). A step feeds every sequence the tokens it got since the
last step — one sampled token, or several when jump-forward appended forced
text — in one forward pass over a shared KV cache: sequences that feed fewer
tokens are padded on the left of the step, and padded cache slots are masked out
of attention, with explicit position ids, so each sequence sees exactly its own
tokens. The masks of the step are computed on a worker thread while the forward
pass runs (torch releases the GIL inside its kernels; on CUDA the launch returns
at once), and the two meet at sampling.

The batch is open: ``Decoder.step(batch, joining)`` lets sequences join between
steps (their prompts are prefilled in a cache of their own, then joined to the
batch's, ``batch_cache.py``) and drops finished ones, which is what a server's
continuous batching needs; ``Decoder.run`` is a fixed batch stepped to the end.

A failure that belongs to one sequence — its mask, its token refused, its
jump-forward, its next phase, or a mask that allows no token at all (``DeadEnd``) —
ends that sequence alone (``Sequence.error``, ``finish_reason`` ``"error"``); the
others go on. Only the forward pass, which is the whole batch's, fails the step.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from structgen.batch_cache import contiguous, describe_cache, drop_leading_padding, join_rows, joinable, select_rows
from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.completion import shortest_completion
from structgen.constraint import Constraint
from structgen.matcher import Matcher, compile
from structgen.reasoning import Reasoning
from structgen.reasoning_matcher import ReasoningMatcher
from structgen.tagged_matcher import TaggedMatcher
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


class DeadEnd(RuntimeError):
    """A sequence whose constraint allows no token where its output is not complete:
    no token of the vocabulary continues it (a text it needs that the vocabulary
    cannot spell; ``structgen.spelling`` rules out the plain cases when it compiles)."""


@dataclass(frozen=True)
class DecodeOptions:
    """How one sequence is decoded."""

    sampling: SamplingParams = SamplingParams()
    jump_forward: bool = True
    stop: tuple[str, ...] = ()
    close_within_max_tokens: bool = False


NextPhase = Callable[["Sequence"], "tuple[Constraint, Matcher] | None"]
"""Asked when a sequence's grammar allows nothing but stopping: a constraint and
its matcher (already fed what the sequence wrote, as far as it needs) take over
and decoding goes on; None ends the sequence. A grammar in phases — free text,
then tool calls — is one phase per grammar."""


StopScope = Callable[[str, bool], int]
"""How much of a sequence's text (``final``: once it has ended) its stop strings
are looked for in; the rest is a constraint's own, where a stop string is no stop
(a tool call's JSON, which a cut would leave broken). While the sequence goes on
(``final`` False) the scope holds only text that stays in it whatever comes next."""


@dataclass(frozen=True)
class Escape:
    """A special token a sequence may write although no grammar can allow it (its
    bytes are no text: a tool-call tag such as Mistral's ``[TOOL_CALLS]``). The
    mask lets it through at the start of the output (``at_start_only``) or wherever
    the sequence's grammar could stop; once written, ``then`` gives the constraint
    and matcher that take over (the calls' grammar), and decoding goes on."""

    token_id: int
    at_start_only: bool
    then: Callable[["Sequence"], "tuple[Constraint, Matcher]"]


@dataclass
class Sequence:
    """One generation in a batch: its constraint, matcher, options and tokens so far."""

    prompt_ids: list[int]
    constraint: Constraint
    matcher: Matcher | ReasoningMatcher | TaggedMatcher | None
    max_tokens: int
    options: DecodeOptions = DecodeOptions()
    generator: Any = None  # torch.Generator for sampling (shared by the sequences of one request); None: greedy
    next_phase: NextPhase | None = None  # asked once, when the grammar allows only stopping
    output: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # accepted, not yet fed to the model
    forced: set[int] = field(default_factory=set)  # positions in output appended by jump-forward
    positions: int = 0  # tokens of this sequence in the KV cache
    forward_passes: int = 0
    finish_reason: str | None = None
    stop_string: str | None = None  # the stop= string that ended it
    stop_scope: StopScope | None = None  # where the stop strings are looked for (None: in the whole text)
    cut: int | None = None  # characters of the decoded output kept when a stop string ended it
    started: bool = False  # the forced start was appended (Decoder.step does it on joining)
    escape: Escape | None = None  # a special token that switches to another constraint
    shown: dict[int, bytes] = field(default_factory=dict)  # special ids that show in the text, as these bytes
    error: Exception | None = None  # what ended this sequence alone (finish_reason "error")
    reasoning: Reasoning | None = None  # a reasoning section before the constraint's answer

    def output_bytes(self, info: TokenizerInfo) -> bytes:
        """The output's bytes (special ids spell nothing, unless ``shown``)."""
        if not self.shown:
            return info.join_bytes(self.output)
        vocab, shown = info.decoded_vocab, self.shown
        return b"".join(shown.get(t, vocab[t]) for t in self.output)

    def text(self, info: TokenizerInfo) -> str:
        # cut counts characters, not bytes: a replaced invalid byte is one character of three bytes
        return self.output_bytes(info).decode("utf-8", errors="replace")[: self.cut]

    @property
    def done(self) -> bool:
        return self.finish_reason is not None


@dataclass
class Batch:
    """The sequences being decoded together and their shared KV cache."""

    sequences: list[Sequence] = field(default_factory=list)
    cache: Any = None  # a transformers Cache; None before the first forward pass
    attention: Any = None  # (sequences, cache slots) long tensor: 1 where a slot holds a token


@dataclass(frozen=True)
class StepStats:
    """What one step did: for metrics."""

    batch_size: int  # sequences in the forward pass
    joined: int  # of them, how many joined at this step
    mask_seconds: float  # computing the batch's masks (on the mask worker, during the forward pass)
    forward_seconds: float  # prefill of the joining sequences and the step's forward pass


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


def windowed(model: Any) -> bool:
    """Whether ``model``'s cache has sliding-window layers (``batch_cache.contiguous``),
    read from its config before any forward pass (False when it cannot tell)."""
    try:
        from transformers.cache_utils import DynamicCache

        return any(DynamicCache(config=model.config).is_sliding)
    except Exception:  # not a transformers model, or a config DynamicCache cannot read
        return False


def contiguous_rows(model: Any) -> bool:
    """Whether a row's tokens must stay contiguous in ``model``'s cache, read from its
    config before any forward pass: a sliding window counts cache slots (``windowed``),
    and a recurrent / linear-attention state (LFM2's short convolution, Mamba-style
    hybrids) runs over every position fed, padding included, so padding between a
    row's tokens would change it; any other layout ``batch_cache`` cannot join is
    treated the same way. (Padding before a row's first token is harmless: its state
    starts from zero either way.) False when it cannot tell."""
    if windowed(model):
        return True
    try:
        from transformers.cache_utils import DynamicCache

        cache = DynamicCache(config=model.config)
    except Exception:  # not a transformers model, or a config DynamicCache cannot read
        return False
    return any(getattr(cache, "is_linear", ())) or not joinable(cache)


def chunked(model: Any) -> bool:
    """Whether ``model`` has chunked attention (Llama 4): its cache layers are the
    sliding window's, but chunk boundaries are not checked against joining, so such
    a batch takes no more rows (``Decoder.can_join``)."""
    try:
        config = model.config.get_text_config(decoder=True)
    except Exception:
        return False
    types = getattr(config, "layer_types", None) or []
    return "chunked_attention" in types or getattr(config, "attention_chunk_size", None) is not None


def step_width(pending: list[int]) -> int:
    """How many tokens each row feeds in a step, given how many each has pending.

    Every row computes as many positions as the widest feed (the shorter ones are
    padded), so one row with a long jump-forward would make all the others compute
    padding: the width is the longest feed unless padding would then be more than
    half the positions computed; rows with more wait for the next step to feed the
    rest (and sample only then). One row, or rows alike, feed everything at once."""
    for width in range(max(pending), 1, -1):
        if 2 * sum(min(n, width) for n in pending) >= width * len(pending):
            return width
    return 1


class Decoder:
    """Steps batches of sequences on one model."""

    def __init__(self, model: Any, tokenizer: Any, info: TokenizerInfo, encoder: TokenEncoder) -> None:
        self.model = model
        self.info = info
        self.encoder = encoder
        self.stop_ids = frozenset(info.stop_token_ids)
        pad = getattr(tokenizer, "pad_token_id", None)
        self.pad_id = pad if pad is not None else (info.stop_token_ids or [0])[0]
        self.windowed = windowed(model)
        self.contiguous_rows = contiguous_rows(model)
        self.chunked = chunked(model)

    def new_sequence(
        self,
        prompt_ids: list[int],
        constraint: Constraint,
        max_tokens: int,
        options: DecodeOptions = DecodeOptions(),
        generator: Any = None,
        reasoning: Reasoning | None = None,
    ) -> Sequence:
        """A sequence to decode; ``generator`` (see ``new_generator``) is shared by
        sequences that should draw from one random stream, made here when it is
        needed and not given. With ``reasoning``, the output is that section of
        free text first, then what ``constraint`` allows (``reasoning_matcher``)."""
        check_request(prompt_ids, max_tokens)
        matcher: Matcher | ReasoningMatcher | TaggedMatcher | None = None
        if constraint.grammar is not None:  # only what this vocabulary can spell (Unspellable: nothing)
            matcher = Matcher(compile(constraint.grammar, self.info))
        elif constraint.tags is not None:
            matcher = TaggedMatcher(constraint.tags, self.info)
        if reasoning is not None:
            matcher = ReasoningMatcher(reasoning, matcher, self.info)
        if generator is None:
            generator = self.new_generator(options.sampling)
        return Sequence(list(prompt_ids), constraint, matcher, max_tokens, options, generator, pending=list(prompt_ids),
                        reasoning=reasoning)

    def new_generator(self, sampling: SamplingParams) -> Any:
        """A random stream for ``sampling`` on the model's device (None when greedy)."""
        return make_generator(sampling, self.model.device)

    def run(self, sequences: list[Sequence]) -> float:
        """Decode a fixed batch until every sequence has finished; returns the seconds
        spent. A sequence that failed (``Sequence.error``) raises its error once the
        others have finished."""
        started = time.perf_counter()
        batch = Batch()
        joining = list(sequences)
        while self.step(batch, joining) is not None:
            joining = []
        for sequence in sequences:
            if sequence.error is not None:
                raise sequence.error
        return time.perf_counter() - started

    def step(self, batch: Batch, joining: list[Sequence] | None = None) -> StepStats | None:
        """One forward pass and one token (or more, with jump-forward) for every
        sequence of ``batch``, after ``joining`` joined it; None when no sequence
        was left to step. Sequences marked done since the last step leave first,
        finished ones leave after it. A sequence whose own part of the step fails
        ends with ``error`` set; the others go on."""
        import torch

        with torch.inference_mode():
            self._leave(batch)
            for sequence in joining or ():
                self._alone(sequence, self._start, sequence)
            newcomers = [s for s in joining or () if not s.done]
            everyone = batch.sequences + newcomers
            if not everyone:
                return None
            if newcomers and not self.can_join(batch):
                raise RuntimeError(f"sequences cannot join this batch: {describe_cache(batch.cache)}; ask can_join first")
            masks = mask_worker().submit(self._fill_masks, everyone)
            began = time.perf_counter()
            if newcomers:
                self._join(batch, newcomers)
            logits = self._forward(batch)
            forward_seconds = time.perf_counter() - began
            bitmask, mask_seconds, failures = masks.result()
            for row, exc in failures:
                self._fail(everyone[row], exc)
            ready = [i for i, s in enumerate(everyone) if not s.pending and not s.done]  # the others feed the rest next step
            for row in ready:
                if everyone[row].matcher is not None and not bitmask[row].any():
                    self._fail(everyone[row], self._dead_end(everyone[row]))
            ready = [i for i in ready if not everyone[i].done]
            if ready:
                logits, bitmask, fed = logits[ready], bitmask[ready], [everyone[i] for i in ready]
                penalize_repeats(logits, [s.output for s in fed], [s.options.sampling.repetition_penalty for s in fed])
                apply_token_bitmask_inplace(logits, bitmask)
                for sequence, token_id in zip(fed, self._choose(logits, fed)):
                    sequence.forward_passes += 1
                    self._alone(sequence, self._advance, sequence, token_id)
            self._leave(batch)
        return StepStats(len(everyone), len(newcomers), mask_seconds, forward_seconds)

    @staticmethod
    def _alone(sequence: Sequence, work: Callable[..., None], *args: Any) -> None:
        """``work(*args)``, a part of the step that is ``sequence``'s own: a failure ends
        that sequence alone."""
        try:
            work(*args)
        except Exception as exc:
            Decoder._fail(sequence, exc)

    @staticmethod
    def _fail(sequence: Sequence, exc: Exception) -> None:
        """End ``sequence`` with ``exc``: it leaves the batch; the others go on."""
        if sequence.error is None:
            sequence.error = exc
        sequence.finish_reason = "error"

    def _dead_end(self, sequence: Sequence) -> DeadEnd:
        written = sequence.output_bytes(self.info)[-60:]
        return DeadEnd(
            f"the constraint ({sequence.constraint.description}) allows no token after {len(sequence.output)} "
            f"tokens of output (ending {written!r}): no token of this vocabulary continues it"
        )

    def _start(self, sequence: Sequence) -> None:
        """Append the text the grammar forces before any token; the forced start may
        already fill ``max_tokens``."""
        if sequence.started or sequence.done:
            return
        sequence.started = True
        escape = sequence.escape
        if sequence.options.jump_forward and not (escape is not None and escape.at_start_only):
            self._jump_forward(sequence, None)  # (an escape at the start is a choice: nothing is forced)
        self._check_end(sequence)

    def _join(self, batch: Batch, joining: list[Sequence]) -> None:
        """Prefill the joining sequences (their pending tokens but the last, which
        the step feeds; prompts much longer than the others' feed the rest in
        later steps), then join their cache to the batch's. An empty batch needs
        no prefill: the step feeds them everything."""
        import torch

        device = self.model.device
        if not batch.sequences:
            batch.sequences, batch.cache = list(joining), None
            batch.attention = torch.zeros((len(joining), 0), dtype=torch.long, device=device)
            return
        cache: Any = None
        attention = torch.zeros((len(joining), 0), dtype=torch.long, device=device)
        if any(len(s.pending) > 1 for s in joining):
            last = [s.pending[-1] for s in joining]
            for sequence in joining:
                sequence.pending = sequence.pending[:-1]
            # a fresh cache: padding on the left of a row is harmless, so a model whose
            # rows must stay contiguous prefills everything at once (later steps keep them so)
            pending = [len(s.pending) for s in joining]
            width = max(pending) if self._keeps_rows_contiguous(batch.cache) else step_width(pending)
            _, cache, attention = self._feed(joining, None, attention, width)
            for sequence, token_id in zip(joining, last):
                sequence.pending.append(token_id)  # after what a long prompt has left to feed
        if batch.attention is None:
            batch.attention = torch.zeros((0, 0), dtype=torch.long, device=device)
        batch.cache, batch.attention = join_rows(batch.cache, batch.attention, cache, attention)
        batch.sequences = batch.sequences + joining

    def _leave(self, batch: Batch) -> None:
        """Drop the finished sequences' rows, and padding no row needs any more."""
        import torch

        keep = [i for i, s in enumerate(batch.sequences) if not s.done]
        if len(keep) == len(batch.sequences):
            return
        if not keep:
            batch.sequences, batch.cache, batch.attention = [], None, None
            return
        if batch.cache is not None:
            index = torch.tensor(keep, device=batch.attention.device)
            select_rows(batch.cache, index)
            batch.attention = batch.attention[index]
        else:
            batch.attention = batch.attention[keep]
        batch.sequences = [batch.sequences[i] for i in keep]
        batch.cache, batch.attention = drop_leading_padding(batch.cache, batch.attention)

    def _choose(self, logits: Any, sequences: list[Sequence]) -> list[int]:
        """The next token of each row: greedy rows together, sampled rows in groups
        that share their parameters and random stream."""
        greedy = [i for i, s in enumerate(sequences) if s.options.sampling.greedy]
        if len(greedy) == len(sequences):
            return [int(t) for t in logits.argmax(dim=-1).tolist()]
        chosen = [0] * len(sequences)
        groups: dict[tuple[int, SamplingParams], list[int]] = {}
        for row, sequence in enumerate(sequences):
            if not sequence.options.sampling.greedy:
                groups.setdefault((id(sequence.generator), sequence.options.sampling), []).append(row)
        parts = [(greedy, logits[greedy].argmax(dim=-1))] if greedy else []
        for rows in groups.values():
            first = sequences[rows[0]]
            parts.append((rows, sample(logits[rows], first.options.sampling, first.generator)))
        for rows, tokens in parts:
            for row, token_id in zip(rows, tokens.tolist()):
                chosen[row] = int(token_id)
        return chosen

    def _fill_masks(self, active: list[Sequence]) -> tuple[npt.NDArray[np.int32], float, list[tuple[int, Exception]]]:
        """The rows' masks (on the mask worker), the seconds they took, and the rows
        whose mask failed, with why (those sequences fail alone, on the step's thread)."""
        began = time.perf_counter()
        bitmask = allocate_token_bitmask(len(active), self.info.vocab_size)
        failures: list[tuple[int, Exception]] = []
        for row, sequence in enumerate(active):
            if sequence.matcher is not None:
                try:
                    sequence.matcher.fill_next_token_bitmask(bitmask, row)
                except Exception as exc:
                    failures.append((row, exc))
                    continue
                if self._escape_open(sequence):
                    token_id = sequence.escape.token_id  # type: ignore[union-attr]
                    bitmask[row].view(np.uint32)[token_id >> 5] |= np.uint32(1 << (token_id & 31))
        return bitmask, time.perf_counter() - began, failures

    @staticmethod
    def _escape_open(sequence: Sequence) -> bool:
        """Whether the sequence's escape token may come next."""
        escape, matcher = sequence.escape, sequence.matcher
        if escape is None or matcher is None:
            return False
        return not sequence.output if escape.at_start_only else matcher.can_terminate()

    def _forward(self, batch: Batch) -> Any:
        """The step's forward pass over the whole batch: the logits of each row's last
        fed token (only rows that fed all their pending tokens sample from them)."""
        logits, batch.cache, batch.attention = self._feed(batch.sequences, batch.cache, batch.attention, self._width(batch))
        return logits

    def _keeps_rows_contiguous(self, cache: Any) -> bool:
        """Whether no padding may fall between a row's tokens (``contiguous_rows``;
        also for a cache found at run time to be windowed, or not joinable)."""
        return self.contiguous_rows or contiguous(cache) or not joinable(cache)

    def _width(self, batch: Batch) -> int:
        """How many tokens each row feeds in this step (``step_width``). In a cache
        whose rows must stay contiguous (a sliding window counts cache slots; a
        recurrent state runs over padding too), rows that already have tokens in it
        all feed the same number (the fewest pending; the others feed the rest in
        later steps), so no padding falls between a row's tokens; rows with nothing
        cached yet may be padded on the left."""
        pending = [len(s.pending) for s in batch.sequences]
        if not self._keeps_rows_contiguous(batch.cache):
            return step_width(pending)
        started = [len(s.pending) for s in batch.sequences if s.positions > 0]
        return min(started) if started else max(pending)

    def can_join(self, batch: Batch) -> bool:
        """Whether sequences may join ``batch`` now: always when it is empty; else
        when its cache's layout can take more rows (``batch_cache.joinable``; not
        with chunked attention); a sequence that cannot waits until the batch drains."""
        return not batch.sequences or (joinable(batch.cache) and not self.chunked)

    def _feed(self, active: list[Sequence], cache: Any, attention: Any, limit: int | None = None) -> tuple[Any, Any, Any]:
        """Feed each sequence its pending tokens (at most ``limit``; the rest stay
        pending), left-padded to the longest."""
        import torch

        feeds = [s.pending[:limit] for s in active]
        width = max(len(f) for f in feeds)
        ids = [[self.pad_id] * (width - len(f)) + f for f in feeds]
        step_mask = [[0] * (width - len(f)) + [1] * len(f) for f in feeds]
        positions = [
            [s.positions] * (width - len(f)) + list(range(s.positions, s.positions + len(f))) for s, f in zip(active, feeds)
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
        for sequence, fed in zip(active, feeds):
            sequence.positions += len(fed)
            sequence.pending = sequence.pending[len(fed) :]
        return out.logits[:, -1, :].float(), out.past_key_values, attention

    def _advance(self, sequence: Sequence, token_id: int) -> None:
        """Take the sampled token; then jump forward, and see whether the sequence ended."""
        escape = sequence.escape
        if escape is not None and token_id == escape.token_id:
            sequence.escape = sequence.next_phase = None
            sequence.output.append(token_id)
            sequence.pending.append(token_id)
            sequence.constraint, sequence.matcher = escape.then(sequence)
            if sequence.options.jump_forward:
                self._jump_forward(sequence, None)
            self._check_end(sequence)
            return
        if token_id in self.stop_ids:
            if sequence.matcher is not None and not sequence.matcher.accept_token(token_id):
                raise RuntimeError(f"internal error: stop token {token_id} was allowed by the mask, then refused")
            self._end(sequence, "stop")
            return
        if sequence.matcher is not None and not sequence.matcher.accept_token(token_id):
            raise RuntimeError(f"internal error: token {token_id} was allowed by the mask, then refused")
        sequence.output.append(token_id)
        sequence.pending.append(token_id)
        if sequence.options.jump_forward and sequence.matcher is not None:
            self._jump_forward(sequence, token_id)
        self._check_end(sequence)

    def _check_end(self, sequence: Sequence) -> None:
        """End the sequence on a stop string, on ``max_tokens``, or when only stopping is left."""
        options = sequence.options
        if cut_at_stop(sequence, self.info):
            sequence.finish_reason = "stop"
            return
        if len(sequence.output) >= sequence.max_tokens:
            self._end(sequence, "length")
            return
        if options.close_within_max_tokens and self._close_near_budget(sequence):
            self._end(sequence, "length")
            return
        self._finish_if_only_stop(sequence)

    def _end(self, sequence: Sequence, reason: str) -> None:
        """End ``sequence`` for ``reason``; but where its stop scope held back a tail
        that might have become a tool call's tag, a stop string found there once it
        is final ends it at that stop string."""
        if sequence.stop_scope is not None and cut_at_stop(sequence, self.info, final=True):
            reason = "stop"
        sequence.finish_reason = reason
    def _close_near_budget(self, sequence: Sequence) -> bool:
        """Append the output's shortest completion (as forced tokens) when the token
        budget is about to run out before the output can end; True if it was."""
        matcher = sequence.matcher
        left = sequence.max_tokens - len(sequence.output)
        if matcher is None or left > CLOSE_HORIZON or matcher.can_terminate():
            return False
        completion = self._completion(matcher)
        if completion is None:
            return False
        try:
            tokens = self.encoder.encode(completion)
        except ValueError:  # a byte no token spells: not this way
            return False
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

    @staticmethod
    def _completion(matcher: Matcher | ReasoningMatcher | TaggedMatcher) -> bytes | None:
        """The shortest bytes that complete the output (through a reasoning section:
        the rest of its tags, then the answer's shortest completion); None where it
        cannot be told (a structural tag's text)."""
        if isinstance(matcher, TaggedMatcher):
            return None
        if not isinstance(matcher, ReasoningMatcher):
            return shortest_completion(matcher)
        closing = matcher.closing_text()
        if closing is None:  # in the answer
            return shortest_completion(matcher.answer) if isinstance(matcher.answer, Matcher) else None
        start = matcher.answer_at_start()
        if start is None:
            return closing.encode("utf-8")
        rest = shortest_completion(start) if isinstance(start, Matcher) else None
        return None if rest is None else closing.encode("utf-8") + rest

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
        try:
            tokens = self.encoder.encode(self.info.join_bytes(tail) + forced)
        except ValueError:  # a byte no token spells: then no jump (the mask decides, token by token)
            return
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
        """End without another forward pass when the grammar allows nothing but
        stopping, unless the sequence's next phase takes over."""
        matcher = sequence.matcher
        if sequence.done or matcher is None or not matcher.can_terminate():
            return
        if matcher.find_jump_forward_string():
            return
        if not all(t in self.stop_ids for t in matcher.allowed_tokens()):
            return
        phase = sequence.next_phase(sequence) if sequence.next_phase is not None else None
        if phase is None:
            self._end(sequence, "stop")
            return
        sequence.next_phase = None
        sequence.constraint, sequence.matcher = phase
        if sequence.options.jump_forward:
            self._jump_forward(sequence, None)
        self._check_end(sequence)


def cut_at_stop(sequence: Sequence, info: TokenizerInfo, final: bool = False) -> bool:
    """Cut ``sequence``'s text at the earliest of its stop strings there, within its
    ``stop_scope`` (``final``: the sequence has ended); True when one was found."""
    stop = sequence.options.stop
    if not stop:
        return False
    text = sequence.text(info)
    start = 0
    if sequence.reasoning is not None:  # stop strings end the answer, never the reasoning
        begins = sequence.reasoning.answer_offset(text)
        if begins is None:
            return False
        start, text = begins, text[begins:]
    if sequence.stop_scope is not None:
        text = text[: sequence.stop_scope(text, final)]
    found = [(text.find(s), s) for s in stop if s in text]
    if not found:
        return False
    at, sequence.stop_string = min(found)
    sequence.cut = start + at
    return True

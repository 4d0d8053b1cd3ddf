"""``generate``: constrained generation on a transformers causal LM.

    person = structgen.generate(model, tokenizer, "Extract: ...", schema=Person)

returns a ``Person``; ``schema=`` a JSON Schema returns a dict or list; ``regex=``,
``grammar=``, ``choices=`` and ``structural_tag=`` (free text with triggered sections,
``structgen.structural_tag``) return text. ``details=True`` returns a
``Generation`` with the text, tokens, forward passes and jump-forward savings.
A chat template with a reasoning section (``<think>`` ... ``</think>``) gets
one: the model thinks freely, then answers in the constraint
(``reasoning=``, ``thinking_budget=``; ``structgen.reasoning``).
``generate_batch`` runs several prompts (each with its own schema if wanted) in
one batch.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence as Seq

from structgen.constraint import Constraint, make_constraint
from structgen.decoding import DecodeOptions, Decoder, Sequence
from structgen.generation import Generation, IncompleteOutputError
from structgen.reasoning import Reasoning, ReasoningError, reasoning_for
from structgen.sampling import SamplingParams
from structgen.tagged_matcher import tags_accept
from structgen.token_encoder import TokenEncoder
from structgen.tokenizer_info import TokenizerInfo

DEFAULT_MAX_TOKENS = 512


def generate(
    model: Any,
    tokenizer: Any,
    prompt: str | list[dict[str, Any]],
    *,
    schema: Any = None,
    grammar: Any = None,
    regex: str | None = None,
    choices: list[str] | None = None,
    structural_tag: Any = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = 0.0,
    top_p: float = 1.0,
    top_k: int = 0,
    seed: int | None = None,
    repetition_penalty: float = 1.0,
    stop: str | Seq[str] | None = None,
    jump_forward: bool = True,
    close_within_max_tokens: bool = False,
    num_beams: int = 1,
    details: bool = False,
    reasoning: bool | Reasoning | None = None,
    thinking_budget: int | None = None,
    **schema_options: Any,
) -> Any:
    """Generate one output for ``prompt`` (text, or chat messages for the model's
    chat template) that matches the given constraint (none: free text).

    Raises ``IncompleteOutputError`` when ``max_tokens`` ends a constrained output
    before it is complete (``close_within_max_tokens=True`` ends it instead with its
    shortest completion as the budget runs out: a valid, cut-short output with
    ``finish_reason="length"``), ``OutputValidationError`` when a finished output fails a
    schema keyword the grammar only approximates. ``schema_options`` go to the
    schema translation (``whitespace=``, ``strict=``, ...).

    ``reasoning``: None (the default) gives chat messages the reasoning section
    their template has, if any; True requires one; False turns it off; a
    ``Reasoning`` is used as given. ``thinking_budget`` bounds the section in
    tokens, after which its end tag is forced. The reasoning text is
    ``Generation.reasoning`` (``details=True``); the value is the answer's.
    """
    constraint = make_constraint(
        schema=schema, grammar=grammar, regex=regex, choices=choices, structural_tag=structural_tag, schema_options=schema_options
    )
    sampling = SamplingParams(temperature, top_p, top_k, seed, repetition_penalty)
    if num_beams < 1:
        raise ValueError(f"num_beams must be at least 1, got {num_beams}")
    section = resolve_reasoning(tokenizer, prompt, reasoning, thinking_budget)
    if num_beams > 1:
        from structgen.beam_search import beam_search

        if section is not None:
            raise ValueError("num_beams > 1 does not search a reasoning section: pass reasoning=False")
        if constraint.tags is not None:
            raise ValueError("num_beams > 1 does not search a structural tag's sections")

        if sampling != SamplingParams() or stop is not None or close_within_max_tokens:
            raise ValueError(
                "num_beams > 1 ranks beams by the model's probabilities: temperature, top_p, top_k, "
                "seed, repetition_penalty, stop and close_within_max_tokens do not apply to it"
            )

        decoder = _decoder(model, tokenizer)
        generation = beam_search(decoder, _prompt_ids(tokenizer, prompt), constraint, max_tokens, num_beams)
        return _finish(generation, constraint, details)
    options = DecodeOptions(sampling, jump_forward, _stops(stop), close_within_max_tokens)
    [generation] = _run(model, tokenizer, [prompt], [constraint], max_tokens, options, [section])
    return _finish(generation, constraint, details)


def generate_batch(
    model: Any,
    tokenizer: Any,
    prompts: Seq[str | list[dict[str, Any]]],
    *,
    schema: Any = None,
    schemas: Seq[Any] | None = None,
    grammar: Any = None,
    regex: str | None = None,
    choices: list[str] | None = None,
    structural_tag: Any = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = 0.0,
    top_p: float = 1.0,
    top_k: int = 0,
    seed: int | None = None,
    repetition_penalty: float = 1.0,
    stop: str | Seq[str] | None = None,
    jump_forward: bool = True,
    close_within_max_tokens: bool = False,
    details: bool = False,
    reasoning: bool | Reasoning | None = None,
    thinking_budget: int | None = None,
    **schema_options: Any,
) -> list[Any]:
    """``generate`` for several prompts in one batch (one forward pass per step for
    all). ``schemas=`` gives each prompt its own schema; the other constraints are
    shared. With ``details=True`` an incomplete output is a ``Generation`` with
    ``value=None`` instead of an exception. ``reasoning`` and ``thinking_budget``
    apply to each prompt as in ``generate``."""
    if schemas is not None:
        if schema is not None or grammar is not None or regex is not None or choices is not None or structural_tag is not None:
            raise ValueError("schemas= gives every prompt its constraint: no other constraint may be given")
        if len(schemas) != len(prompts):
            raise ValueError(f"{len(schemas)} schemas for {len(prompts)} prompts")
        constraints = [make_constraint(schema=s, schema_options=schema_options) for s in schemas]
    else:
        shared = make_constraint(
            schema=schema, grammar=grammar, regex=regex, choices=choices, structural_tag=structural_tag,
            schema_options=schema_options,
        )
        constraints = [shared] * len(prompts)
    options = DecodeOptions(
        SamplingParams(temperature, top_p, top_k, seed, repetition_penalty),
        jump_forward,
        _stops(stop),
        close_within_max_tokens,
    )
    sections = [resolve_reasoning(tokenizer, p, reasoning, thinking_budget) for p in prompts]
    generations = _run(model, tokenizer, list(prompts), constraints, max_tokens, options, sections)
    if details:
        return [_parsed(g, c, raise_incomplete=False) for g, c in zip(generations, constraints)]
    return [_finish(g, c, details=False) for g, c in zip(generations, constraints)]


def _run(
    model: Any,
    tokenizer: Any,
    prompts: list[str | list[dict[str, Any]]],
    constraints: list[Constraint],
    max_tokens: int,
    options: DecodeOptions,
    sections: list[Reasoning | None],
) -> list[Generation]:
    decoder = _decoder(model, tokenizer)
    generator = decoder.new_generator(options.sampling)  # one random stream for the batch
    sequences = [
        decoder.new_sequence(_prompt_ids(tokenizer, p), c, max_tokens, options, generator, r)
        for p, c, r in zip(prompts, constraints, sections)
    ]
    seconds = decoder.run(sequences)
    return [_generation(decoder.info, s, seconds) for s in sequences]


def resolve_reasoning(tokenizer: Any, prompt: Any, reasoning: bool | Reasoning | None, budget: int | None) -> Reasoning | None:
    """The reasoning section of one prompt's output, from ``generate``'s options."""
    if isinstance(reasoning, Reasoning):
        section: Reasoning | None = reasoning
    elif reasoning is False:
        section = None
    elif reasoning is None or reasoning is True:
        section = reasoning_for(tokenizer, prompt) if isinstance(prompt, list) else None
        if section is None and reasoning is True:
            raise ReasoningError(
                "reasoning=True needs chat messages and a chat template with a reasoning section "
                "(or pass reasoning=Reasoning(start=..., end=...))"
            )
    else:
        raise TypeError(f"reasoning= is None, True, False or a Reasoning, not {type(reasoning).__name__}")
    if budget is not None:
        if section is None:
            if reasoning is False:
                raise ValueError("thinking_budget= with reasoning=False")
            raise ReasoningError("thinking_budget= needs a reasoning section (this prompt's template has none)")
        section = section.with_budget(budget)
    return section


def _generation(info: TokenizerInfo, sequence: Sequence, seconds: float) -> Generation:
    text, reasoning = sequence.text(info), None
    if sequence.reasoning is not None:
        split = sequence.reasoning.split(text)
        text, reasoning = split.answer or "", split.reasoning
    return Generation(
        value=None,
        text=text,
        reasoning=reasoning,
        token_ids=list(sequence.output),
        finish_reason=sequence.finish_reason or "length",
        prompt_tokens=len(sequence.prompt_ids),
        forward_passes=sequence.forward_passes,
        forced_tokens=len(sequence.forced),
        seconds=seconds,
        stop_string=sequence.stop_string,
    )


def _finish(generation: Generation, constraint: Constraint, details: bool) -> Any:
    generation = _parsed(generation, constraint, raise_incomplete=True)
    return generation if details else generation.value


def _parsed(generation: Generation, constraint: Constraint, *, raise_incomplete: bool) -> Generation:
    """``generation`` with its value: the constraint's parse of a complete output.
    A stop string cuts the text wherever it appears, so only the grammar can say
    whether what is left is complete."""
    complete = constraint.free or (generation.finish_reason == "stop" and generation.stop_string is None)
    if generation.reasoning is not None and generation.finish_reason == "length" and not generation.text:
        complete = False  # cut inside the reasoning section: no answer came
    if not complete:
        complete = _grammar_complete(constraint, generation.text)
    if not complete:
        if raise_incomplete:
            if generation.stop_string is not None:
                cause = f"the stop string {generation.stop_string!r} ended the output"
            else:
                cause = f"max_tokens ({len(generation.token_ids)}) ran out"
            raise IncompleteOutputError(
                f"{cause} before it was complete "
                f"({constraint.description}); the partial text is {generation.text[-200:]!r}",
                generation.text,
                generation,
            )
        return generation
    generation.value = constraint.parse(generation.text)
    return generation


def _grammar_complete(constraint: Constraint, text: str) -> bool:
    if constraint.tags is not None:
        return tags_accept(constraint.tags, text)
    return constraint.grammar is not None and constraint.grammar.accepts(text)


def _stops(stop: str | Seq[str] | None) -> tuple[str, ...]:
    if stop is None:
        return ()
    stops = (stop,) if isinstance(stop, str) else tuple(stop)
    if not all(isinstance(s, str) and s for s in stops):
        raise ValueError("stop= must be a non-empty string or a list of them")
    return stops


def _prompt_ids(tokenizer: Any, prompt: str | list[dict[str, Any]]) -> list[int]:
    """Token ids of a text prompt, or of chat messages through the chat template
    (with the assistant's turn opened)."""
    if isinstance(prompt, str):
        return [int(i) for i in tokenizer(prompt)["input_ids"]]
    if not isinstance(prompt, list) or not all(isinstance(m, dict) for m in prompt):
        raise TypeError("a prompt is a string or a list of chat messages ({'role': ..., 'content': ...})")
    text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    return [int(i) for i in tokenizer(text, add_special_tokens=False)["input_ids"]]


def _decoder(model: Any, tokenizer: Any) -> Decoder:
    """A ``Decoder`` for ``model`` (cheap: what is costly is cached per tokenizer)."""
    info = tokenizer_info_for(tokenizer, _logits_size(model))
    return Decoder(model, tokenizer, info, TokenEncoder(tokenizer, info))


# keyed weakly: a cache must not keep a tokenizer alive, nor outlive it (ids are reused)
_infos: weakref.WeakKeyDictionary[Any, dict[int, TokenizerInfo]] = weakref.WeakKeyDictionary()


def tokenizer_info_for(tokenizer: Any, vocab_size: int | None = None) -> TokenizerInfo:
    """``TokenizerInfo.from_huggingface``, once per tokenizer and logits size."""
    try:
        infos = _infos.setdefault(tokenizer, {})
    except TypeError:  # not weakly referenceable: no cache
        infos = {}
    info = infos.get(vocab_size or 0)
    if info is None:
        info = infos[vocab_size or 0] = TokenizerInfo.from_huggingface(tokenizer, vocab_size)
    return info


def _logits_size(model: Any) -> int:
    embeddings = model.get_output_embeddings()
    if embeddings is not None and hasattr(embeddings, "weight"):
        return int(embeddings.weight.shape[0])
    return int(model.config.vocab_size)

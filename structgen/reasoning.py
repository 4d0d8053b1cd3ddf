"""A reasoning section: free text a model thinks in before its answer, between
two tags its chat template defines (``<think>`` ... ``</think>`` and the like).

The section takes no mask (the model thinks freely) except that it cannot stop
before its end tag, and once a ``budget`` of tokens is spent the end tag is the
only way on. After the end tag comes at most ``MAX_SEPARATOR`` whitespace bytes
(templates write ``"\\n\\n"`` there), then the answer, which the output's
constraint governs exactly (``reasoning_matcher.ReasoningMatcher``).

``reasoning_for`` reads the tags from a tokenizer's chat template, not from a
model's name: it renders a past assistant turn holding ``reasoning_content`` and
looks at what the template wrote around it, or finds the generation prompt
ending in an opening tag the template also closes.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, replace
from typing import Any

MAX_SEPARATOR = 8
"""Whitespace bytes after the end tag that belong to neither section: the first
(up to this many) are the separator, the rest the answer's own."""

SEPARATOR_BYTES = b" \t\r\n"

EFFORT_BUDGETS: dict[str, int | None] = {"none": 0, "minimal": 0, "low": 512, "medium": 2048, "high": None}
"""``reasoning_effort`` as a token budget for the section (None: only ``max_tokens``
bounds it). ``none`` / ``minimal`` turn thinking off in a template that can
(``enable_thinking``), else close the section at once."""

_R = "\x02structgen-reasoning\x03"
_C = "\x02structgen-content\x03"
_TAG = re.compile(r"<[^<>\s]{1,40}>")


class ReasoningError(ValueError):
    """A reasoning option that cannot apply: a template without a reasoning
    section asked for one, or an invalid budget."""


@dataclass(frozen=True)
class Reasoning:
    """Where the reasoning section is and how long it may be.

    ``opened``: the prompt already wrote ``start`` (the output begins inside the
    section); otherwise the output must begin with ``start``. ``budget``: the most
    tokens the section may take before its end tag is forced (None: unbounded)."""

    start: str = "<think>"
    end: str = "</think>"
    opened: bool = False
    budget: int | None = None

    def __post_init__(self) -> None:
        if not self.start or not self.end:
            raise ReasoningError("a reasoning section needs a start and an end tag")
        if self.budget is not None and (not isinstance(self.budget, int) or self.budget < 0):
            raise ReasoningError(f"a reasoning budget is a number of tokens >= 0, not {self.budget!r}")

    def with_budget(self, budget: int | None) -> Reasoning:
        return replace(self, budget=budget)

    def split(self, text: str, final: bool = True) -> ReasoningSplit:
        """The output ``text`` as reasoning and answer. While it goes on (``final``
        False) the reasoning holds back a tail that may still become the end tag."""
        body = text
        if not self.opened:
            if not text.startswith(self.start):  # the start tag is forced: only a cut output lacks it
                return ReasoningSplit("", None)
            body = text[len(self.start) :]
        at = body.find(self.end)
        if at < 0:
            return ReasoningSplit(body if final else _hold_back(body, self.end), None)
        answer = body[at + len(self.end) :]
        return ReasoningSplit(body[:at], _without_separator(answer))

    def answer_offset(self, text: str) -> int | None:
        """Where the answer begins in ``text`` (None: the section has not ended)."""
        base = len(self.start) if not self.opened and text.startswith(self.start) else 0
        at = text.find(self.end, base)
        if at < 0:
            return None
        after = text[at + len(self.end) :]
        return len(text) - len(_without_separator(after))


@dataclass(frozen=True)
class ReasoningSplit:
    """An output's reasoning text and its answer (None before the end tag)."""

    reasoning: str
    answer: str | None


def _without_separator(answer: str) -> str:
    """``answer`` less the separator: up to ``MAX_SEPARATOR`` leading whitespace bytes."""
    cut = 0
    while cut < len(answer) and cut < MAX_SEPARATOR and answer[cut] in " \t\r\n":
        cut += 1
    return answer[cut:]


def _hold_back(text: str, word: str) -> str:
    for size in range(min(len(word) - 1, len(text)), 0, -1):
        if text.endswith(word[:size]):
            return text[: len(text) - size]
    return text


def reasoning_for(tokenizer: Any, messages: list[dict[str, Any]] | None = None, **template_kwargs: Any) -> Reasoning | None:
    """The reasoning section ``tokenizer``'s chat template gives a reply to
    ``messages`` (rendered with ``template_kwargs``, e.g. ``enable_thinking`` or
    DeepSeek V3.1's ``thinking``), or None: the template has none, or the prompt
    closed it already (thinking turned off), or its tags are special tokens that
    spell no text."""
    tags = template_tags(tokenizer)
    if tags is None:
        return None
    try:
        prompt = tokenizer.apply_chat_template(
            messages or [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False, **template_kwargs
        )
    except Exception:  # a template that fails here fails the request later, with its own message
        return None
    return reasoning_after(tags, prompt)


def reasoning_after(tags: tuple[str, str], prompt: str) -> Reasoning | None:
    """The section of a reply to ``prompt`` (the rendered generation prompt): begun
    by the prompt when it ends with the start tag; None when it ends with an empty
    section (the template turned thinking off)."""
    start, end = tags
    tail = prompt.rstrip()
    if tail.endswith(end):  # Qwen3's empty section, DeepSeek V3.1's bare end tag
        return None
    return Reasoning(start, end, opened=tail.endswith(start))


# keyed weakly: a cache must not keep a tokenizer alive
_template_tags: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, str] | None]] = weakref.WeakKeyDictionary()


def template_tags(tokenizer: Any) -> tuple[str, str] | None:
    """The start and end tags of ``tokenizer``'s chat template's reasoning section,
    or None (no template, no section, or tags that are special tokens); read once
    per tokenizer and template."""
    template = getattr(tokenizer, "chat_template", None)
    if not isinstance(template, str) or not template:
        return None
    try:
        known = _template_tags.setdefault(tokenizer, {})
    except TypeError:  # not weakly referenceable: no cache
        known = {}
    if template in known:
        return known[template]
    tags = _tags(tokenizer, template)
    if tags is not None and not (_is_text(tokenizer, tags[0]) and _is_text(tokenizer, tags[1])):
        tags = None
    if len(known) >= 8:  # a template changed again and again
        known.clear()
    known[template] = tags
    return tags


def _tags(tokenizer: Any, template: str) -> tuple[str, str] | None:
    """The section's tags: around ``reasoning_content`` as the template renders a past
    turn; else an opening tag the generation prompt ends with, closed in the template."""
    try:
        shown = tokenizer.apply_chat_template(
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": _C, "reasoning_content": _R}],
            tokenize=False,
        )
    except Exception:
        shown = ""
    r, c = shown.find(_R), shown.find(_C)
    if 0 <= r < c:
        before = _TAG.findall(shown[:r])
        after = _TAG.findall(shown[r + len(_R) : c])
        if before and after and after[0] == "</" + before[-1][1:]:
            return before[-1], after[0]
    try:  # with thinking asked for under the names templates read (DeepSeek V3.1's is off by default)
        prompt = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False,
                                               enable_thinking=True, thinking=True)
    except Exception:
        return None
    found = _TAG.findall(prompt.rstrip()[-60:])
    if found and prompt.rstrip().endswith(found[-1]):
        start = found[-1]
        end = "</" + start[1:]
        if not start.startswith("</") and (end in template or _one_token(tokenizer, end)):
            return start, end
    return None


def _one_token(tokenizer: Any, tag: str) -> bool:
    """Whether ``tag`` is one token of its own in ``tokenizer``'s vocabulary."""
    try:
        return len(tokenizer.encode(tag, add_special_tokens=False)) == 1
    except Exception:
        return False


def _is_text(tokenizer: Any, tag: str) -> bool:
    """Whether ``tag`` is text the model writes (not a special token, which spells nothing)."""
    ids = tokenizer.encode(tag, add_special_tokens=False)
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    special.update(i for i, token in added.items() if getattr(token, "special", False))
    return bool(ids) and not any(i in special for i in ids)

"""A chat request's reasoning section: the chat template's variables it asks for
(``chat_template_kwargs``, ``reasoning_effort: "none"`` as ``enable_thinking:
false``) and, from the rendered prompt, the section its output begins with
(``structgen.reasoning``) and its token budget (``thinking_budget``, or
``reasoning_effort``'s)."""

from __future__ import annotations

from typing import Any

from structgen.reasoning import EFFORT_BUDGETS, Reasoning, reasoning_after, template_tags

from structgen.server.errors import bad_request
from structgen.server.grammars import OutputPlan
from structgen.server.protocol import ChatCompletionRequest

RESERVED_TEMPLATE_KWARGS = frozenset(
    {"messages", "conversation", "tools", "documents", "add_generation_prompt", "continue_final_message", "tokenize",
     "return_dict", "return_tensors", "chat_template", "tokenizer_kwargs"}
)
"""Names the server gives the chat template itself: not a request's to set."""


def template_kwargs(body: ChatCompletionRequest) -> dict[str, Any]:
    """The variables ``body`` gives the chat template; a 400 for a name the server sets."""
    kwargs = dict(body.chat_template_kwargs or {})
    taken = sorted(set(kwargs) & RESERVED_TEMPLATE_KWARGS)
    if taken:
        raise bad_request(f"chat_template_kwargs may not set {', '.join(taken)}: the server sets them",
                          "chat_template_kwargs", "invalid_value")
    if body.reasoning_effort in ("none", "minimal"):
        kwargs.setdefault("enable_thinking", False)  # the templates that can turn thinking off read this
    return kwargs


def request_reasoning(tokenizer: Any, prompt: str, body: ChatCompletionRequest, plan: OutputPlan) -> Reasoning | None:
    """The reasoning section the output of ``body`` begins with (None: none), from
    its rendered ``prompt``; a 400 where a budget is asked of a model without one."""
    tags = template_tags(tokenizer)
    reasoning = reasoning_after(tags, prompt) if tags is not None else None
    if reasoning is None:
        if body.thinking_budget is not None:
            raise bad_request("thinking_budget: this model's chat template has no reasoning section "
                              "(or the request turned thinking off)", "thinking_budget", "invalid_value")
        return None
    if plan.start_tokens or plan.escape_token is not None:
        raise bad_request("tools with a reasoning section are not supported for a tool-call tag that is a special token",
                          "tools", "unsupported_value")
    budget = body.thinking_budget
    if budget is None and body.reasoning_effort is not None:
        budget = EFFORT_BUDGETS[body.reasoning_effort]
    return reasoning.with_budget(budget)

"""Which tool-call syntax a model writes, read from its chat template."""

from __future__ import annotations

from typing import Any

from structgen.server.syntax_llama3 import LLAMA3_JSON
from structgen.server.syntax_mistral import MISTRAL
from structgen.server.tool_syntax import HERMES, ToolSyntax

SYNTAXES = {syntax.name: syntax for syntax in (HERMES, LLAMA3_JSON, MISTRAL)}


def syntax_for(tokenizer: Any, syntax: ToolSyntax | None = None, tag_tokens: bool = True) -> ToolSyntax:
    """``syntax`` (default: the one the chat template writes) for ``tokenizer``: with
    ``tag_tokens``, its tag as a special token when the tokenizer has one
    (``ToolSyntax.for_tokenizer``; the backend must then honour ``OutputPlan.start_tokens``,
    ``escape_token`` and ``shown``, as ``structgen.server.engine.Engine`` does)."""
    chosen = syntax or _template_syntax(tokenizer)
    return chosen.for_tokenizer(tokenizer) if tag_tokens else chosen


def _template_syntax(tokenizer: Any) -> ToolSyntax:
    """Mistral's when the template writes ``[TOOL_CALLS]``, Llama 3's when it has
    the ``ipython`` role of Llama 3.1+, else Hermes' (also the server's own
    envelope for templates that ignore tools)."""
    template = getattr(tokenizer, "chat_template", None) or ""
    if not isinstance(template, str):
        template = " ".join(str(t) for t in template)  # several named templates
    if "[TOOL_CALLS]" in template:
        return MISTRAL
    if "<|start_header_id|>" in template and "ipython" in template:
        return LLAMA3_JSON
    return HERMES

"""Which tool-call syntax a model writes, read from its chat template."""

from __future__ import annotations

from typing import Any

from server.syntax_llama3 import LLAMA3_JSON
from server.syntax_mistral import MISTRAL
from server.tool_syntax import HERMES, ToolSyntax

SYNTAXES = {syntax.name: syntax for syntax in (HERMES, LLAMA3_JSON, MISTRAL)}


def syntax_for(tokenizer: Any) -> ToolSyntax:
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

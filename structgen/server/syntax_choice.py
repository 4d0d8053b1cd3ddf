"""Which tool-call syntax a model writes, read from its chat template."""

from __future__ import annotations

from typing import Any

from structgen.server.syntax_deepseek import CALLS_BEGIN, DEEPSEEK_V3, DEEPSEEK_V31
from structgen.server.syntax_llama3 import LLAMA3_JSON
from structgen.server.syntax_mistral import MISTRAL
from structgen.server.syntax_xml import QWEN3_CODER
from structgen.server.tool_syntax import HERMES, ToolSyntax

SYNTAXES = {syntax.name: syntax for syntax in (HERMES, LLAMA3_JSON, MISTRAL, QWEN3_CODER, DEEPSEEK_V3, DEEPSEEK_V31)}


def syntax_for(tokenizer: Any, syntax: ToolSyntax | None = None, tag_tokens: bool = True) -> ToolSyntax:
    """``syntax`` (default: the one the chat template writes) for ``tokenizer``: with
    ``tag_tokens``, its tag as a special token when the tokenizer has one
    (``ToolSyntax.for_tokenizer``; the backend must then honour ``OutputPlan.start_tokens``,
    ``escape_token`` and ``shown``, as ``structgen.server.engine.Engine`` does)."""
    chosen = syntax or _template_syntax(tokenizer)
    return chosen.for_tokenizer(tokenizer) if tag_tokens else chosen


def _template_syntax(tokenizer: Any) -> ToolSyntax:
    """Mistral's when the template writes ``[TOOL_CALLS]``, Llama 3's when it has
    the ``ipython`` role of Llama 3.1+, Qwen3-Coder's XML when it writes
    ``<function=`` and ``<parameter=``, DeepSeek's when it writes its calls'
    token (V3's with a fenced JSON block, else V3.1's), else Hermes' (also the
    server's own envelope for templates that ignore tools)."""
    template = getattr(tokenizer, "chat_template", None) or ""
    if not isinstance(template, str):
        template = " ".join(str(t) for t in template)  # several named templates
    if "[TOOL_CALLS]" in template:
        return MISTRAL
    if "<|start_header_id|>" in template and "ipython" in template:
        return LLAMA3_JSON
    if "<function=" in template and "<parameter=" in template:
        return QWEN3_CODER
    if CALLS_BEGIN in template:
        return DEEPSEEK_V3 if "```json" in template else DEEPSEEK_V31
    return HERMES

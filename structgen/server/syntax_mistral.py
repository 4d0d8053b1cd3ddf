"""Mistral tool calls: ``[TOOL_CALLS]`` then a JSON list of the calls.

    [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]

Mistral's templates refuse tool-call ids that are not 9 letters and digits, so
generated calls get such ids. In Mistral's own tokenizers ``[TOOL_CALLS]`` is a
special token, which no grammar may produce (docs/tokenizers.md): the server's own
engine lets that token through itself and the grammar writes the rest
(``ToolSyntax.for_tokenizer``, ``tag_token``); on a backend that cannot (vLLM)
the grammar has the model spell the tag as text, which the output parser reads
the same.
"""

from __future__ import annotations

import secrets

from structgen.server.tool_syntax import ID_CHARACTERS, ToolSyntax


class MistralSyntax(ToolSyntax):
    def new_call_id(self) -> str:
        return "".join(secrets.choice(ID_CHARACTERS) for _ in range(9))


MISTRAL = MistralSyntax(
    name="mistral",
    first="[TOOL_CALLS][",
    between=", ",
    last="]",
    result_open="[TOOL_RESULTS]",
    result_close="[/TOOL_RESULTS]",
    start_tag="[TOOL_CALLS]",
)

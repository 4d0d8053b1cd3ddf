"""Python through the server: lark text that ``%declare``s ``_INDENT`` and
``_DEDENT`` in ``structured_outputs.grammar`` or ``guided_grammar`` gets lark's
``PythonIndenter`` (docs/indentation.md). A tiny random-weight model steered
toward a script writes it where the masks allow it, and cannot write the
indentation they refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from structgen import Grammar
from test_server import ASK, MODEL, Script, client, live, script  # noqa: F401  (fixtures)

pytestmark = pytest.mark.server

PYTHON = (Path(__file__).resolve().parents[2] / "grammars" / "python.lark").read_text()
PROGRAM = "def f(x):\n    if x:\n        return 1\n    return 2\n"


@pytest.mark.parametrize("field", [{"structured_outputs": {"grammar": PYTHON}}, {"guided_grammar": PYTHON}],
                         ids=["structured_outputs", "guided_grammar"])
def test_a_python_program_is_written_as_the_script_says(client: openai.OpenAI, script: Script,
                                                         field: dict[str, Any]) -> None:
    script.text = PROGRAM
    reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=60, temperature=0, extra_body=field)
    assert reply.choices[0].message.content == PROGRAM and reply.choices[0].finish_reason == "stop"


def test_an_indentation_the_levels_refuse_is_not_written(client: openai.OpenAI, script: Script) -> None:
    """The script dedents to 2 columns, no enclosing level: the masks refuse it,
    so the text parts from the script there and stays a viable prefix."""
    script.text = "def f(x):\n    return x\n  y = 1\n"
    reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=30, temperature=0,
                                           extra_body={"guided_grammar": PYTHON})
    text = reply.choices[0].message.content or ""
    assert text.startswith("def f(x):\n    return x\n") and not text.startswith("def f(x):\n    return x\n  y")
    if reply.choices[0].finish_reason == "stop":
        assert Grammar.builtin("python").accepts(text), text

"""structgen: language-model output guaranteed to match a schema, regex or grammar."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.engine import COMPILED
from structgen.engine.matcher import CompiledGrammar
from structgen.matcher import Matcher, compile
from structgen.grammar import Grammar
from structgen.lark_rules import GrammarError
from structgen.models import ModelNotFoundError, bundled_model_path, load_model, load_tokenizer
from structgen.constraint import OutputValidationError
from structgen.generate import Generation, IncompleteOutputError, generate, generate_batch
from structgen.speculative import DraftCheck, verify_draft
from structgen.tokenizer_info import TokenizerError, TokenizerInfo
from structgen.tool_calls import ToolDefinitionError, ToolSet
from structgen.validation import ToolCallError, ValidationResult, validate_tool_call
from structgen.streaming import ToolCallValidator

try:
    __version__ = version("structgen")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "COMPILED",
    "CompiledGrammar",
    "Matcher",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "compile",
    "Grammar",
    "GrammarError",
    "ModelNotFoundError",
    "TokenizerError",
    "TokenizerInfo",
    "ToolCallError",
    "ToolCallValidator",
    "ToolDefinitionError",
    "ToolSet",
    "ValidationResult",
    "validate_tool_call",
    "__version__",
    "bundled_model_path",
    "load_tokenizer",
    "load_model",
    "generate",
    "generate_batch",
    "Generation",
    "IncompleteOutputError",
    "OutputValidationError",
    "DraftCheck",
    "verify_draft",
    "StructgenLogitsProcessor",
]


def __getattr__(name: str) -> object:
    # imports transformers (seconds): only when asked for
    if name == "StructgenLogitsProcessor":
        from structgen.logits_processor import StructgenLogitsProcessor

        return StructgenLogitsProcessor
    raise AttributeError(f"module 'structgen' has no attribute {name!r}")

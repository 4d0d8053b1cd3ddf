"""structgen: language-model output guaranteed to match a schema, regex or grammar."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from schema2grammar import SchemaError
from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.engine import COMPILED as _ENGINE_COMPILED
from structgen.json import COMPILED as _JSON_COMPILED
from structgen.engine.deadline import CompileTimeout
from structgen.engine.stack import AmbiguityLimitError
from structgen.engine.matcher import CompiledGrammar
from structgen.engine.step_bound import StepBound
from structgen.matcher import Matcher, compile
from structgen.grammar import Grammar
from structgen.indenter import Indenter
from structgen.lark_rules import GrammarError
from structgen.models import ModelNotFoundError, bundled_model_path, load_model, load_tokenizer
from structgen.constraint import OutputValidationError
from structgen.generate import generate, generate_batch
from structgen.generation import Generation, IncompleteOutputError
from structgen.reasoning import Reasoning, ReasoningError, reasoning_for
from structgen.reasoning_matcher import ReasoningMatcher
from structgen.structural_tag import StructuralTag, StructuralTagError, read_structural_tag
from structgen.tagged_matcher import TaggedMatcher
from structgen.speculative import DraftCheck, verify_draft
from structgen.tokenizer_info import TokenizerError, TokenizerInfo
from structgen.tool_calls import ToolDefinitionError, ToolSet
from structgen.validation import ToolCallError, ValidationResult, validate_tool_call
from structgen.streaming import ToolCallValidator

COMPILED = _ENGINE_COMPILED and _JSON_COMPILED
"""Whether the engine and the JSON layer's mask-path modules run compiled by mypyc."""

try:
    __version__ = version("structgen")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AmbiguityLimitError",
    "COMPILED",
    "CompileTimeout",
    "CompiledGrammar",
    "DraftCheck",
    "Generation",
    "Grammar",
    "GrammarError",
    "IncompleteOutputError",
    "Indenter",
    "Matcher",
    "ModelNotFoundError",
    "OutputValidationError",
    "Reasoning",
    "ReasoningError",
    "ReasoningMatcher",
    "SchemaError",
    "StepBound",
    "StructgenLogitsProcessor",
    "StructuralTag",
    "StructuralTagError",
    "TaggedMatcher",
    "TokenizerError",
    "TokenizerInfo",
    "ToolCallError",
    "ToolCallValidator",
    "ToolDefinitionError",
    "ToolSet",
    "ValidationResult",
    "__version__",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bundled_model_path",
    "compile",
    "generate",
    "generate_batch",
    "load_model",
    "load_tokenizer",
    "read_structural_tag",
    "reasoning_for",
    "validate_tool_call",
    "verify_draft",
]


def __getattr__(name: str) -> object:
    # imports transformers (seconds): only when asked for
    if name == "StructgenLogitsProcessor":
        from structgen.logits_processor import StructgenLogitsProcessor

        return StructgenLogitsProcessor
    raise AttributeError(f"module 'structgen' has no attribute {name!r}")

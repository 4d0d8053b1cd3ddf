"""structgen: language-model output guaranteed to match a schema, regex or grammar."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.engine import COMPILED
from structgen.engine.matcher import CompiledGrammar
from structgen.matcher import Matcher, compile
from structgen.grammar import Grammar
from structgen.lark_rules import GrammarError
from structgen.models import ModelNotFoundError, bundled_model_path, load_tokenizer
from structgen.tokenizer_info import TokenizerError, TokenizerInfo

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
    "__version__",
    "bundled_model_path",
    "load_tokenizer",
]

"""The public surface is pinned: a name joins or leaves ``structgen`` on purpose."""

from __future__ import annotations

import warnings

import structgen

PUBLIC = [
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


def test_all_is_pinned_and_sorted() -> None:
    assert structgen.__all__ == PUBLIC
    assert structgen.__all__ == sorted(structgen.__all__)


def test_every_exported_name_exists() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no exported name is a deprecated alias
        for name in structgen.__all__:
            assert getattr(structgen, name) is not None, name


def test_no_other_public_name_is_defined_in_the_package_namespace() -> None:
    """Submodules are reachable as attributes once imported; anything else that is
    public in ``structgen``'s namespace must be in ``__all__``."""
    import types

    extra = [
        name
        for name, value in vars(structgen).items()
        if not name.startswith("_") and name not in structgen.__all__ and not isinstance(value, types.ModuleType)
        and name not in {"annotations", "version", "PackageNotFoundError"}
    ]
    assert extra == []


def test_the_errors_users_catch_are_exported() -> None:
    """Each error a public call documents can be caught by its exported name and is
    a ``ValueError`` (or a ``TimeoutError`` for a deadline), as the server maps them."""
    for name in ("SchemaError", "GrammarError", "TokenizerError", "ToolDefinitionError",
                 "OutputValidationError", "IncompleteOutputError", "AmbiguityLimitError",
                 "ReasoningError", "StructuralTagError"):
        error = getattr(structgen, name)
        assert issubclass(error, ValueError), name
    assert issubclass(structgen.CompileTimeout, TimeoutError)
    assert issubclass(structgen.ModelNotFoundError, FileNotFoundError)


def test_schema_errors_raised_by_the_public_api_are_the_exported_class() -> None:
    import pytest

    with pytest.raises(structgen.SchemaError, match="minimum"):
        structgen.Grammar.from_json_schema({"type": "integer", "minimum": "zero"})

"""JSON Schema and Pydantic models to lark grammars, with a report of every keyword.

``translate(schema, options)`` returns the grammar text and a ``Report``;
``structgen.Grammar.from_json_schema`` / ``from_pydantic`` wrap it. This package
knows nothing of tokens or models (docs/design.md §2).
"""

from schema2grammar.options import DRAFT_SEMANTICS, FORMAT_GRAMMARS, LENGTH_BOUNDS, Options
from schema2grammar.report import APPROXIMATED, ENFORCED, REJECTED, Report, ReportEntry
from schema2grammar.shared import SchemaError
from schema2grammar.translate import translate, translate_checked

__all__ = ["APPROXIMATED", "DRAFT_SEMANTICS", "ENFORCED", "FORMAT_GRAMMARS", "LENGTH_BOUNDS", "REJECTED", "Options", "Report", "ReportEntry", "SchemaError", "translate",
           "translate_checked"]

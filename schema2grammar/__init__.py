"""JSON Schema and Pydantic models to lark grammars, with a report of every keyword.

``translate(schema, options)`` returns the grammar text and a ``Report``;
``translate_checked`` a ``Translation`` (the text, the report and the matcher's
checks as data);
``structgen.Grammar.from_json_schema`` / ``from_pydantic`` wrap it. This package
knows nothing of tokens or models (docs/design.md §2).
"""

from schema2grammar.options import DRAFT_SEMANTICS, FORMAT_GRAMMARS, LENGTH_BOUNDS, Options
from schema2grammar.report import APPROXIMATED, ENFORCED, REJECTED, Report, ReportEntry
from schema2grammar.shared import SchemaError
from schema2grammar.translate import translate, translate_checked
from schema2grammar.translation import CountedString, Translation

__all__ = ["APPROXIMATED", "CountedString", "DRAFT_SEMANTICS", "ENFORCED", "FORMAT_GRAMMARS", "LENGTH_BOUNDS", "Options",
           "REJECTED", "Report", "ReportEntry", "SchemaError", "Translation", "translate", "translate_checked"]

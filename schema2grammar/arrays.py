"""Arrays: tuples, ``items`` and the item counts as a chain of rules (``contains``
and ``uniqueItems`` count in states of their own: ``applicators``)."""

from __future__ import annotations

from typing import Any

from schema2grammar import applicators
from schema2grammar.core import TranslatorCore
from schema2grammar.report import ENFORCED
from schema2grammar.shared import MAX_ITEMS_CHAIN, NoValue


class ArrayKeywords(TranslatorCore):
    """The rules of an array place."""

    def type_array(self, schema: dict[str, Any], pointer: str) -> str:
        report = self.report
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4-2019: items as a tuple
            prefix, items = items, schema.get("additionalItems", True)
            if "additionalItems" in schema:
                report.add(pointer, "additionalItems", ENFORCED)
        if "prefixItems" in schema or isinstance(schema.get("items"), list):
            report.add(pointer, "prefixItems" if "prefixItems" in schema else "items", ENFORCED)
        if "items" in schema and not isinstance(schema.get("items"), list):
            report.add(pointer, "items", ENFORCED)
        low = self.count(schema, "minItems", pointer) or 0
        high = self.count(schema, "maxItems", pointer)
        self.unevaluated_annotation(schema, "unevaluatedItems", pointer)
        if high is not None and high < low:
            raise NoValue(f"{pointer or '#'}: maxItems {high} is below minItems {low}")
        counted = applicators.counted_array(self, schema, prefix or [], items, low, high, pointer)
        if counted is not None:
            return counted
        fixed: list[str] = []
        rest: str | None = None
        try:
            for i, sub in enumerate(prefix or []):
                fixed.append(self.node(sub, f"{pointer}/prefixItems/{i}"))
            rest = self.node(items, f"{pointer}/items")
        except NoValue:  # no value for item k: arrays end before it
            high = len(fixed) if high is None else min(high, len(fixed))
            if high < low:
                raise
        return self.sequence(fixed, rest, low, high, pointer)

    def sequence(self, fixed: list[str], rest: str | None, low: int, high: int | None, pointer: str) -> str:
        """``[`` fixed items, then ``rest`` items, ``low..high`` items in all ``]``."""
        open_, close, comma = self.punct("["), self.punct("]"), self.punct(",")
        if low > MAX_ITEMS_CHAIN or (high is not None and high > MAX_ITEMS_CHAIN):
            for key, count in (("minItems", low), ("maxItems", high)):
                if count is not None and count > MAX_ITEMS_CHAIN:
                    self.approximate(pointer, key, f"item counts above {MAX_ITEMS_CHAIN} are not enforced")
            low = min(low, MAX_ITEMS_CHAIN)
            high = None
        # tail[k]: what may follow once k items are written
        tail: dict[int, str] = {}
        if high is None:
            # from `loop` items on, the same rule repeats: close, or one more rest item
            loop = max(low, len(fixed), 1)
            name = self.fresh("items")
            self.rules[name] = f"{close} | {comma} {rest} {name}" if rest is not None else close
            tail[loop] = name
            top = loop - 1
        else:
            tail[high] = close
            top = high - 1
        for k in range(top, -1, -1):
            options = [close] if k >= low else []
            item = fixed[k] if k < len(fixed) else rest
            if item is not None:
                options.append(f"{comma if k else ''} {item} {tail[k + 1]}".strip())
            if not options:
                raise NoValue(f"{pointer or '#'}: no array satisfies the item constraints")
            tail[k] = self.rule("items", " | ".join(options))
        return f"{open_} {tail[0]}"

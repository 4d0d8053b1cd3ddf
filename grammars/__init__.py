"""The grammars structgen ships (installed as ``structgen.grammars``); read one with
``structgen.Grammar.builtin(name)``."""

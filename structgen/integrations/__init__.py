"""Bridges to other inference engines. Each submodule imports its engine itself, so
``import structgen`` never pulls one in."""

"""The OpenAI-compatible HTTP server (``structgen serve``): see docs/server.md."""

from server.app import create_app

__all__ = ["create_app"]

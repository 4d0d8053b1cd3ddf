"""The OpenAI-compatible HTTP server (``structgen serve``): see docs/server.md."""

from server.app import create_app
from server.limits import Limits

__all__ = ["Limits", "create_app"]

"""The OpenAI-compatible HTTP server (``structgen serve``): see docs/server.md."""

from structgen.server.app import create_app
from structgen.server.limits import Limits

__all__ = ["Limits", "create_app"]

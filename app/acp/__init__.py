"""The Agent Client Protocol front-end (`opencode acp`): editors such as Zed drive the
agent over JSON-RPC on stdio. See docs/acp.md."""

from app.acp.server import HELP, run_acp

__all__ = ["HELP", "run_acp"]

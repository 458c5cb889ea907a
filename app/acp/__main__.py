"""`python -m app.acp [DIR]`: the ACP server without the CLI (the CLI's `opencode acp`
calls the same function)."""

import sys
from pathlib import Path

from app.acp.server import run_acp

sys.exit(run_acp(Path(sys.argv[1]) if len(sys.argv) > 1 else None))

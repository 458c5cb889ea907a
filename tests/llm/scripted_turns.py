"""Turns of the scripted model (app/llm/scripted.py) that tests of several rooms share."""

from __future__ import annotations

import re
from typing import Any

from app.llm.compaction import SUMMARY_INSTRUCTION


def summarizer_turn(summary: str) -> dict[str, Any]:
    """The turn that answers a compaction request with ``summary``."""
    return {"match": f"^{re.escape(SUMMARY_INSTRUCTION)}", "steps": [{"text": summary}]}

"""Which project hook sets the user trusts: a cloned repository must not run code on
open, so the hooks a workspace's own files declare run only after the user has said yes
to that exact set. The answer is kept in the user's data folder (never in the
workspace, which the repository controls), keyed by the workspace and a hash of the
hook set's content: a hook added or changed makes another hash, which asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.hooks.config import Hook

TRUST_FILE = "trusted-hooks.json"


def trust_file(env: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/opencode/trusted-hooks.json`` (``~/.local/share`` by default)."""
    base = env.get("XDG_DATA_HOME", "")
    if os.path.isabs(base):
        return Path(base) / "opencode" / TRUST_FILE
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "share" / "opencode" / TRUST_FILE


def hook_set_hash(hooks: Sequence[Hook]) -> str:
    """The hash of what the hooks would run: event, matcher, command, timeout and file."""
    content = [[hook.event, hook.matcher, hook.command, hook.timeout, hook.source] for hook in hooks]
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()


class TrustStore:
    """workspace -> the hash of the hook set the user trusts there (one per workspace:
    trusting a new set replaces the old one)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def trusted(self, root: Path, hooks: Sequence[Hook]) -> bool:
        return self._read().get(str(root)) == hook_set_hash(hooks)

    def trust(self, root: Path, hooks: Sequence[Hook]) -> None:
        """Remember that the user trusts ``hooks`` in ``root`` (written atomically)."""
        entries = self._read()
        entries[str(root)] = hook_set_hash(hooks)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".trusted-hooks-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(entries, out, indent=1, sort_keys=True)
        os.replace(temporary, self.path)

    def _read(self) -> dict[str, str]:
        """The stored answers; a missing or unreadable file trusts nothing."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(key): value for key, value in data.items() if isinstance(value, str)} if isinstance(data, dict) else {}

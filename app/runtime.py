"""The composition root: every core service built once from a workspace and a config,
and handed out from here. Tests build a whole runtime on a temp directory in one line:
``Runtime.build(tmp_path)``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.bus import Bus
from app.config import Config, load_config
from app.permission import PermissionService
from app.store import Store, open_store
from app.tools.base import Tool, ToolContext
from app.tools.registry import all_tools
from app.workspace import FileRecords, Workspace


@dataclass
class Runtime:
    root: Path
    config: Config
    bus: Bus
    store: Store
    workspace: Workspace
    records: FileRecords
    permissions: PermissionService
    tools: dict[str, Tool]

    @classmethod
    def build(
        cls,
        root: Path,
        *,
        config: Config | None = None,
        policy: str = "interactive",
        bus: Bus | None = None,
    ) -> Runtime:
        """``policy`` is the permission policy: interactive, headless or headless-yes."""
        root = Path(root).resolve()
        config = config if config is not None else load_config(root)
        bus = bus or Bus()
        store = open_store(config.data_dir(root) / "opencode.db", bus)
        workspace = Workspace(root)
        return cls(
            root=root,
            config=config,
            bus=bus,
            store=store,
            workspace=workspace,
            records=FileRecords(workspace),
            permissions=PermissionService(config, bus, policy),
            tools={tool.name: tool for tool in all_tools()},
        )

    def context(self, session_id: str, agent: str = "coder", **ids: str | None) -> ToolContext:
        """A tool context for one call; ``ids`` may carry message_id and call_id."""
        return ToolContext(
            session_id=session_id,
            agent=agent,
            workspace=self.workspace,
            records=self.records,
            history=self.store.history,
            permissions=self.permissions,
            bus=self.bus,
            config=self.config,
            **ids,
        )

    def close(self) -> None:
        self.store.close()

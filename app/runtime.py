"""The composition root: every core service built once from a workspace and a config,
and handed out from here. Tests build a whole runtime on a temp directory in one line:
``Runtime.build(tmp_path)``."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from app.bus import Bus
from app.config import Config, load_config
from app.lsp import LspManager
from app.mcp import McpManager
from app.permission import PermissionService
from app.store import Store, open_store
from app.tools.base import Tool, ToolContext
from app.tools.registry import ToolTable
from app.workspace import FileRecords, Workspace
from app.workspace.watch import WorkspaceWatcher


@dataclass
class Runtime:
    root: Path
    config: Config
    bus: Bus
    store: Store
    workspace: Workspace
    records: FileRecords
    permissions: PermissionService
    tools: MutableMapping[str, Tool]
    """Built-in tools, each imported on first use (see ToolTable)."""
    watcher: WorkspaceWatcher
    mcp: McpManager
    """MCP servers: connected in the background by ``mcp.start()`` (front-ends) or
    ``mcp.wait_ready()`` (the agent loop, before a turn)."""
    lsp: LspManager
    """Language servers: nothing is looked up or started until a tool touches a file."""

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
        records = FileRecords(workspace, store.seen)
        return cls(
            root=root,
            config=config,
            bus=bus,
            store=store,
            workspace=workspace,
            records=records,
            permissions=PermissionService(config, bus, policy),
            tools=ToolTable(),
            watcher=WorkspaceWatcher(workspace, records, bus, ignore_paths=[config.data_dir(root)]),
            mcp=McpManager(config.mcp_servers, bus, cwd=root, log_dir=config.data_dir(root) / "mcp"),
            lsp=LspManager(config, root, bus),
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
            lsp=self.lsp,
            **ids,
        )

    async def start_watching(self) -> None:
        """Front-ends call this once their loop runs: files changed outside the agent are
        then announced as FileChangedOnDisk. Tests and one-shot commands skip it."""
        await self.watcher.start()

    def close(self) -> None:
        self.lsp.close()
        self.mcp.close()
        self.watcher.stop()
        self.store.close()

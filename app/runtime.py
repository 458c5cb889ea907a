"""The composition root: every core service built once from a workspace and a config,
and handed out from here. Tests build a whole runtime on a temp directory in one line:
``Runtime.build(tmp_path)``."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from app.agents.catalog import AgentCatalog
from app.agents.files import load_catalog
from app.bus import Bus
from app.config import Config, load_config
from app.permission import PermissionService
from app.permission.service import Policy
from app.sandbox import Availability, detect, sandbox_notice
from app.store import Store, open_store
from app.store.datadir import DATABASE_FILE
from app.store.location import data_directory
from app.tools.base import Tool, ToolContext
from app.tools.registry import ToolTable
from app.workspace import FileRecords, Workspace
from app.workspace.lock import WorkspaceLock
from app.workspace.recovery import recover

if TYPE_CHECKING:
    from app.hooks.service import HookService
    from app.lsp import LspManager
    from app.mcp import McpManager
    from app.prompt.slash_commands import CommandRegistry
    from app.skills.catalog import SkillCatalog
    from app.tools.jobs import JobTable
    from app.workspace.watch import WorkspaceWatcher


class Runtime:
    """The services every command needs are built with it; the language servers, MCP
    servers and the watcher are built on first use (`opencode tool` and `opencode
    changes` never import the MCP or watching machinery)."""

    root: Path
    config: Config
    bus: Bus
    store: Store
    workspace: Workspace
    records: FileRecords
    permissions: PermissionService
    tools: MutableMapping[str, Tool]
    """Built-in tools, each imported on first use (see ToolTable)."""
    data_dir: Path
    """Where the database and logs are: the configured data directory, or the user's own
    folder for this workspace when that cannot be written (see app.store.location)."""
    workspace_lock: WorkspaceLock
    """Held by the change path and recovery; shared with every opencode process here."""
    agents: AgentCatalog
    """The built-in agents and those of the agent files (app/agents/files.py)."""
    sandbox: Availability
    """The OS sandbox bash commands run in here (app.sandbox), found once at start-up."""
    env: Mapping[str, str]
    """Where the user's folders are found: agents, hooks, skills (os.environ by default)."""
    trust_project_hooks: bool
    """Run the project's hooks without the user's trust (``--trust-project-hooks``); set
    before the hooks are first used."""
    notices: list[str]
    """One-line warnings from building it (a damaged database set aside, the data kept
    outside an unwritable workspace, a change a crash interrupted rolled back) that every
    front-end shows the user: stderr for one-shot commands, a notice in the TUI."""

    def __init__(
        self,
        root: Path,
        *,
        config: Config | None = None,
        policy: Policy = "interactive",
        bus: Bus | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``policy`` is the permission policy: interactive, headless or headless-yes;
        ``env`` is where the user's agent folder is found (os.environ by default)."""
        self.root = Path(root).resolve()
        self.config = config if config is not None else load_config(self.root)
        self.bus = bus or Bus()
        data = data_directory(self.root, self.config)
        self.data_dir = data.path
        self.store = open_store(data.path / DATABASE_FILE, self.bus)
        self.workspace = Workspace(self.root)
        self.workspace_lock = WorkspaceLock(data.path / "changes.lock")
        self.env = os.environ if env is None else env
        self.trust_project_hooks = False
        self.agents = load_catalog(self.root, self.env)
        self.records = FileRecords(self.workspace, self.store.seen)
        self.permissions = PermissionService(self.config, self.bus, policy, self.agents.rules())
        self.tools = ToolTable()
        self.sandbox: Availability = detect(self.config.sandbox.mechanism)
        self.notices = [
            *(notice for notice in (data.notice, self.store.db.notice) if notice),
            *recover(self.workspace.root, self.store.journal, self.workspace_lock),
            *self.agents.notices,
            *filter(None, [sandbox_notice(self.config, self.sandbox)]),
        ]

    @classmethod
    def build(
        cls,
        root: Path,
        *,
        config: Config | None = None,
        policy: Policy = "interactive",
        bus: Bus | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Runtime:
        """The runtime of ``root``: what every front-end and test calls."""
        return cls(root, config=config, policy=policy, bus=bus, env=env)

    @cached_property
    def watcher(self) -> WorkspaceWatcher:
        """Announces files changed outside the agent; running once `start_watching` is called."""
        from app.workspace.watch import WorkspaceWatcher

        return WorkspaceWatcher(
            self.workspace, self.records, self.bus, ignore_paths=[self.data_dir]
        )

    @cached_property
    def commands(self) -> CommandRegistry:
        """The slash commands: built-in ones and the custom ones of the project and the
        user, read on first use (``opencode tool`` never pays for them). A front-end that
        lists them shows ``commands.notices`` too: one line per file that could not be used."""
        from app.prompt.custom_commands import load_registry

        return load_registry(self.root, os.environ)

    def reload_commands(self) -> CommandRegistry:
        """Read the command files again (a file added or changed since) and hold the
        result as ``commands``; blocking disk work, for a thread."""
        from app.prompt.custom_commands import load_registry

        self.__dict__["commands"] = registry = load_registry(self.root, os.environ)
        return registry

    @cached_property
    def hooks(self) -> HookService:
        """The user's and the project's hooks (docs/hooks.md), read on first use."""
        from app.hooks.service import HookService

        return HookService(self.root, self.env, self.bus, trust_project=self.trust_project_hooks)

    @cached_property
    def skills(self) -> SkillCatalog:
        """The skills of the project and the user (docs/skills.md), read on first use."""
        from app.skills.catalog import load_skills

        return load_skills(self.root, self.env)

    def hook_notices(self, *, asking: bool) -> list[str]:
        """Lines for a front-end about the hooks: files or entries that could not be used,
        and, for a front-end that does not ask the trust question (``asking`` False), that
        the project's hooks are skipped."""
        hooks = self.hooks
        skipped = [hooks.skipped_line()] if hooks.awaiting_trust and not asking else []
        return [*hooks.notices, *skipped]

    @cached_property
    def mcp(self) -> McpManager:
        """MCP servers: connected in the background by ``mcp.start()`` (front-ends) or
        ``mcp.wait_ready()`` (the agent loop, before a turn)."""
        from app.mcp import McpManager

        log_dir = self.data_dir / "mcp"
        return McpManager(self.config.mcp_servers, self.bus, cwd=self.root, log_dir=log_dir)

    @cached_property
    def jobs(self) -> JobTable:
        """The background jobs bash starts; each is killed when the runtime closes."""
        from app.tools.jobs import JobTable

        return JobTable(self.data_dir / "jobs")

    @cached_property
    def lsp(self) -> LspManager:
        """Language servers: nothing is looked up or started until a tool touches a file."""
        from app.lsp import LspManager

        return LspManager(self.config, self.root, self.bus)

    def context(
        self, session_id: str, agent: str = "coder", *, vision: bool = False, **ids: str | None
    ) -> ToolContext:
        """A tool context for one call; ``ids`` may carry message_id and call_id;
        ``vision`` says whether the model in use takes images."""
        return ToolContext(
            session_id=session_id,
            agent=agent,
            vision=vision,
            workspace=self.workspace,
            records=self.records,
            history=self.store.history,
            journal=self.store.journal,
            workspace_lock=self.workspace_lock,
            permissions=self.permissions,
            bus=self.bus,
            config=self.config,
            todos=self.store.todos,
            lsp=self.lsp,
            readable_folders=skills.readable_folders(session_id) if (skills := vars(self).get("skills")) else frozenset(),
            jobs=self.jobs,
            **ids,
        )

    async def start_watching(self) -> None:
        """Front-ends call this once their loop runs: files changed outside the agent are
        then announced as FileChangedOnDisk. Tests and one-shot commands skip it."""
        await self.watcher.start()

    async def stop_language_servers(self) -> None:
        """Stop the language servers a one-shot command started, before its event loop
        closes (``close`` alone would kill them after it, and asyncio logs each exit)."""
        if "lsp" in vars(self):
            await self.lsp.stop()

    def close(self) -> None:
        """Stop what was started; a service never used is not built just to be closed."""
        built = vars(self)  # where cached_property keeps each service once built
        if "lsp" in built:
            self.lsp.close()
        if "mcp" in built:
            self.mcp.close()
        if "watcher" in built:
            self.watcher.stop()
        if "jobs" in built:
            self.jobs.close()
        self.store.close()

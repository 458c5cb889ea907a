"""The shape of `.opencode.json`: one pydantic model per section.

Keys are camelCase in JSON (aliases) and snake_case in Python; either spelling is accepted
in a file. Every model forbids unknown keys, so a typo is reported instead of ignored.
Every field has a default, so a partial file (one layer) validates on its own.

No ``from __future__ import annotations`` here: pydantic would compile each field's
annotation back from its string when the models are built, on every start.
"""

from pathlib import Path
from typing import Annotated, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.core.config_paths import DEFAULT_DATA_FOLDER, ENV_PREFIX, ENV_SEPARATOR

ActionName = Literal["allow", "ask", "deny"]
AgentName = Literal["coder", "plan", "workhorse", "explorer", "title", "summarizer"]
ReasoningEffort = Literal["low", "medium", "high"]


def _rule_kind(value: object) -> str:
    """Pick the rule branch up front, so a bad value gets one error instead of one per branch."""
    return "patterns" if isinstance(value, dict) else "action"


ToolRule = Annotated[
    Annotated[ActionName, Tag("action")] | Annotated[dict[str, ActionName], Tag("patterns")],
    Discriminator(_rule_kind),
]
"""One tool's rule: an action for every subject, or {wildcard pattern: action}."""

PermissionRules = dict[str, ToolRule]
"""Tool name -> rule, e.g. {"bash": "ask", "delete": {"*": "ask", "tmp/*": "allow"}}."""

DEFAULT_CONTEXT_PATHS = (
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
    "opencode.md",
)
# Commands that reach the network: the bash tool refuses them so fetching stays explicit.
DEFAULT_BANNED_COMMANDS = (
    "curl", "wget", "nc", "ncat", "telnet", "ssh", "scp", "sftp", "ftp", "aria2c",
    "axel", "lynx", "w3m", "links", "httpie", "http", "xh",
)


class ConfigModel(BaseModel):
    """Base of every section: camelCase aliases, snake_case names accepted, no unknown keys,
    and no NaN or Infinity (Python's json reads them, but they are not JSON)."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, alias_generator=to_camel, allow_inf_nan=False
    )


class ModelCost(ConfigModel):
    """Prices in USD per million tokens, as providers publish them."""

    input: float = Field(0.0, ge=0, description="Per million uncached prompt tokens.")
    output: float = Field(0.0, ge=0, description="Per million generated tokens.")
    cache_read: float | None = Field(None, ge=0, description="Per million prompt tokens read from the cache; unset means the input price.")
    cache_write: float | None = Field(None, ge=0, description="Per million prompt tokens written to the cache; unset means the input price.")


class ModelSpec(ConfigModel):
    """What opencode needs to know of a model litellm's price map lacks (or to override it)."""

    name: str | None = Field(None, description="Name shown in the models picker; unset means the id.")
    context_window: int | None = Field(None, gt=0, description="Input tokens the model accepts; drives compaction.")
    max_output: int | None = Field(None, gt=0, description="Cap on tokens generated per reply.")
    cost: ModelCost | None = Field(None, description="Prices; unset means litellm's, else free.")
    vision: bool | None = Field(None, description="Whether the model takes images; unset means litellm's answer.")
    reasoning: bool | None = Field(None, description="false: the model does not think, so reasoningEffort is not sent to it.")


class ProviderConfig(ConfigModel):
    api_key: str | None = Field(
        None,
        description="API key, or {env:VAR} to read it from a variable; when unset the provider's usual environment variable is used.",
    )
    base_url: str | None = Field(None, alias="baseURL", description="Endpoint override, e.g. a local proxy.")
    disabled: bool = Field(False, description="Hide this provider's models.")
    api: Literal["openai", "anthropic"] | None = Field(
        None,
        description="Makes this a custom provider speaking the OpenAI chat-completions or the Anthropic Messages API at baseURL; its models are named <provider>/<id>.",
    )
    models: dict[str, ModelSpec] = Field({}, description="Model id -> facts (context window, prices, ...).")
    cache: bool = Field(True, description="Place prompt-cache breakpoints for models that take them (Anthropic's).")


class AgentConfig(ConfigModel):
    model: str | None = Field(None, description="Model id, e.g. anthropic/claude-sonnet-4; unset means the built-in choice.")
    max_tokens: int | None = Field(None, gt=0, description="Cap on tokens generated per reply.")
    reasoning_effort: ReasoningEffort | None = Field(None, description="For reasoning models.")
    permission: PermissionRules = Field(
        {}, description="Rules for this agent only; checked before the global permission.rules."
    )


class AgentsConfig(ConfigModel):
    coder: AgentConfig = AgentConfig()
    plan: AgentConfig = AgentConfig()
    workhorse: AgentConfig = AgentConfig()
    explorer: AgentConfig = AgentConfig()
    title: AgentConfig = AgentConfig()
    summarizer: AgentConfig = AgentConfig()

    def get(self, name: str) -> AgentConfig | None:
        """The settings of agent ``name``, or None for a name that is not a configurable agent."""
        return getattr(self, name) if name in type(self).model_fields else None


class PermissionConfig(ConfigModel):
    rules: PermissionRules = Field(
        {}, description='Tool -> "allow" | "ask" | "deny", or tool -> {wildcard pattern: action}.'
    )


class ShellConfig(ConfigModel):
    path: str | None = Field(None, description="Shell for the bash tool; unset means $SHELL, else /bin/bash.")
    args: list[str] = Field([], description="Arguments placed before the command, e.g. [\"-l\"].")


class LspServerConfig(ConfigModel):
    command: str | None = Field(None, description="Executable of the language server (required unless disabled).")
    args: list[str] = []
    disabled: bool = False


class McpServerConfig(ConfigModel):
    type: Literal["stdio", "http"] = "stdio"
    command: str | None = Field(None, description="Executable to start (stdio servers).")
    args: list[str] = []
    env: dict[str, str] = Field({}, description="Extra environment for the server process (stdio).")
    url: str | None = Field(None, description="Endpoint (http servers).")
    headers: dict[str, str] = Field({}, description="HTTP headers sent with every request (http).")
    disabled: bool = False


class TuiConfig(ConfigModel):
    theme: str = Field("opencode", description="Name of a theme in themes/.")
    keybindings: dict[str, str] = Field({}, description="Binding id -> key, e.g. {\"app.quit\": \"ctrl+q\"}.")
    notify: Literal["off", "bell", "desktop"] = Field(
        "desktop",
        description="When a turn ends or a permission question waits while the terminal is not focused: "
        "off, bell (the terminal's bell), or desktop (the bell and a desktop notification, OSC 9 or 777).",
    )


class DataConfig(ConfigModel):
    directory: str = Field(DEFAULT_DATA_FOLDER, description="Where the database lives; relative to the workspace.")


class DeleteToolConfig(ConfigModel):
    max_files: int = Field(500, gt=0, description="A directory with more files than this is refused.")


class BashToolConfig(ConfigModel):
    banned_commands: list[str] = Field(list(DEFAULT_BANNED_COMMANDS), description="Commands the bash tool refuses.")
    default_timeout_ms: int = Field(120_000, gt=0, description="Timeout when the model gives none.")
    max_timeout_ms: int = Field(600_000, gt=0, description="Upper bound of any timeout the model asks for.")


class LspToolConfig(ConfigModel):
    diagnostics_timeout: float = Field(
        2.0, gt=0, description="Seconds a writing tool waits for language-server diagnostics."
    )


class GrepToolConfig(ConfigModel):
    backend: Literal["auto", "rg", "python"] = Field(
        "auto", description="auto: ripgrep when it can be found, else the pure-Python search."
    )


class WebfetchToolConfig(ConfigModel):
    allow_private: bool = Field(
        False,
        description="Let webfetch reach private, loopback, link-local and other non-global addresses "
        "(a local server, the cloud metadata address). Only the user config or the environment may set it: "
        "a project's .opencode.json cannot.",
    )


class ToolsConfig(ConfigModel):
    delete: DeleteToolConfig = DeleteToolConfig()
    bash: BashToolConfig = BashToolConfig()
    grep: GrepToolConfig = GrepToolConfig()
    lsp: LspToolConfig = LspToolConfig()
    webfetch: WebfetchToolConfig = WebfetchToolConfig()


HookEvent = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
    "SessionStart", "SessionEnd", "PreCompact", "Notification",
]  # fmt: skip
"""The events a hook runs at (docs/hooks.md), named as Claude Code names them."""


class HookCommandConfig(ConfigModel):
    type: Literal["command"] = Field("command", description="The kind of hook: a shell command.")
    command: str = Field(min_length=1, description="Shell command run with the event as JSON on its stdin.")
    timeout: float | None = Field(None, gt=0, description="Seconds before the command is stopped; unset means 60.")


class HookMatcherConfig(ConfigModel):
    matcher: str = Field(
        "", description="Regular expression over the tool name (ours or Claude Code's); empty or * means all."
    )
    hooks: list[HookCommandConfig] = Field(description="Commands run, in parallel, when the matcher selects the event.")


class ServeConfig(ConfigModel):
    idle_timeout: float = Field(
        15, gt=0, description="Minutes `opencode serve` runs with no client connected before it exits (read from the user's global config)."
    )
    autostart: bool = Field(
        True,
        description="After an `opencode -p` in a terminal (not in CI) that found no server, start `opencode serve` "
        "in the background so the next -p attaches to it (read from the user's global config).",
    )


class SandboxConfig(ConfigModel):
    mechanism: Literal["auto", "bwrap", "landlock", "off"] = Field(
        "auto",
        description="What runs bash commands in an OS sandbox: auto (bubblewrap, else Landlock), bwrap, landlock, "
        "or off (the permission rules alone). User config or environment only.",
    )
    required: bool = Field(False, description="Refuse bash when no sandbox is available, instead of judging commands by the rules alone.")
    network: bool = Field(False, description="Let sandboxed commands use the network. User config or environment only.")
    writable: list[str] = Field(
        [],
        description="Folders sandboxed commands may write besides the workspace and their temp folder, "
        "e.g. [\"~/.cache/pip\", \"~/.npm\"]. User config or environment only.",
    )


class WorktreeConfig(ConfigModel):
    copy_files: list[str] = Field(
        [".env*"],
        alias="copy",
        description="Globs (relative to the repository's top) of files copied into a new `opencode --worktree` "
        "checkout: files git does not track, such as .env.",
    )


class ConfigShape(ConfigModel):
    """The keys of the configuration and what each holds: one file or the variables are
    validated against it alone (every key has a default, so a partial layer is valid)."""

    schema_ref: str | None = Field(
        None, alias="$schema", exclude=True, description="Editor hint (path or URL of the schema); ignored."
    )
    providers: dict[str, ProviderConfig] = {}
    agents: AgentsConfig = AgentsConfig()
    permission: PermissionConfig = PermissionConfig()
    shell: ShellConfig = ShellConfig()
    lsp: dict[str, LspServerConfig] = Field({}, description="Language -> language server.")
    mcp_servers: dict[str, McpServerConfig] = Field({}, description="Name -> MCP server.")
    context_paths: list[str] = Field(
        list(DEFAULT_CONTEXT_PATHS), description="Files (relative to the workspace) added to the system prompt."
    )
    tui: TuiConfig = TuiConfig()
    auto_compact: bool = Field(True, description="Summarise the session when the context window is nearly full.")
    data: DataConfig = DataConfig()
    debug: bool = False
    tools: ToolsConfig = ToolsConfig()
    serve: ServeConfig = ServeConfig()
    sandbox: SandboxConfig = SandboxConfig()
    hooks: dict[HookEvent, list[HookMatcherConfig]] = Field(
        {},
        description="Event -> commands run at it (docs/hooks.md); a project's hooks run once the user trusts them.",
    )
    worktree: WorktreeConfig = WorktreeConfig()

    def data_dir(self, workspace: Path) -> Path:
        """The data directory: ``data.directory`` resolved against ``workspace`` (not created here)."""
        return Path(workspace) / Path(self.data.directory).expanduser()


class UserPermission(NamedTuple):
    """The permission rules the user's own configuration sets (the global file and the
    OPENCODE_* environment): ``rules`` as permission.rules, ``agents`` as each agent's
    agents.<name>.permission. A project's rules narrow these and never lift their denies."""

    rules: PermissionRules
    agents: dict[str, PermissionRules]


class Config(BaseSettings, ConfigShape):
    """The merged configuration every service is built from: a pydantic-settings object
    whose sources are the OPENCODE_* environment, the project's `.opencode.json` and the
    global one, in that priority (``app.config.settings``; ``load_config`` builds it from
    them). Built directly, ``Config(...)`` is the defaults with what it is given."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_prefix_target="all",  # the prefix goes before the camelCase alias too (OPENCODE_AUTOCOMPACT)
        env_nested_delimiter=ENV_SEPARATOR,
        case_sensitive=False,
        extra="forbid",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Built directly, a ``Config`` holds what it is given over the defaults: the
        environment and the files are read by ``load_config``, which builds it with the
        sources of that load (``app.config.settings.load_sources``: they report mistakes
        naming the file or variable)."""
        return (init_settings,)

    _user_permission: UserPermission | None = PrivateAttr(None)

    def user_permission(self) -> UserPermission:
        """The rules of the user's own layers (``load_config`` keeps them); a Config built
        directly has no project layer, so all of its rules are the user's."""
        if self._user_permission is not None:
            return self._user_permission
        agents = {name: getattr(self.agents, name).permission for name in type(self.agents).model_fields}
        return UserPermission(self.permission.rules, {name: rules for name, rules in agents.items() if rules})

    def keep_user_permission(self, user: UserPermission) -> None:
        """Say which rules the user's own layers set (``load_config`` does, from its
        layers). Kept only when they differ from this config's own: two configs that
        judge alike stay equal."""
        if user != self.user_permission():
            self._user_permission = user

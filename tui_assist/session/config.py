"""Typed settings, validated with pydantic; `tui_assist.session.config_source` reads and merges them.

Read settings with `ConfigSource.read(flags).settings()`: the TOML file, then `TUI_ASSIST_*`
environment variables, then flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from tui_assist.core.approval import ApprovalMode as PermissionMode
from tui_assist.core.model import DEFAULT_REQUEST_TIMEOUT, MIN_THINKING_BUDGET, ThinkingSetting
from tui_assist.core.permissions import RuleError, canonical_rule
from tui_assist.core.prompts import CRITIC_PROMPT, SYSTEM_PROMPT
from tui_assist.core.terminal_signals import NotifyMode
from tui_assist.providers.anthropic_info import DEFAULT_MODEL
from tui_assist.providers.context_windows import known_context_window
from tui_assist.providers.profiles import OpenAIProfile
from tui_assist.session.config_source import (
    DEFAULT_ROUNDS,
    DEFAULT_THEME,
    MAX_ROUNDS,
    ConfigError,
    resolve_model,
)
from tui_assist.session.hook_table import HookEvent
from tui_assist.tools.mcp.config import McpServerConfig
from tui_assist.tools.sandbox import SandboxMode

if TYPE_CHECKING:
    from tui_assist.session.config_source import ConfigSource

__all__ = [
    "ApprovalSettings",
    "BashToolSettings",
    "ClaudeSettings",
    "ConfigError",
    "HookEvent",
    "HookSettings",
    "LspServerSettings",
    "McpSettings",
    "ModelSettings",
    "PermissionSettings",
    "Price",
    "Settings",
    "ToolsSettings",
    "WebToolSettings",
    "validate",
]

ApprovalMode = Literal["ask", "allow", "deny"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ApprovalSettings(_Section):
    """How side-effecting tool calls are approved."""

    default: ApprovalMode = "ask"
    """Mode for tools without a rule of their own."""
    rules: dict[str, ApprovalMode] = Field(default_factory=dict)
    """Per tool name, e.g. `{"bash" = "ask", "str_replace_based_edit_tool" = "allow"}`."""


class BashToolSettings(_Section):
    """The `[tools.bash]` table."""

    pass_env: list[str] = Field(default_factory=list)
    """Variables the shell gets although their names look like secrets (`*KEY*`, `*SECRET*`,
    `*TOKEN*`, `*PASSWORD*`, `ANTHROPIC_*`, `OPENAI_*`); every other secret stays out of it."""


class WebToolSettings(_Section):
    """The `[tools.web]` table."""

    fetch: bool = True
    """Offer the `web_fetch` tool."""
    allow_private: bool = False
    """Let `web_fetch` reach loopback, private and link-local addresses (a local dev server)."""
    search: bool = False
    """With the Anthropic provider, offer the API's web search server tool."""
    search_max_uses: int = Field(default=5, ge=1)
    """Searches the model may run per request."""


class ToolsSettings(_Section):
    """The `[tools]` table: settings of the built-in tools."""

    bash: BashToolSettings = Field(default_factory=BashToolSettings)
    web: WebToolSettings = Field(default_factory=WebToolSettings)


class McpSettings(_Section):
    """The `[mcp]` table."""

    pass_env: list[str] = Field(default_factory=list)
    """Variables a project's or a plugin's MCP config may name in `${VAR}` (and a `headersHelper`
    gets) although their names look like secrets; the user's own servers read any variable."""


HOOK_TIMEOUT_MAX = 600.0
"""A hook's `timeout` may be at most 10 minutes: a larger one is an invalid entry (named, ignored)."""


class HookSettings(_Section):
    """One `[[hooks.EVENT]]` table: a command run at that point (see `session/hooks.py`)."""

    type: Literal["command"] = "command"
    """The only kind of hook this program runs (Claude Code's `prompt` and `http` are not)."""
    command: str = Field(min_length=1)
    """Run with `sh -c` in the workdir, the event's JSON on its stdin."""
    matcher: str = ""
    """A regex the whole subject must match (empty or `*`: all): for the tool events the tool's
    name here or Claude Code's, for `SessionStart` its source (see `session/hooks.py`)."""
    timeout: float = Field(default=60.0, gt=0, le=HOOK_TIMEOUT_MAX)
    """Seconds before the hook and all it started are killed (a warning; the turn goes on); at
    most `HOOK_TIMEOUT_MAX`."""

    @field_validator("matcher")
    @classmethod
    def _matcher_compiles(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"matcher is not a regular expression: {exc}") from exc
        return value


class LspServerSettings(_Section):
    """One `[lsp.NAME]` table: a language server that checks the files the editor writes."""

    command: list[str] = Field(default_factory=list)
    """The program and its arguments; it speaks LSP on stdin and stdout. For `ruff`, empty: the
    `ruff` on PATH (or beside this Python) as `ruff server`."""
    extensions: list[str] = Field(default_factory=list)
    """The file endings it checks, e.g. `[".ts", ".tsx"]`; for `ruff`, empty: `.py` and `.pyi`."""
    enabled: bool = True
    """`false` turns the server off (the built-in `ruff` too)."""

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, extensions: list[str]) -> list[str]:
        if any(not e.strip(".") for e in extensions):
            raise ValueError("an extension is a file ending such as .py")
        return [e if e.startswith(".") else f".{e}" for e in extensions]


class PermissionSettings(_Section):
    """`[permissions]`: rules such as `bash(git status)`, `bash(pytest *)`, `edit`, `mcp__files`."""

    allow: list[str] = Field(default_factory=list)
    """Calls these match run without a dialog."""
    deny: list[str] = Field(default_factory=list)
    """Calls these match never run (deny beats allow)."""

    @field_validator("allow", "deny")
    @classmethod
    def _rules_parse(cls, rules: list[str]) -> list[str]:
        for rule in rules:
            try:
                canonical_rule(rule)
            except RuleError as exc:
                raise ValueError(str(exc)) from exc
        return rules


class ClaudeSettings(_Section):
    """`[claude]`: what is read from Claude Code's own files."""

    import_user: bool = True
    """Read the user-level `~/.claude/` files (`paths.claude_home()`): settings, commands, agents,
    skills. The project's `.claude/` files are read either way (gated by the project's trust)."""


class Price(_Section):
    """USD per million tokens, for the cost meter."""

    input: float = 3.0
    output: float = 15.0
    cache_write: float = 3.75
    cache_read: float = 0.30


class StatusLineSettings(_Section):
    """`[status_line]`: a command whose first line of output the status bar shows (user config only)."""

    command: str | None = None
    """Run through the shell with the session's state as JSON on stdin, whenever that changes."""


class ModelSettings(_Section):
    """A `[models."ID"]` table: what to know about one model."""

    context_window: int | None = Field(default=None, gt=0)
    """Tokens one request may hold; None: the table of known models decides."""


class Settings(_Section):
    """Everything configurable."""

    provider: str = "anthropic"
    """`anthropic`, `scripted`, `openai`, or an OpenAI-compatible profile (`ollama`, `vllm`, ...)."""
    model: str | None = None
    """None: the provider's default."""
    _pins_model: bool = PrivateAttr(default=False)
    base_url: str | None = None
    """For OpenAI-compatible providers: a URL or a profile name."""
    profiles: dict[str, OpenAIProfile] = Field(default_factory=dict)
    """Named OpenAI-compatible endpoints, beside the built-in `ollama`, `vllm` and `llamacpp`."""
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict, alias="mcpServers")
    """MCP servers whose tools are offered to the model, in the usual `mcpServers` shape."""
    mcp: McpSettings = Field(default_factory=McpSettings)
    refine: bool = False
    rounds: int = Field(default=DEFAULT_ROUNDS, ge=1, le=MAX_ROUNDS)
    """Refine round budget."""
    theme: str = DEFAULT_THEME
    workdir: Path = Field(default_factory=Path.cwd)
    data_dir: Path | None = None
    bash_timeout: float = Field(default=120.0, gt=0)
    checkpoints: bool = True
    """Snapshot the workdir before and after each turn (in the data dir), so a turn can be rewound."""
    thinking: ThinkingSetting = "off"
    """Extended thinking: `off`, `auto` (where the model supports it), or a budget in tokens
    (at least 1024); also `--thinking`. The Anthropic provider thinks; others ignore it."""
    request_timeout: float = Field(default=DEFAULT_REQUEST_TIMEOUT, gt=0)
    """Seconds a model request may wait for its response to begin, and a stream may stay silent."""
    system_prompt: str = SYSTEM_PROMPT
    critic_prompt: str = CRITIC_PROMPT
    max_model_requests: int = Field(default=60, ge=1)
    max_tool_calls: int = Field(default=200, ge=1)
    max_tokens_per_turn: int | None = None
    status_line: StatusLineSettings = Field(default_factory=StatusLineSettings)
    notify: NotifyMode = "auto"
    """How a turn that ends (or an approval that waits) while you look away is told: `auto`, `osc9`,
    `osc777`, `bell` or `off`."""
    notify_after: float = Field(default=20.0, ge=0)
    """A turn longer than this many seconds notifies even while the terminal has focus."""
    max_budget_usd: float | None = Field(default=None, gt=0)
    """The spend cap: no model request goes out once the conversation has cost this much (USD)."""
    approval: ApprovalSettings = Field(default_factory=ApprovalSettings)
    """Older per-tool settings: the fallback when no rule, mode or the sandbox decides."""
    mode: PermissionMode = "default"
    """`default`, `accept-edits`, `plan` or `bypass` (also `--mode`)."""
    sandbox: SandboxMode | None = None
    """`workspace-write` or `off`; None: `workspace-write` when bubblewrap works here."""
    sandbox_network: bool = False
    """Whether sandboxed commands may use the network."""
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    claude: ClaudeSettings = Field(default_factory=ClaudeSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    hooks: dict[str, Any] = Field(default_factory=dict)
    """The user's hooks by event (`[[hooks.PreToolUse]]`), as written: `session/hooks.py` reads
    them, so an entry it cannot honour is a warning naming it, not a config error."""
    lsp: dict[str, LspServerSettings] = Field(default_factory=dict)
    """Language servers by name (`[lsp.NAME]`), beside the built-in `ruff` for Python."""
    lsp_wait_ms: int = Field(default=1500, ge=0)
    """How long an editor write waits for the language server's errors before its result goes on."""
    trust_project: bool = False
    """Trust the workdir's project hooks, MCP servers and agents (and remember it): `--trust-project`."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> keys, e.g. `{"toggle-refine" = "ctrl+r"}`."""
    prices: dict[str, Price] = Field(default_factory=lambda: {DEFAULT_MODEL: Price()})
    compact_at: float = Field(default=0.8, gt=0, le=1)
    """Compact the history before a request estimated past this share of the context window."""
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    """Per model id, e.g. `[models."claude-sonnet-4-6"] context_window = 200000`."""
    script: Path | None = None
    """Script file for the offline `scripted` provider."""

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking_setting(cls, value: object) -> ThinkingSetting:
        if value in ("off", "auto"):
            return "off" if value == "off" else "auto"
        budget = value if isinstance(value, int) and not isinstance(value, bool) else None
        if isinstance(value, str) and value.strip().isdigit():
            budget = int(value)
        if budget is None:
            raise ValueError("use off, auto or a budget in tokens")
        if budget < MIN_THINKING_BUDGET:
            raise ValueError(
                f"a thinking budget is at least {MIN_THINKING_BUDGET} tokens (or use off or auto)"
            )
        return budget

    @field_validator("lsp")
    @classmethod
    def _lsp_servers_complete(cls, servers: dict[str, LspServerSettings]) -> dict[str, LspServerSettings]:
        for name, server in servers.items():
            if name == "ruff" or not server.enabled:
                continue  # the built-in has defaults for both
            if not server.command:
                raise ValueError(f'[lsp.{name}] needs a command, e.g. command = ["{name}", "--stdio"]')
            if not server.extensions:
                raise ValueError(f'[lsp.{name}] needs the extensions it checks, e.g. extensions = [".ts"]')
        return servers

    @property
    def resolved_model(self) -> str:
        """The model to use."""
        return resolve_model(self.provider, self.model)

    @property
    def pins_model(self) -> bool:
        """Whether `--model` chose the model (a resumed conversation then keeps it, not its last turn's)."""
        return self._pins_model

    def context_window(self, model: str) -> int:
        """The context window of `model` in tokens: `[models."ID"]` if set, else the known-models table."""
        configured = self.models.get(model)
        if configured is not None and configured.context_window is not None:
            return configured.context_window
        return known_context_window(model)


def validate(source: ConfigSource) -> Settings:
    """The merged values of `source` as settings.

    Raises:
        ConfigError: when a value is invalid; the message names the setting and where it came from.
    """
    try:
        settings = Settings.model_validate(source.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        where = ".".join(loc)
        value = "" if first["type"] == "missing" else f" = {first['input']!r}"
        if len(loc) > 1 or not source.origins.get(loc[0] if loc else ""):
            fix = f"{where} in {source.path}"
        else:
            fix = source.origin(loc[0])
        message = first["msg"].removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
        raise ConfigError(f"invalid setting {where}{value}: {message} (fix {fix})") from exc
    settings._pins_model = source.origins.get("model") == "--model"
    return settings

"""What the config says about MCP servers, and how their state and tools are named for people and models."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tui_assist.tools.shell import is_secret_variable

Transport = Literal["stdio", "http", "sse"]
"""How a server is reached: a child process, streamable HTTP, or the older HTTP+SSE transport."""
Origin = Literal["user", "project", "plugin"]
"""Where a server was declared: the user's config, a file in the project (which needs trust), or
an installed plugin (the user's choice, but written by someone else)."""

_HTTP_TYPES: Final = {"http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

ServerState = Literal["idle", "starting", "ready", "crashed", "failed", "disabled", "stopped"]
"""`idle`: not started yet; `crashed`: died, restarts on next use; `failed`: cannot be used."""

NAME_SEPARATOR: Final = "__"
MAX_NAME_LENGTH: Final = 64
"""The shortest tool-name limit among the APIs (OpenAI's function names)."""

UNSAFE_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
"""What a tool name (or a log file name) may not contain."""


class McpServerConfig(BaseModel):
    """One entry of `mcpServers`: a stdio command, or a URL spoken to over streamable HTTP or SSE."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    command: str | None = None
    """The executable of a stdio server."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Added to a minimal inherited environment (HOME, PATH, SHELL, TERM, USER, LOGNAME)."""
    cwd: Path | None = None
    """Where a stdio server starts; None: the session's workdir."""
    url: str | None = None
    """The endpoint of an HTTP server (`${VAR}` references are expanded when it connects)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every HTTP request (e.g. `Authorization = "Bearer ${TOKEN}"`); `${VAR}` and
    `${VAR:-default}` are expanded from the environment when the server connects, never stored."""
    headers_helper: str | None = Field(default=None, alias="headersHelper")
    """A shell command run each time the server connects; its stdout is a JSON object of headers
    (a short-lived token), sent over `headers`."""
    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    """Optional, as other clients write it (`.mcp.json`); must agree with `command` / `url`."""
    transport: Transport = "stdio"
    """`stdio`, `http` (streamable HTTP) or `sse`; derived from `command` / `url` / `type` when unset."""
    origin: Origin = "user"
    """Set by the reader, not the file: `project` for servers from the project folder."""
    trusted: bool = False
    """Trusted servers' tools run without approval."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds one tool call may take."""
    startup_timeout: float = Field(default=30.0, gt=0)
    """Seconds to spawn or connect, handshake and list tools."""
    disabled: bool = False

    @model_validator(mode="before")
    @classmethod
    def _derive_transport(cls, data: object) -> object:
        if not isinstance(data, Mapping):
            return data
        entry = dict(cast(Mapping[str, object], data))
        kind = entry.get("type")
        if "transport" in entry:
            pass
        elif isinstance(kind, str) and kind in _HTTP_TYPES:
            entry["transport"] = _HTTP_TYPES[kind]
        elif entry.get("command") is None and entry.get("url") is not None:
            entry["transport"] = "http"
        return entry

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP or SSE)")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type = 'stdio' needs `command`")
        if self.type not in (None, "stdio") and self.url is None:
            raise ValueError(f"type = {self.type!r} needs `url`")
        if (self.transport == "stdio") != (self.command is not None):
            raise ValueError(
                f"transport = {self.transport!r} needs `{'command' if self.transport == 'stdio' else 'url'}`"
            )
        if self.type is not None and self.type != "stdio" and _HTTP_TYPES[self.type] != self.transport:
            raise ValueError(f"type = {self.type!r} and transport = {self.transport!r} disagree")
        return self

    @property
    def expands_any_variable(self) -> bool:
        """Whether `${VAR}` may name any variable: only in the user's own config."""
        return self.origin == "user"

    @property
    def target(self) -> str:
        """The command line or URL, for status lines."""
        if self.command is not None:
            return shlex.join([self.command, *self.args])
        return self.url or ""


class McpStartError(ValueError):
    """What a server's config needs before it can start is missing; the message says what."""


class UnsetVariable(McpStartError):
    """A `${VAR}` reference names a variable that is not set (and gives no default)."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name
        """The variable."""


def expand_env(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with `${VAR}` and `${VAR:-default}` replaced from the environment, as `.mcp.json` has them.

    Args:
        text: A header value or URL.
        environ: The variables; None: `os.environ`.

    Returns:
        The expanded text.

    Raises:
        UnsetVariable: when a variable without a default is not set (the message names it).
    """
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise UnsetVariable(f"${{{name}}} is not set", name)

    return _ENV_REFERENCE.sub(value, text)


def env_references(config: McpServerConfig) -> list[str]:
    """The environment variables a server's config names (`${VAR}`), in order.

    What a trust dialog should show: trusting the server sends these values to it.
    """
    texts = [
        config.command or "",
        *config.args,
        str(config.cwd or ""),
        config.url or "",
        *config.headers.values(),
        *config.env.values(),
    ]
    return list(dict.fromkeys(m.group(1) for text in texts for m in _ENV_REFERENCE.finditer(text)))


PROVIDED_VARIABLES: Final = ("CLAUDE_PROJECT_DIR",)
"""Set by the program for every server's config (the workdir), as Claude Code does."""


def variable_allowed(name: str, pass_env: Collection[str], secrets: Collection[str] = ()) -> bool:
    """Whether a project's or a plugin's MCP config may read `name` from the environment.

    Args:
        name: The variable `${NAME}` names.
        pass_env: `[mcp] pass_env`: the variables the user allows although they look secret.
        secrets: More variables that hold secrets whatever their names (a provider's key variable).

    Returns:
        True for a name that does not look like a secret (`is_secret_variable`, `secrets`), one the
        program sets itself, or one the user listed.
    """
    if name in pass_env or name in PROVIDED_VARIABLES:
        return True
    return name not in secrets and not is_secret_variable(name)


def blocked_references(
    config: McpServerConfig, pass_env: Collection[str], secrets: Collection[str] = ()
) -> list[str]:
    """The variables a project's or a plugin's server names and may not read (none for the user's).

    Such a server is not started: expanding would send the secret where the file says.
    """
    if config.expands_any_variable:
        return []
    return [name for name in env_references(config) if not variable_allowed(name, pass_env, secrets)]


def blocked_message(name: str, config: McpServerConfig, blocked: Iterable[str]) -> str:
    """One line: the server is not started, which variables it names, and how to allow them."""
    names = list(blocked)
    listed = ", ".join(f"${{{n}}}" for n in names)
    allow = ", ".join(f'"{n}"' for n in names)
    return (
        f"the {config.origin}'s MCP server {name} is not started: its config names {listed}, which "
        f"a {config.origin}'s config may not read (allow it with `[mcp] pass_env = [{allow}]` in config.toml)"
    )


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    """A server's state, for the palette and logs."""

    name: str
    state: ServerState
    transport: Transport
    target: str
    trusted: bool
    tools: tuple[str, ...]
    """Qualified tool names, as the model sees them."""
    error: str | None
    restarts: int
    origin: Origin = "user"

    @property
    def summary(self) -> str:
        """One line: name, state, tool count, and the reason when it is not usable."""
        trust = ", trusted" if self.trusted else ""
        where = ", project" if self.origin == "project" else ""
        text = f"{self.name}: {self.state} ({self.transport}{trust}{where}), {len(self.tools)} tools"
        return f"{text}: {self.error}" if self.error else text


def format_status(statuses: Iterable[McpServerStatus]) -> list[str]:
    """Readable lines for a palette or `--verbose` output: a header per server, then its tools.

    Args:
        statuses: From `McpManager.status()`.

    Returns:
        The lines; `["no MCP servers configured"]` when there are none.
    """
    lines: list[str] = []
    for status in statuses:
        lines.append(status.summary)
        lines.append(f"  {status.target}")
        lines.extend(f"  - {tool}" for tool in status.tools)
    return lines or ["no MCP servers configured"]


def qualified_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """The name a server's tool is offered under: `server__tool`, valid for every API.

    Characters outside `[a-zA-Z0-9_-]` become `_`; a name longer than 64 characters, or one that
    collides with a name in `taken`, is shortened and given a short hash of the original.

    Args:
        server: The server's name in the config.
        tool: The tool's name on the server.
        taken: Names already given out.

    Returns:
        The qualified name.
    """
    original = f"{server}{NAME_SEPARATOR}{tool}"
    name = UNSAFE_NAME_CHARS.sub("_", original)
    if len(name) > MAX_NAME_LENGTH or name in set(taken):
        digest = hashlib.sha1(original.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME_LENGTH - 9]}_{digest}"
    return name

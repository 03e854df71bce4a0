"""The one factory: settings to a provider, a toolbox factory, MCP servers and a store.

Every host builds its parts here, so the headless commands and the TUI can't drift apart. Each
builder imports its heavy module (an SDK, the tools, aiosqlite) only when called.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.paths import data_dir

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.core.tooling import Diagnostics, SubagentSpec, Tool, ToolboxFactory
    from tui_assist.session.config import Settings
    from tui_assist.session.config_source import ConfigPreview
    from tui_assist.store.db import Store
    from tui_assist.tools.background import BackgroundShells
    from tui_assist.tools.lsp import LspServers
    from tui_assist.tools.mcp import McpManager, McpServerConfig
    from tui_assist.tools.sandbox import Sandbox
    from tui_assist.tools.skill import SkillEntry

log = logging.getLogger(__name__)


class SetupError(Exception):
    """A part cannot be built as the settings ask; the message is one line for users."""


class MissingCredentials(SetupError):
    """The Anthropic SDK found no credentials (hosts may explain the ways to set them up)."""


def make_provider(settings: Settings) -> Provider:
    """The configured provider, its SDK imported (seconds) and its client made: call it in a thread.

    Raises:
        SetupError: when the provider is unknown or not configured.
    """
    if settings.provider == "scripted":
        from tui_assist.core.model import ProviderError
        from tui_assist.providers.scripted import ScriptedProvider

        if settings.script is None:
            raise SetupError("--provider scripted needs --script FILE (a JSON list of assistant messages)")
        try:
            return ScriptedProvider.from_file(settings.script)
        except ProviderError as exc:
            raise SetupError(str(exc)) from exc
    if settings.provider == "anthropic":
        from tui_assist.providers.anthropic_info import (
            MISSING_CREDENTIALS_HINT,
            anthropic_credentials_available,
        )

        if not anthropic_credentials_available():
            raise MissingCredentials(MISSING_CREDENTIALS_HINT)
        from tui_assist.providers.anthropic import AnthropicProvider

        web = settings.tools.web
        provider = AnthropicProvider(
            settings.resolved_model,
            base_url=settings.base_url,
            request_timeout=settings.request_timeout,
            web_search_max_uses=web.search_max_uses if web.search else None,
            thinking=settings.thinking,
        )
        provider.prepare()
        return provider
    from tui_assist.providers.profiles import EndpointError, is_openai_compatible, make_openai_provider

    if is_openai_compatible(settings.provider, settings.profiles):
        try:
            compatible = make_openai_provider(
                settings.provider,
                model=settings.model,
                base_url=settings.base_url,
                profiles=settings.profiles,
                request_timeout=settings.request_timeout,
            )
        except EndpointError as exc:
            raise SetupError(str(exc)) from exc
        compatible.prepare()
        return compatible
    raise SetupError(
        f"unknown provider {settings.provider!r}: use anthropic, scripted, openai, ollama, vllm, llamacpp "
        "or a profile from config.toml"
    )


@dataclass(slots=True)
class EmptyToolbox:
    """The toolbox offered when the tools can't be loaded: the model gets none."""

    workdir: Path
    tools: Sequence[Tool] = ()

    async def aclose(self) -> None:
        """Nothing to release."""


def make_toolbox_factory(
    settings: Settings,
    extra_tools: Callable[[], Sequence[Tool]] | None = None,
    sandbox: Sandbox | None = None,
    subagents: Callable[[], Sequence[SubagentSpec]] | None = None,
    skills: Callable[[], Sequence[SkillEntry]] | None = None,
    diagnostics: Diagnostics | None = None,
    background: BackgroundShells | None = None,
) -> ToolboxFactory:
    """The tool registry's factory: a fresh toolbox (shell, editor, sub-agents, web_fetch, extras) per run.

    `sandbox` is the OS sandbox bash runs in (`choose_sandbox`), None for none; `subagents` gives
    the custom sub-agents the `agent` tool offers and `skills` the skills the `skill` tool offers
    (each read for each toolbox); `diagnostics` checks each file the editor writes (`make_lsp`);
    `background` is the session's background shells (`make_background_shells`).
    The sandbox's network switch does not apply to `web_fetch`: it runs in this process, behind
    the approval policy and its own address checks.
    """
    from tui_assist.tools.registry import toolbox_factory

    shared: list[Tool] = []
    if settings.tools.web.fetch:
        from tui_assist.tools.web import WebFetchTool

        shared.append(WebFetchTool(allow_private=settings.tools.web.allow_private))

    def extras() -> Sequence[Tool]:
        return [*shared, *(extra_tools() if extra_tools is not None else ())]

    return toolbox_factory(
        settings.workdir,
        bash_timeout=settings.bash_timeout,
        extra_tools=extras,
        pass_env=settings.tools.bash.pass_env,
        key_variables=sorted(provider_key_variables(settings)),
        sandbox=sandbox,
        subagents=subagents or (),
        skills=skills or (),
        diagnostics=diagnostics,
        background=background,
    )


def make_background_shells(settings: Settings, sandbox: Sandbox | None) -> BackgroundShells:
    """The session's background shells: the persistent shell's environment and sandbox."""
    from tui_assist.tools.background import BackgroundShells
    from tui_assist.tools.shell import shell_env

    workdir = settings.workdir.resolve()
    pass_env = frozenset(settings.tools.bash.pass_env)
    keys = provider_key_variables(settings)
    return BackgroundShells(workdir, env=lambda: shell_env(workdir, pass_env, keys), sandbox=sandbox)


def make_lsp(settings: Settings, notify: Callable[[str], None]) -> LspServers | None:
    """The language servers that check the editor's writes (none started yet); None when there are none.

    `ruff server` is built in for `.py` and `.pyi` when a `ruff` is found, unless `[lsp.ruff]`
    says `enabled = false`; `[lsp.ruff] command` or `extensions` replace its defaults.

    Args:
        settings: The `[lsp.NAME]` tables, `lsp_wait_ms` and the workdir (the servers' root).
        notify: Told once, in one line, when a server can't start or stops for good.
    """
    from tui_assist.session.config import LspServerSettings
    from tui_assist.tools.lsp import RUFF_EXTENSIONS, LspServers, LspServerSpec, ruff_command

    configured = dict(settings.lsp)
    ruff = configured.get("ruff", LspServerSettings())
    defaults = {
        "command": ruff.command or list(ruff_command() or ()),  # no ruff found: no built-in
        "extensions": ruff.extensions or list(RUFF_EXTENSIONS),
    }
    configured["ruff"] = ruff.model_copy(update=defaults)
    specs = [
        LspServerSpec(name, tuple(server.command), tuple(server.extensions))
        for name, server in configured.items()
        if server.enabled and server.command
    ]
    if not specs:
        return None
    return LspServers(specs, settings.workdir, wait_seconds=settings.lsp_wait_ms / 1000, notify=notify)


def provider_key_variables(settings: Settings) -> frozenset[str]:
    """The variables the providers' keys are configured in: every profile's `api_key_env`.

    Kept out of bash, hooks and MCP servers (with copies of their values: `tools/environment.py`),
    whatever their names; the usual `ANTHROPIC_API_KEY`/`OPENAI_API_KEY` are known there.
    """
    from tui_assist.providers.profiles import merged_profiles

    return frozenset(p.api_key_env for p in merged_profiles(settings.profiles).values() if p.api_key_env)


def sandbox_read_only_paths(settings: Settings, trusted_scripts: Sequence[Path] = ()) -> list[Path]:
    """What stays read-only inside the sandbox even where the workdir holds it (`Sandbox.read_only`).

    The user's config and data dirs (the settings, hooks and trusted projects that decide what runs
    outside the sandbox), Claude Code's `~/.claude`, and `trusted_scripts`: the files in the
    workdir that trusted project hooks and MCP commands run. The two dirs are made if missing, so
    that they can be bound read-only rather than removed as a sandboxed command's creation.
    """
    from tui_assist.paths import claude_home, config_dir

    ours = [config_dir(), data_dir(settings.data_dir)]
    for folder in ours:
        # A folder that cannot be made is reported where it is used (the store says how to fix
        # the data dir); a log line here would open the log file inside that same folder.
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
    return [*ours, claude_home(), *trusted_scripts]


def make_mcp(settings: Settings, servers: Mapping[str, McpServerConfig] | None = None) -> McpManager | None:
    """The manager of the MCP servers (not started yet), or None when there are none.

    Args:
        settings: The workdir and data dir, and the user's `mcpServers`.
        servers: The servers to run instead of the user's alone (`session_mcp_servers`: the user's
            plus a trusted project's).
    """
    servers = settings.mcp_servers if servers is None else servers
    if not servers:
        return None
    from tui_assist.tools.mcp import McpManager

    return McpManager(
        servers,
        cwd=settings.workdir,
        log_dir=data_dir(settings.data_dir) / "logs",
        pass_env=settings.mcp.pass_env,
        key_variables=provider_key_variables(settings),
    )


class DataDirError(SetupError):
    """The data dir can't hold the history as it is; the user must fix it (a usage error)."""


class NoHistory(SetupError):
    """There is no history in the data dir yet (read-only commands say so and create nothing)."""


def _data_dir_hint(settings: Settings | ConfigPreview) -> str:
    return "pass another folder with --data-dir" if settings.data_dir else "set --data-dir or TUI_ASSIST_HOME"


async def open_store(settings: Settings | ConfigPreview, *, create: bool = True) -> Store:
    """The store under the settings' data dir, opened (and migrated).

    Args:
        settings: Where the data dir is (the unvalidated preview knows it too).
        create: Whether to create the database (and its folder) when there is none yet.

    Raises:
        DataDirError: when the data dir or its database can't be used; the message says what to do.
        NoHistory: when `create` is false and there is no database yet.
    """
    import sqlite3

    from tui_assist.store.db import DB_FILENAME, Store
    from tui_assist.store.migrations import MigrationError

    folder = data_dir(settings.data_dir)
    hint = _data_dir_hint(settings)
    if folder.exists() and not folder.is_dir():
        raise DataDirError(f"the data dir {folder} is a file, not a folder ({hint})")
    database = folder / DB_FILENAME
    if not create and not database.exists():
        raise NoHistory(f"no history in {folder} yet")
    try:
        return await Store.open(folder)
    except MigrationError as exc:
        raise DataDirError(f"{exc} (upgrade tui-assist, or {hint})") from exc
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and database.exists():
            raise DataDirError(
                f"cannot write the history in {folder}: {exc} (make it writable, or {hint})"
            ) from exc
        if isinstance(exc, sqlite3.OperationalError):
            raise DataDirError(
                f"cannot create the history in {folder}: {exc} (make it writable, or {hint})"
            ) from exc
        raise DataDirError(
            f"{database} is not a tui-assist history database: {exc} (move it away, or {hint})"
        ) from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise DataDirError(f"cannot use the data dir {folder}: {reason} ({hint})") from exc

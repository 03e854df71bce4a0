"""Which MCP servers a session runs: the user's `mcpServers`, and those the project folder declares.

The project declares servers in Claude Code's `.mcp.json` (at the workdir, and at its git root
when that is another folder: the workdir's entry wins a name both declare) and in the
`[mcpServers]` tables of `<workdir>/.tui-assist/settings.toml`. Those servers start programs or
send headers chosen by whoever wrote the repository, so they are marked `origin = "project"` and
run only when the project is trusted (`session/extensions.py` digests the files
`project_mcp_servers` returns, and `SessionParts` passes the servers to `session_mcp_servers` only
then). Two more rules
keep a project from reaching further than its own servers: a project server is never `trusted`
(its calls always pass the approval policy), and a name the user's config already uses stays the
user's.

`.mcp.json` is read in Claude Code's shape: `{"mcpServers": {NAME: {command, args, env, cwd} |
{type: "http" | "sse", url, headers, headersHelper}}}` (a plugin's may also list its servers at the
top level); `${VAR}` and `${VAR:-default}` in `command`, `args`, `cwd`, `env`, `url` and `headers`
are expanded when the server connects (`tools/mcp/config.expand_env`), never stored. A project's
or a plugin's config may name only variables that don't look like secrets and those the user
lists in `[mcp] pass_env`: a server naming another one is not started (`session_mcp_servers`
says which variable and how to allow it), since expanding it would send the secret wherever the
file points.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import ValidationError

from tui_assist.core.rule_files import project_settings_path
from tui_assist.session.instructions import git_root
from tui_assist.tools.mcp.config import (
    McpServerConfig,
    Origin,
    blocked_message,
    blocked_references,
    env_references,
)

if TYPE_CHECKING:
    from tui_assist.session.config import Settings
    from tui_assist.session.plugins import Plugin
    from tui_assist.session.trust import ProjectFiles

__all__ = [
    "MCP_JSON",
    "ProjectMcpServers",
    "plugin_mcp_servers",
    "project_mcp_servers",
    "session_mcp_servers",
]

MCP_JSON: Final = ".mcp.json"
_MCP_JSON_KEYS: Final = ("command", "args", "env", "cwd", "type", "url", "headers", "headersHelper")
"""What a `.mcp.json` entry may say that we use; other keys are skipped with a warning."""


@dataclass(frozen=True, slots=True)
class ProjectMcpServers:
    """The MCP servers a project folder declares, and the files they came from."""

    servers: dict[str, McpServerConfig]
    """Name -> config, every one with `origin = "project"` and `trusted = False`."""
    files: tuple[Path, ...]
    """The project files that declare servers, in reading order (what a trust digest covers)."""
    warnings: tuple[str, ...] = ()
    """One line per file or entry that could not be used (it was skipped)."""
    origins: Mapping[str, Path] = field(default_factory=lambda: dict[str, Path]())
    """Name -> the file that declared the server (for `doctor`)."""

    def describe(self) -> list[str]:
        """One line per server for a trust dialog: `NAME: TARGET`, and the variables it would get."""
        lines: list[str] = []
        for name, config in self.servers.items():
            names = env_references(config)
            sends = f" (gets ${{{'}, ${'.join(names)}}})" if names else ""
            lines.append(f"{name}: {config.target}{sends}")
        return lines


def project_mcp_servers(workdir: Path, snapshot: ProjectFiles | None = None) -> ProjectMcpServers:
    """The servers declared by the project folder of `workdir` (read now; nothing is started).

    Reads `<git root>/.mcp.json` (when the git root is above the workdir), `<workdir>/.mcp.json`,
    then `[mcpServers]` of `<workdir>/.tui-assist/settings.toml`; a later file wins a name.

    Args:
        workdir: The session's workdir.
        snapshot: The project's files as the trust digest reads them (read now when omitted).

    Returns:
        The servers, the files that declared them, and what could not be read.
    """
    from tui_assist.session.trust import ProjectFiles

    workdir = workdir.resolve()
    files_read = snapshot or ProjectFiles(workdir)
    candidates: list[Path] = []
    root = git_root(workdir)
    if root is not None and root != workdir:
        candidates.append(root / MCP_JSON)
    candidates.append(workdir / MCP_JSON)
    servers: dict[str, McpServerConfig] = {}
    files: list[Path] = []
    warnings: list[str] = []
    origins: dict[str, Path] = {}
    for path in candidates:
        if files_read.is_file(path):
            entries = _read_mcp_json(path, files_read, warnings)
            _add(servers, files, warnings, path, entries, translate=True, origins=origins)
    settings_file = project_settings_path(workdir)
    if files_read.is_file(settings_file):
        _add(
            servers,
            files,
            warnings,
            settings_file,
            _read_settings_toml(settings_file, files_read, warnings),
            translate=False,
            origins=origins,
        )
    return ProjectMcpServers(servers, tuple(files), tuple(warnings), origins)


def plugin_mcp_servers(plugins: Sequence[Plugin]) -> ProjectMcpServers:
    """The servers of the enabled plugins, each named `plugin_PLUGIN_SERVER` (as Claude Code does).

    A plugin's `.mcp.json` may be flat (its servers at the top level) or say `mcpServers`;
    `${CLAUDE_PLUGIN_ROOT}` in it is the plugin's folder. Installed plugins are the user's choice,
    so they need no project trust; their `${VAR}` references are limited as a project's are.
    """
    from tui_assist.session.trust import ProjectFiles

    servers: dict[str, McpServerConfig] = {}
    files: list[Path] = []
    warnings: list[str] = []
    origins: dict[str, Path] = {}
    for plugin in plugins:
        if not plugin.enabled or plugin.mcp_file is None:
            continue
        entries = _read_mcp_json(
            plugin.mcp_file, ProjectFiles(plugin.root), warnings, flat=plugin.mcp_file.name == MCP_JSON
        )
        root = str(plugin.root)
        entries = {
            f"plugin_{plugin.name}_{name}": _replace_text(raw, "${CLAUDE_PLUGIN_ROOT}", root)
            for name, raw in entries.items()
        }
        _add(
            servers,
            files,
            warnings,
            plugin.mcp_file,
            entries,
            translate=True,
            origin="plugin",
            origins=origins,
        )
    return ProjectMcpServers(servers, tuple(files), tuple(warnings), origins)


def session_mcp_servers(
    settings: Settings,
    project: ProjectMcpServers | None,
    plugins: ProjectMcpServers | None = None,
) -> tuple[dict[str, McpServerConfig], list[str]]:
    """The servers a session runs: the user's, the enabled plugins', then the project's.

    A plugin's or a project's server that names a variable it may not read (`blocked_references`)
    is left out, with a line that says how to allow it.

    Args:
        settings: The user's `mcpServers` (from `config.toml` and the environment) and `[mcp]`.
        project: The project's servers, when the project is trusted; None leaves them out.
        plugins: The enabled plugins' servers (`plugin_mcp_servers`).

    Returns:
        Name -> config in start order, and one line per server left out (a name clash, a variable).
    """
    from tui_assist.session.factory import provider_key_variables

    servers = dict(settings.mcp_servers)
    notes: list[str] = []
    others = [
        *(plugins.servers.items() if plugins is not None else ()),
        *(project.servers.items() if project is not None else ()),
    ]
    for name, config in others:
        if name in servers:
            notes.append(
                f"the {config.origin}'s MCP server {name} is ignored: "
                f"{'your config.toml' if name in settings.mcp_servers else 'a plugin'} has one of that name"
            )
            continue
        blocked = blocked_references(config, settings.mcp.pass_env, provider_key_variables(settings))
        if blocked:
            notes.append(blocked_message(name, config, blocked))
            continue
        servers[name] = config
    return servers, notes


def _replace_text(value: object, old: str, new: str) -> object:
    """`value` (JSON) with `old` replaced by `new` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace_text(item, old, new) for item in cast(list[object], value)]
    if isinstance(value, Mapping):
        return {key: _replace_text(item, old, new) for key, item in cast(Mapping[str, object], value).items()}
    return value


def _add(
    servers: dict[str, McpServerConfig],
    files: list[Path],
    warnings: list[str],
    path: Path,
    entries: Mapping[str, Any],
    *,
    translate: bool,
    origin: Origin = "project",
    origins: dict[str, Path],
) -> None:
    if not entries:
        return
    files.append(path)
    for name, raw in entries.items():
        if not isinstance(raw, Mapping):
            warnings.append(f"{path}: MCP server {name!r} is not a table; skipped")
            continue
        entry = dict(cast(Mapping[str, Any], raw))
        if translate:
            unknown = sorted(set(entry) - set(_MCP_JSON_KEYS))
            if unknown:
                warnings.append(f"{path}: MCP server {name!r}: {', '.join(unknown)} not supported; ignored")
            entry = {key: entry[key] for key in _MCP_JSON_KEYS if key in entry}
            cwd = entry.get("cwd")
            if isinstance(cwd, str) and "${" not in cwd and not Path(cwd).expanduser().is_absolute():
                entry["cwd"] = path.parent / cwd  # as written: relative to the file's folder
        # The reader decides these, never the file: a project can't vouch for its own server.
        entry.update(origin=origin, trusted=False)
        try:
            servers[name] = McpServerConfig.model_validate(entry)
            origins[name] = path
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            why = first["msg"].removeprefix("Value error, ")
            warnings.append(
                f"{path}: MCP server {name!r} is invalid ({where + ': ' if where else ''}{why}); skipped"
            )


def _read_mcp_json(
    path: Path, files: ProjectFiles, warnings: list[str], *, flat: bool = False
) -> Mapping[str, Any]:
    """The `mcpServers` of `path`; with `flat`, the top level when it has no such key (a plugin's)."""
    try:
        data: object = json.loads(files.text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.append(f"{path}: cannot read it ({exc}); its MCP servers are ignored")
        return {}
    if not isinstance(data, Mapping):
        warnings.append(f"{path}: not a JSON object; its MCP servers are ignored")
        return {}
    top = cast(Mapping[str, Any], data)
    servers = top.get("mcpServers")
    if servers is None and flat:
        return top
    if servers is None:
        if top:
            warnings.append(f"{path}: no mcpServers object; its keys ({', '.join(top)}) are ignored")
        return {}
    if not isinstance(servers, Mapping):
        warnings.append(f"{path}: mcpServers is not an object; ignored")
        return {}
    return cast(Mapping[str, Any], servers)


def _read_settings_toml(path: Path, files: ProjectFiles, warnings: list[str]) -> Mapping[str, Any]:
    try:
        data = tomllib.loads(files.text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        warnings.append(f"{path}: cannot read it ({exc}); its MCP servers are ignored")
        return {}
    servers: object = data.get("mcpServers", {})
    if not isinstance(servers, Mapping):
        warnings.append(f"{path}: mcpServers is not a table; ignored")
        return {}
    return cast(Mapping[str, Any], servers)

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

`.mcp.json` is read in Claude Code's shape: `{"mcpServers": {NAME: {command, args, env} |
{type: "http" | "sse", url, headers}}}`; `${VAR}` and `${VAR:-default}` in `url`, `headers` and
`env` are expanded when the server connects (`tools/mcp/config.expand_env`), never stored.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import ValidationError

from tui_assist.core.rule_files import project_settings_path
from tui_assist.session.instructions import git_root
from tui_assist.tools.mcp.config import McpServerConfig, env_references

if TYPE_CHECKING:
    from tui_assist.session.config import Settings
    from tui_assist.session.trust import ProjectFiles

__all__ = ["MCP_JSON", "ProjectMcpServers", "project_mcp_servers", "session_mcp_servers"]

MCP_JSON: Final = ".mcp.json"
_MCP_JSON_KEYS: Final = ("command", "args", "env", "type", "url", "headers")
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
    for path in candidates:
        if files_read.is_file(path):
            entries = _read_mcp_json(path, files_read, warnings)
            _add(servers, files, warnings, path, entries, translate=True)
    settings_file = project_settings_path(workdir)
    if files_read.is_file(settings_file):
        _add(
            servers,
            files,
            warnings,
            settings_file,
            _read_settings_toml(settings_file, files_read, warnings),
            translate=False,
        )
    return ProjectMcpServers(servers, tuple(files), tuple(warnings))


def session_mcp_servers(
    settings: Settings, project: ProjectMcpServers | None
) -> tuple[dict[str, McpServerConfig], list[str]]:
    """The servers a session runs: the user's, then the project's (pass None until it is trusted).

    Args:
        settings: The user's `mcpServers` (from `config.toml` and the environment).
        project: The project's servers, when the project is trusted; None leaves them out.

    Returns:
        Name -> config in start order, and one line per project server left out for a name clash.
    """
    servers = dict(settings.mcp_servers)
    notes: list[str] = []
    for name, config in (project.servers if project is not None else {}).items():
        if name in servers:
            notes.append(f"the project's MCP server {name} is ignored: your config.toml has one of that name")
            continue
        servers[name] = config
    return servers, notes


def _add(
    servers: dict[str, McpServerConfig],
    files: list[Path],
    warnings: list[str],
    path: Path,
    entries: Mapping[str, Any],
    *,
    translate: bool,
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
        # The reader decides these, never the file: a project can't vouch for its own server.
        entry.update(origin="project", trusted=False)
        try:
            servers[name] = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            why = first["msg"].removeprefix("Value error, ")
            warnings.append(
                f"{path}: MCP server {name!r} is invalid ({where + ': ' if where else ''}{why}); skipped"
            )


def _read_mcp_json(path: Path, files: ProjectFiles, warnings: list[str]) -> Mapping[str, Any]:
    try:
        data: object = json.loads(files.text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.append(f"{path}: cannot read it ({exc}); its MCP servers are ignored")
        return {}
    servers = cast(Mapping[str, Any], data).get("mcpServers") if isinstance(data, Mapping) else None
    if servers is None:
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

"""`tui-assist doctor`: every place a session in the workdir reads, what loaded, what did not and why.

Doctor runs the session's own loaders once (`Findings`), then asks each entry of `SOURCES` for
the places it stands for. A loader's warnings name the file they are about, so they are handed to
the place whose path they name, whichever loader produced them: a new loader's results show once
its places are added to `SOURCES` and its warnings to `Findings.warnings`. Doctor trusts nothing
and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tui_assist.session.instructions import candidate_files, git_root

if TYPE_CHECKING:
    from tui_assist.core.permissions import Permissions
    from tui_assist.session.config import Settings
    from tui_assist.session.extensions import Extensions
    from tui_assist.session.mcp_config import ProjectMcpServers
    from tui_assist.session.plugins import PluginsFound
    from tui_assist.session.slash_commands import CustomCommandLoader, CustomCommands

__all__ = ["SOURCES", "DoctorReport", "Findings", "Source", "diagnose"]

PLUGIN_PARTS_USED: Final = ("MCP server",)
"""The parts of a plugin this build uses; the others are listed as not read yet."""


@dataclass(frozen=True, slots=True)
class Source:
    """One place a session reads, and what came of it."""

    kind: str
    """What the place is, e.g. `.mcp.json` or `agents folder`."""
    path: Path
    present: bool
    loaded: tuple[str, ...] = ()
    """One line per thing that loaded (a server, a command, a rule count)."""
    skipped: tuple[str, ...] = ()
    """One line per thing left out, with why (the loaders' warnings about this place among them)."""
    gated: bool = False
    """The project's: used only while the project is trusted."""

    def to_json(self) -> dict[str, Any]:
        """The JSON `doctor --json` prints for this place."""
        return {
            "kind": self.kind,
            "path": str(self.path),
            "present": self.present,
            "gated_by_trust": self.gated,
            "loaded": list(self.loaded),
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True, slots=True)
class Findings:
    """What the session's loaders found for the workdir: read once, shared by every source."""

    settings: Settings
    config_file: Path
    config_dir: Path
    data_dir: Path
    extensions: Extensions
    project_mcp: ProjectMcpServers
    plugins: PluginsFound
    plugin_mcp: ProjectMcpServers
    commands: CustomCommands
    command_loader: CustomCommandLoader
    permissions: Permissions
    warnings: tuple[str, ...] = ()
    """Every loader's warnings; each goes to the place whose path it names."""

    @property
    def workdir(self) -> Path:
        """The session's workdir, resolved."""
        return self.settings.workdir.resolve()


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """What `doctor` prints."""

    workdir: Path
    git_root: Path | None
    trust: str
    """`trusted`, `untrusted` or `changed` (`session/trust.py`)."""
    pending: tuple[str, ...]
    """What the project would run once trusted."""
    trust_files: tuple[Path, ...]
    """The project files trusting covers."""
    sources: tuple[Source, ...]
    warnings: tuple[str, ...] = ()
    """Loader warnings that name none of the places."""

    def to_json(self) -> dict[str, Any]:
        """The whole report as JSON."""
        return {
            "workdir": str(self.workdir),
            "git_root": str(self.git_root) if self.git_root is not None else None,
            "trust": {
                "status": self.trust,
                "pending": list(self.pending),
                "files": [str(p) for p in self.trust_files],
            },
            "sources": [s.to_json() for s in self.sources],
            "warnings": list(self.warnings),
        }


def _user_config(found: Findings) -> list[Source]:
    s = found.settings
    loaded = _counted("MCP server", list(s.mcp_servers))
    loaded += _counted("hook", [f"{event}" for event, hooks in s.hooks.items() for _ in hooks])
    rules = [*s.permissions.allow, *s.permissions.deny]
    loaded += [f"{len(rules)} permission rules"] if rules else []
    loaded += [f"[mcp] pass_env: {', '.join(s.mcp.pass_env)}"] if s.mcp.pass_env else []
    return [Source("user config", found.config_file, found.config_file.is_file(), tuple(loaded))]


def _project_settings(found: Findings) -> list[Source]:
    from tui_assist.core.rule_files import project_settings_path

    path = project_settings_path(found.workdir)
    hooks = [h.describe() for h in found.extensions.hooks if h.origin == path]
    servers = [name for name, origin in found.project_mcp.origins.items() if origin == path]
    rules = [r for r in found.permissions.rules if r.source.path == path]
    loaded = [f"hook {line}" for line in hooks] + _counted("MCP server", servers)
    loaded += [f"{len(rules)} permission rules"] if rules else []
    return [Source("project settings", path, path.is_file(), tuple(loaded), gated=True)]


def _claude_settings(found: Findings) -> list[Source]:
    places = [
        ("Claude Code project settings", found.workdir / ".claude" / "settings.json", True),
        ("Claude Code local settings", found.workdir / ".claude" / "settings.local.json", True),
        ("Claude Code user settings", Path.home() / ".claude" / "settings.json", False),
    ]
    return [_unread(kind, path, gated) for kind, path, gated in places]


def _mcp_json(found: Findings) -> list[Source]:
    from tui_assist.session.factory import provider_key_variables
    from tui_assist.tools.mcp.config import blocked_message, blocked_references

    workdir = found.workdir
    root = git_root(workdir)
    paths = [*([root / ".mcp.json"] if root is not None and root != workdir else []), workdir / ".mcp.json"]
    pass_env = found.settings.mcp.pass_env
    secrets = provider_key_variables(found.settings)
    sources: list[Source] = []
    for path in paths:
        loaded: list[str] = []
        skipped: list[str] = []
        for name, origin in found.project_mcp.origins.items():
            if origin != path:
                continue
            config = found.project_mcp.servers[name]
            blocked = blocked_references(config, pass_env, secrets)
            if name in found.settings.mcp_servers:
                skipped.append(f"MCP server {name}: your config.toml has one of that name")
            elif blocked:
                skipped.append(blocked_message(name, config, blocked))
            else:
                loaded.append(f"MCP server {name}: {config.target}")
        sources.append(Source(".mcp.json", path, path.is_file(), tuple(loaded), tuple(skipped), gated=True))
    return sources


def _command_folders(found: Findings) -> list[Source]:
    sources: list[Source] = []
    folders = [folder for folder, _ in found.command_loader.folders]
    for folder, origin in found.command_loader.folders:
        names = [f"/{name}" for name, c in found.commands.commands.items() if c.path.is_relative_to(folder)]
        kind = f"{origin} commands folder"
        sources.append(Source(kind, folder, folder.is_dir(), tuple(_counted("command", names))))
    return sources + _claude_folders(found, "commands", folders)


def _agent_folders(found: Findings) -> list[Source]:
    from tui_assist.session.agents import agent_folders

    sources: list[Source] = []
    places = agent_folders(found.workdir, found.config_dir)
    for folder, project in places:
        names = [a.spec.name for a in found.extensions.agents if a.path.is_relative_to(folder)]
        kind = f"{'project' if project else 'user'} agents folder"
        sources.append(Source(kind, folder, folder.is_dir(), tuple(_counted("agent", names)), gated=project))
    return sources + _claude_folders(found, "agents", [folder for folder, _ in places])


def _claude_folders(found: Findings, part: str, read: Sequence[Path]) -> list[Source]:
    """Claude Code's project and user folders of `part` that no loader here reads (yet)."""
    places = [
        (f"Claude Code project {part} folder", found.workdir / ".claude" / part, True),
        (f"Claude Code user {part} folder", Path.home() / ".claude" / part, False),
    ]
    return [_unread(kind, path, gated) for kind, path, gated in places if path not in read]


def _skill_folders(found: Findings) -> list[Source]:
    user = _unread("user skills folder", found.config_dir / "skills", False)
    return [*_claude_folders(found, "skills", []), user]


def _plugins(found: Findings) -> list[Source]:
    from tui_assist.session.factory import provider_key_variables
    from tui_assist.tools.mcp.config import blocked_message, blocked_references

    secrets = provider_key_variables(found.settings)
    state = found.plugins.state_file or found.data_dir / "plugins" / "state.json"
    names = [f"{p.name}{' (disabled)' if not p.enabled else ''}" for p in found.plugins.plugins]
    sources = [Source("plugins state", state, state.is_file(), tuple(_counted("plugin", names)))]
    for plugin in found.plugins.plugins:
        if not plugin.enabled:
            sources.append(Source("plugin", plugin.root, True, (), ("disabled (tui-assist plugin enable)",)))
            continue
        loaded: list[str] = []
        skipped: list[str] = []
        for line in plugin.brings():
            used = line.startswith(PLUGIN_PARTS_USED)
            (loaded if used else skipped).append(line if used else f"{line}: not read by this build")
        for name, origin in found.plugin_mcp.origins.items():
            config = found.plugin_mcp.servers[name]
            blocked = blocked_references(config, found.settings.mcp.pass_env, secrets)
            if origin.is_relative_to(plugin.root) and blocked:
                skipped.append(blocked_message(name, config, blocked))
        sources.append(Source("plugin", plugin.root, True, tuple(loaded), tuple(skipped)))
    return sources


def _instructions(found: Findings) -> list[Source]:
    files = candidate_files(found.workdir, found.config_dir)
    if not files:
        return [Source("instructions (AGENTS.md, CLAUDE.md)", found.workdir / "AGENTS.md", False)]
    return [
        Source("instructions", path, True, (f"{path.stat().st_size} bytes",), gated=False) for path in files
    ]


SOURCES: Final[tuple[Callable[[Findings], list[Source]], ...]] = (
    _user_config,
    _project_settings,
    _claude_settings,
    _mcp_json,
    _command_folders,
    _agent_folders,
    _skill_folders,
    _plugins,
    _instructions,
)
"""The places doctor reports, in order: add a loader's places here."""


def read_findings(settings: Settings, *, config_file: Path, config_dir: Path, data_dir: Path) -> Findings:
    """Run the session's loaders for `settings.workdir` (trusting nothing, writing nothing)."""
    from tui_assist.session.extensions import load_extensions
    from tui_assist.session.mcp_config import plugin_mcp_servers, project_mcp_servers
    from tui_assist.session.plugins import load_plugins
    from tui_assist.session.rule_files import load_permissions
    from tui_assist.session.slash_commands import CustomCommandLoader

    settings = settings.model_copy(update={"trust_project": False})  # doctor never trusts
    extensions = load_extensions(settings, config_dir, data_dir)
    project_mcp = project_mcp_servers(settings.workdir)
    plugins = load_plugins(data_dir)
    plugin_mcp = plugin_mcp_servers(plugins.plugins)
    loader = CustomCommandLoader(settings.workdir.resolve(), config_dir)
    commands = loader.load()
    permissions = load_permissions(
        settings.workdir,
        user_allow=settings.permissions.allow,
        user_deny=settings.permissions.deny,
        user_file=config_file,
    )
    warnings = (
        *extensions.warnings,
        *project_mcp.warnings,
        *plugins.warnings,
        *plugin_mcp.warnings,
        *commands.problems,
        *permissions.warnings,
    )
    return Findings(
        settings, config_file, config_dir, data_dir, extensions, project_mcp, plugins, plugin_mcp,
        commands, loader, permissions, tuple(dict.fromkeys(warnings)),
    )  # fmt: skip


def diagnose(
    settings: Settings,
    *,
    config_file: Path,
    config_dir: Path,
    data_dir: Path,
    sources: Sequence[Callable[[Findings], list[Source]]] = SOURCES,
) -> DoctorReport:
    """Everything doctor reports for the workdir of `settings`.

    Args:
        settings: The user's settings (their workdir is the project).
        config_file: The user's `config.toml`.
        config_dir: The user config dir (commands, agents, AGENTS.md).
        data_dir: The data dir (plugins, project trust).
        sources: The places to report (`SOURCES`).
    """
    found = read_findings(settings, config_file=config_file, config_dir=config_dir, data_dir=data_dir)
    places = [place for source in sources for place in source(found)]
    places, rest = _hand_out(places, found.warnings)
    extensions = found.extensions
    return DoctorReport(
        workdir=found.workdir,
        git_root=git_root(found.workdir),
        trust=extensions.trust if extensions.project_files else "trusted",
        pending=tuple(_marked_pending(found)),
        trust_files=tuple(extensions.project_files),
        sources=tuple(places),
        warnings=tuple(rest),
    )


def _marked_pending(found: Findings) -> list[str]:
    """What the project would run once trusted, a server that would still not start marked so."""
    from tui_assist.session.factory import provider_key_variables
    from tui_assist.tools.mcp.config import blocked_references

    secrets = provider_key_variables(found.settings)
    lines: list[str] = []
    for line in found.extensions.pending():
        name = line.removeprefix("MCP server ").partition(":")[0] if line.startswith("MCP server ") else None
        config = found.project_mcp.servers.get(name) if name is not None else None
        blocked = blocked_references(config, found.settings.mcp.pass_env, secrets) if config else []
        names = ", ".join(f"${{{n}}}" for n in blocked)
        lines.append(f"{line} (would not start: it names {names}; see [mcp] pass_env)" if blocked else line)
    return lines


def _hand_out(places: list[Source], warnings: Sequence[str]) -> tuple[list[Source], list[str]]:
    """Give each warning to the place whose path it names (the longest such path); the rest back."""
    extra: dict[int, list[str]] = {}
    rest: list[str] = []
    for warning in warnings:
        named = [i for i, place in enumerate(places) if str(place.path) in warning]
        if not named:
            rest.append(warning)
            continue
        best = max(named, key=lambda i: len(str(places[i].path)))
        extra.setdefault(best, []).append(warning)
    out = [
        replace(place, skipped=(*place.skipped, *extra[i])) if i in extra else place
        for i, place in enumerate(places)
    ]
    return out, rest


def _counted(what: str, names: Sequence[str]) -> list[str]:
    """`3 agents: a, b, c` (nothing when there are none)."""
    if not names:
        return []
    return [f"{len(names)} {what}{'s' if len(names) != 1 else ''}: {', '.join(names)}"]


def _unread(kind: str, path: Path, gated: bool) -> Source:
    """A place Claude Code reads that this build has no loader for yet."""
    present = path.exists()
    return Source(kind, path, present, (), ("not read by this build",) if present else (), gated=gated)

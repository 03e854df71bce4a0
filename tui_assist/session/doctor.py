"""`tui-assist doctor`: every place a session in the workdir reads, what loaded, what did not and why.

Doctor runs the session's own loaders once (`Findings`), over the places a session reads
(`SetupPlaces`), then asks each entry of `SOURCES` for the places it stands for. A loader's
warnings name the file they are about, so they are handed to the place whose path they name,
whichever loader produced them: a new loader's results show once its places are added to
`SOURCES` and its warnings to `Findings.warnings`. Doctor trusts nothing and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tui_assist.session.instructions import candidate_files, git_root

if TYPE_CHECKING:
    from tui_assist.core.permissions import Permissions
    from tui_assist.session.agents import AgentFolder
    from tui_assist.session.config import Settings
    from tui_assist.session.extensions import Extensions
    from tui_assist.session.mcp_config import ProjectMcpServers
    from tui_assist.session.plugins import Plugin, PluginsFound
    from tui_assist.session.setup_places import SetupPlaces
    from tui_assist.session.skills import SkillFolder
    from tui_assist.session.slash_commands import CustomCommandLoader, CustomCommands

__all__ = ["SOURCES", "DoctorReport", "Findings", "Source", "diagnose"]


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

    @property
    def places(self) -> SetupPlaces:
        """The places the loaders read."""
        assert self.extensions.places is not None
        return self.extensions.places


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
    sources: list[Source] = []
    for file in found.places.claude_settings():
        path = file.path
        hooks = [f"hook {h.describe()}" for h in found.extensions.hooks if h.origin == path]
        rules = [r for r in found.permissions.rules if r.source.path == path]
        loaded = hooks + ([f"{len(rules)} permission rules"] if rules else [])
        kind = f"Claude Code {'project' if file.project else 'user'} settings"
        if path.name != "settings.json":
            kind = "Claude Code local settings"
        sources.append(Source(kind, path, path.is_file(), tuple(loaded), gated=file.project))
    return sources + _claude_user_off(found, "settings.json")


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
    for folder in found.command_loader.folders:
        if folder.source == "plugin":
            continue  # under its plugin
        names = [f"/{n}" for n, c in found.commands.commands.items() if c.path.is_relative_to(folder.path)]
        kind = f"{_whose(found, folder.path, folder.source == 'project')} commands folder"
        sources.append(Source(kind, folder.path, folder.path.is_dir(), tuple(_counted("command", names))))
    return sources + _claude_user_off(found, "commands")


def _agent_folders(found: Findings) -> list[Source]:
    agents = [(a.spec.name, a.path) for a in found.extensions.agents]
    return _named_folders(found, found.places.agent_folders(), agents, "agent") + _claude_user_off(
        found, "agents"
    )


def _skill_folders(found: Findings) -> list[Source]:
    skills = [(s.entry.name, s.path) for s in found.extensions.skills]
    return _named_folders(found, found.places.skill_folders(), skills, "skill") + _claude_user_off(
        found, "skills"
    )


def _named_folders(
    found: Findings,
    folders: Sequence[AgentFolder] | Sequence[SkillFolder],
    loaded: Sequence[tuple[str, Path]],
    noun: str,
) -> list[Source]:
    """A source for each of our and Claude Code's `noun` folders, with the names loaded from it."""
    sources: list[Source] = []
    for folder in folders:
        if folder.prefix:
            continue  # a plugin's: under its plugin
        names = [name for name, path in loaded if path.is_relative_to(folder.path)]
        kind = f"{_whose(found, folder.path, folder.project)} {noun}s folder"
        counted = tuple(_counted(noun, names))
        sources.append(Source(kind, folder.path, folder.path.is_dir(), counted, gated=folder.project))
    return sources


def _whose(found: Findings, path: Path, project: bool) -> str:
    """`project`, `user`, or `Claude Code project`/`Claude Code user` for Claude Code's folders."""
    claude = found.places.claude_user
    ours = not path.is_relative_to(found.workdir / ".claude") and not (
        claude is not None and path.is_relative_to(claude)
    )
    return f"{'' if ours else 'Claude Code '}{'project' if project else 'user'}"


def _claude_user_off(found: Findings, name: str) -> list[Source]:
    """With `[claude] import_user = false`, the user's Claude Code `name`, said to be unread."""
    if found.places.claude_user is not None:
        return []
    from tui_assist.paths import claude_home

    path = claude_home() / name
    why = ("not read: [claude] import_user = false",) if path.exists() else ()
    return [Source(f"Claude Code user {name.removesuffix('.json')}", path, path.exists(), (), why)]


def _plugins(found: Findings) -> list[Source]:
    state = found.plugins.state_file or found.data_dir / "plugins" / "state.json"
    names = [f"{p.name}{' (disabled)' if not p.enabled else ''}" for p in found.plugins.plugins]
    sources = [Source("plugins state", state, state.is_file(), tuple(_counted("plugin", names)))]
    for plugin in found.plugins.plugins:
        if not plugin.enabled:
            sources.append(Source("plugin", plugin.root, True, (), ("disabled (tui-assist plugin enable)",)))
            continue
        loaded, skipped = _plugin_parts(found, plugin)
        sources.append(Source("plugin", plugin.root, True, tuple(loaded), tuple(skipped)))
    return sources


def _plugin_parts(found: Findings, plugin: Plugin) -> tuple[list[str], list[str]]:
    """What of an enabled plugin the session's loaders loaded, and the servers that would not start."""
    from tui_assist.session.factory import provider_key_variables
    from tui_assist.tools.mcp.config import blocked_message, blocked_references

    def inside(path: Path | None) -> bool:
        return path is not None and path.is_relative_to(plugin.root)

    commands = [f"/{name}" for name, c in found.commands.commands.items() if inside(c.path)]
    agents = [a.spec.name for a in found.extensions.agents if inside(a.path)]
    skills = [s.entry.name for s in found.extensions.skills if inside(s.path)]
    loaded = _counted("command", commands) + _counted("agent", agents) + _counted("skill", skills)
    loaded += [f"hook {h.describe()}" for h in found.extensions.hooks if h.plugin_root == plugin.root]
    skipped: list[str] = []
    secrets = provider_key_variables(found.settings)
    for name, origin in found.plugin_mcp.origins.items():
        if not inside(origin):
            continue
        config = found.plugin_mcp.servers[name]
        if blocked := blocked_references(config, found.settings.mcp.pass_env, secrets):
            skipped.append(blocked_message(name, config, blocked))
        else:
            loaded.append(f"MCP server {name}: {config.target}")
    root = str(plugin.root)
    return [line.replace(root, "${CLAUDE_PLUGIN_ROOT}") for line in loaded], skipped


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
    from tui_assist.session.commands import SLASH
    from tui_assist.session.extensions import load_extensions
    from tui_assist.session.mcp_config import plugin_mcp_servers, project_mcp_servers
    from tui_assist.session.rule_files import load_permissions

    settings = settings.model_copy(update={"trust_project": False})  # doctor never trusts
    extensions = load_extensions(settings, config_dir, data_dir)
    assert extensions.places is not None
    places = extensions.places
    project_mcp = project_mcp_servers(settings.workdir)
    plugins = places.installed
    plugin_mcp = plugin_mcp_servers(places.plugins)
    loader = places.command_loader(reserved=SLASH.names)
    commands = loader.load()
    user_claude = [f.path for f in places.claude_settings() if not f.project]
    permissions = load_permissions(
        settings.workdir,
        user_allow=settings.permissions.allow,
        user_deny=settings.permissions.deny,
        user_file=config_file,
        claude_user_file=user_claude[0] if user_claude else None,
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

"""What the user and the project add to a session: hooks and custom sub-agents, and the trust gate.

The places read are `SetupPlaces`'s. The user's own (config file, config dir, `~/.claude`, the
enabled plugins) always apply. The project's (its settings.toml hooks,
its allow rules, its MCP servers, its agent files, the scripts its hooks and servers name) apply
only while `ProjectTrust` says the project is trusted with those files as they are; until then
they are listed as *pending*, for the trust dialog, `--trust-project` and the headless warning.
Every project file is read once (`ProjectFiles`): the digest is of the bytes that were parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.session.agents import AgentDefinition, load_agents, project_agent_files
from tui_assist.session.hooks import (
    HookDefinition,
    claude_settings_hooks,
    parse_hooks,
    project_claude_hooks,
    project_hooks,
)
from tui_assist.session.mcp_config import ProjectMcpServers, project_mcp_servers
from tui_assist.session.rule_files import project_permissions
from tui_assist.session.setup_places import SetupPlaces, plugin_hooks
from tui_assist.session.skills import Skill, load_skills, project_skill_files
from tui_assist.session.slash_commands import project_shell_commands
from tui_assist.session.trust import ProjectFiles, ProjectTrust, TrustStatus, named_scripts

if TYPE_CHECKING:
    from tui_assist.core.tooling import SubagentSpec
    from tui_assist.session.config import Settings
    from tui_assist.session.plugins import Plugin
    from tui_assist.tools.skill import SkillEntry

MCP_FILE = ".mcp.json"
"""The project's MCP servers, in Claude Code's format (started by the MCP layer once trusted)."""

TRUST_HINT = "trust it with --trust-project, or in the TUI's trust dialog"


@dataclass(slots=True)
class Extensions:
    """The hooks and agents found, and whether the project's may run."""

    workdir: Path
    places: SetupPlaces | None = None
    """Where it was all read from."""
    hooks: list[HookDefinition] = field(default_factory=lambda: list[HookDefinition]())
    """User (plugins' among them) and project hooks, in that order."""
    agents: list[AgentDefinition] = field(default_factory=lambda: list[AgentDefinition]())
    project_files: list[Path] = field(default_factory=lambda: list[Path]())
    """The project files trusting covers: its settings files with hooks, servers or allow rules,
    `.mcp.json`, its agent files, and `trusted_scripts`."""
    skills: list[Skill] = field(default_factory=lambda: list[Skill]())
    """The user's and the project's skills (the project's used once trusted)."""
    commands: list[Path] = field(default_factory=lambda: list[Path]())
    """The project's command files with !`command` lines (they run only once trusted)."""
    mcp_servers: list[str] = field(default_factory=lambda: list[str]())
    """The project's `.mcp.json` servers, one line each (`NAME: command args` or `NAME: url`)."""
    project_mcp: ProjectMcpServers | None = None
    """The project's MCP servers as parsed from the digested bytes (started once trusted)."""
    allow_rules: list[str] = field(default_factory=lambda: list[str]())
    """The project's allow rules, one line each (`RULE (FILE)`): in effect once trusted."""
    trusted_scripts: list[Path] = field(default_factory=lambda: list[Path]())
    """The scripts inside the workdir that the project's hooks and MCP servers run (resolved):
    digested with the rest, and to be kept read-only in the sandbox."""
    digest: str = ""
    """The digest of `project_files` as read (and shown): what trusting saves."""
    trust: TrustStatus = "trusted"
    warnings: list[str] = field(default_factory=lambda: list[str]())

    @property
    def trusted(self) -> bool:
        """Whether the project's hooks and agents run."""
        return self.trust == "trusted"

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        """The enabled plugins (their commands, agents, skills, hooks and MCP servers are used)."""
        return self.places.plugins if self.places is not None else ()

    def active_hooks(self) -> list[HookDefinition]:
        """The hooks that run: the user's, and the project's once trusted."""
        return [h for h in self.hooks if h.source == "user" or self.trusted]

    def active_agents(self) -> list[SubagentSpec]:
        """The sub-agents the `agent` tool offers (a trusted project's win a shared name)."""
        agents = [a for a in self.agents if not a.project or self.trusted]
        by_name = {a.spec.name: a.spec for a in agents}
        return list(by_name.values())

    def active_skills(self) -> list[SkillEntry]:
        """The skills the `skill` tool offers: the user's, and a trusted project's."""
        return [s.entry for s in self.skills if not s.project or self.trusted]

    def skill_lines(self) -> list[str]:
        """`/skills`: each skill, where it came from, and whether it waits for trust."""
        return [self._where(s.describe(), s.project, None) for s in self.skills]

    def pending(self) -> list[str]:
        """What the project would run once trusted, one line each (empty when nothing waits)."""
        if self.trusted:
            return []
        return self.gated()

    def gated(self) -> list[str]:
        """Everything the project's trust lets run or take effect, one line each."""
        lines = [f"hook {h.describe()}" for h in self.hooks if h.source == "project"]
        lines += [f"agent {a.spec.name}: {a.path}" for a in self.agents if a.project]
        lines += [f"command /{path.stem}: {path} (its !`command` lines)" for path in self.commands]
        lines += [f"skill {s.entry.name}: {s.path}" for s in self.skills if s.project]
        lines += [f"MCP server {line}" for line in self.mcp_servers]
        lines += [f"allow rule {line}" for line in self.allow_rules]
        lines += [f"script {_shown(self.workdir, path)}" for path in self.trusted_scripts]
        return lines

    def hook_lines(self, user_file: Path) -> list[str]:
        """`/hooks`: each hook, where it came from, and whether it waits for trust."""
        return [
            self._where(f"{h.describe()}", h.source == "project", h.origin or user_file) for h in self.hooks
        ]

    def agent_lines(self) -> list[str]:
        """`/agents`: each custom sub-agent, where it came from, and whether it waits for trust."""
        return [self._where(a.describe(), a.project, None) for a in self.agents]

    def _where(self, line: str, project: bool, origin: Path | None) -> str:
        where = f" · {'project' if project else 'user'}" + (f" ({origin})" if origin is not None else "")
        waits = " · waits for you to trust the project" if project and not self.trusted else ""
        return line + where + waits

    def untrusted_warning(self) -> str | None:
        """The headless warning that the project's hooks and agents did not run, or None."""
        if self.trusted or not self.project_files:
            return None
        why = "its files changed since you trusted it" if self.trust == "changed" else "it is not trusted"
        return (
            f"this project's hooks, MCP servers and agents did not run: {why} ({TRUST_HINT}); "
            f"waiting: {'; '.join(self.pending())}"
        )


def load_extensions(
    settings: Settings, config_dir: Path, data_dir: Path, snapshot: ProjectFiles | None = None
) -> Extensions:
    """The hooks and agents of the user and of the project in `settings.workdir`, and its trust.

    `settings.trust_project` (`--trust-project`) trusts the project with its files as they are now.

    Args:
        settings: The session's settings.
        config_dir: The user config dir (its `agents/`).
        data_dir: Where the trust state is kept.
        snapshot: The project's files as read by the rest of the session (read now when omitted):
            what is parsed here is what is digested.
    """
    workdir = settings.workdir
    files = snapshot or ProjectFiles(workdir)
    places = SetupPlaces.of(settings, config_dir, data_dir)
    found = Extensions(workdir, places)
    found.warnings += places.warnings
    hooks, warnings = parse_hooks(settings.hooks, "user", config_dir / "config.toml")
    found.hooks += hooks
    found.warnings += warnings
    for user_file in [f for f in places.claude_settings() if not f.project]:  # the user's own: not gated
        hooks, warnings, _ = claude_settings_hooks(user_file.path, "user")
        found.hooks += hooks
        found.warnings += warnings
    for plugin, hooks_file in places.plugin_hook_files():  # installed by the user: not gated
        hooks, warnings = plugin_hooks(plugin, hooks_file)
        found.hooks += hooks
        found.warnings += warnings
    hooks, warnings, settings_file = project_hooks(workdir, files)
    found.hooks += hooks
    found.warnings += warnings
    hooks, warnings, claude_files = project_claude_hooks(workdir, files)  # .claude/settings*.json
    found.hooks += hooks
    found.warnings += warnings
    agents, warnings = load_agents(places.agent_folders(), files)
    found.agents = agents
    found.warnings += warnings
    found.commands = project_shell_commands(workdir)
    skills, warnings = load_skills(places.skill_folders())
    found.skills = skills
    found.warnings += warnings
    covered = [
        *([settings_file] if settings_file else []),
        *claude_files,
        *project_agent_files(workdir, config_dir),
        *found.commands,
        *project_skill_files(workdir),
    ]
    # `.mcp.json` (workdir and git root) and `[mcpServers]` of settings.toml: what the MCP layer
    # starts once the project is trusted, so the digest covers the files it reads.
    found.project_mcp = project_mcp = project_mcp_servers(workdir, files)
    covered += project_mcp.files
    found.mcp_servers = project_mcp.describe()
    # The allow rules of its settings files (their warnings are the approval policy's to give).
    for rule in project_permissions(workdir, files).rules:
        if rule.effect == "allow" and rule.source.path is not None:
            found.allow_rules.append(f"{rule.text} ({_shown(workdir, rule.source.path)})")
            covered.append(rule.source.path)
    scripts = named_scripts(workdir, [h.command for h in found.hooks if h.source == "project"])
    for server in project_mcp.servers.values():
        if server.command is not None:
            scripts += named_scripts(workdir, [[server.command, *server.args]], server.cwd)
    found.trusted_scripts = list(dict.fromkeys(scripts))
    covered += found.trusted_scripts
    found.project_files = list(dict.fromkeys(covered))
    found.digest = files.digest(found.project_files)
    trust = ProjectTrust(data_dir)
    found.trust = trust.status_of(workdir, found.digest) if found.project_files else "trusted"
    if found.trust != "trusted" and settings.trust_project:
        found.warnings.append(f"trusting the project: {'; '.join(found.gated())}")
        if not trust.save(workdir, found.digest):
            found.warnings.append(
                f"the project trust could not be saved in {trust.path}: trusted for this run"
            )
        found.trust = "trusted"
    return found


def _shown(workdir: Path, path: Path) -> str:
    """A project file as listed: relative to the workdir when inside it."""
    for root, file in ((workdir, path), (workdir.resolve(), path.resolve())):
        if file.is_relative_to(root):
            return file.relative_to(root).as_posix()
    return str(path)


def hooks_markdown(found: Extensions | None) -> str:
    """What `/hooks` says: each hook, where it came from, and whether it waits for trust."""
    from tui_assist.paths import config_file

    lines = found.hook_lines(config_file()) if found is not None else []
    if not lines:
        return (
            "**Hooks** · none. Add `[[hooks.PreToolUse]]` tables (`command`, `matcher`, `timeout`) to "
            f"`{config_file()}` or to the project's `.tui-assist/settings.toml`, or Claude Code's "
            "`hooks` to `.claude/settings.json` or `~/.claude/settings.json`."
        )
    return "**Hooks**\n\n" + "\n".join(f"- `{line}`" for line in lines)


def agents_markdown(found: Extensions | None) -> str:
    """What `/agents` says: each custom sub-agent, where it came from, and whether it waits for trust."""
    from tui_assist.paths import config_dir

    lines = found.agent_lines() if found is not None else []
    if not lines:
        return (
            "**Agents** · none. Put Markdown files with front matter (`name`, `description`, `tools`, "
            f"`model`) in `.tui-assist/agents/`, `.claude/agents/`, `{config_dir() / 'agents'}` or"
            " `~/.claude/agents/`, or install a plugin (`tui-assist plugin install`)."
        )
    return "**Agents**\n\n" + "\n".join(f"- `{line}`" for line in lines)


def skills_markdown(found: Extensions | None) -> str:
    """What `/skills` says: each skill, where it came from, and whether it waits for trust."""
    from tui_assist.paths import config_dir

    lines = found.skill_lines() if found is not None else []
    if not lines:
        return (
            "**Skills** · none. A skill is a folder holding a `SKILL.md` (front matter `name`, "
            "`description`), in `.claude/skills/`, `~/.claude/skills/` or "
            f"`{config_dir() / 'skills'}`, or in an installed plugin's `skills/`."
        )
    return "**Skills**\n\n" + "\n".join(f"- `{line}`" for line in lines)

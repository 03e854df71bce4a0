"""Every place a session reads a setup from, in one list: for the loaders and for `doctor`.

The places are the user's (config dir, Claude Code's `~/.claude` unless `[claude] import_user =
false`), the project's (`.tui-assist/`, `.claude/`) and the enabled plugins'. `load_extensions`,
the custom command loader and `tui-assist doctor` all take their folders and files from a
`SetupPlaces`, so what doctor reports is what a session reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from tui_assist.session.agents import AgentFolder, agent_folders
from tui_assist.session.claude_dirs import (
    CLAUDE_PROJECT_DIR,
    CLAUDE_SETTINGS_FILES,
    USER_SETTINGS_FILE,
    user_claude_dir,
)
from tui_assist.session.skills import SkillFolder, skill_folders

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tui_assist.session.config import Settings
    from tui_assist.session.hooks import HookDefinition, HookSource
    from tui_assist.session.plugins import Plugin, PluginsFound
    from tui_assist.session.slash_commands import CustomCommandLoader


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """A Claude Code settings file (hooks, permissions) and whose it is."""

    path: Path
    source: HookSource

    @property
    def project(self) -> bool:
        """Whether it is the project's (gated by trust)."""
        return self.source == "project"


@dataclass(frozen=True, slots=True)
class SetupPlaces:
    """Where the user's, the project's and the enabled plugins' setup is read from."""

    workdir: Path
    config_dir: Path
    """The user config dir (its `commands/`, `agents/`, `skills/`)."""
    claude_user: Path | None
    """Claude Code's user dir (`~/.claude`); None when `[claude] import_user = false`."""
    installed: PluginsFound
    """Every installed plugin (enabled or not), and what of them could not be read."""

    @classmethod
    def of(cls, settings: Settings, config_dir: Path, data_dir: Path) -> SetupPlaces:
        """The places of `settings.workdir`, the user's dirs and the plugins installed in `data_dir`."""
        from tui_assist.session.plugins import load_plugins

        return cls(settings.workdir, config_dir, user_claude_dir(settings), load_plugins(data_dir))

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        """The enabled plugins: a disabled one brings nothing."""
        return tuple(p for p in self.installed.plugins if p.enabled)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What of the installed plugins could not be read."""
        return self.installed.warnings

    def claude_settings(self) -> list[SettingsFile]:
        """Claude Code's settings files: the user's, then the project's."""
        user = [SettingsFile(self.claude_user / USER_SETTINGS_FILE, "user")] if self.claude_user else []
        project = self.workdir / CLAUDE_PROJECT_DIR
        return [*user, *(SettingsFile(project / name, "project") for name in CLAUDE_SETTINGS_FILES)]

    def plugin_hook_files(self) -> Iterable[tuple[Plugin, Path]]:
        """Each enabled plugin's hooks file (`hooks/hooks.json`, or its manifest when inline)."""
        return [(p, p.hooks_file) for p in self.plugins if p.hooks_file is not None]

    def agent_folders(self) -> list[AgentFolder]:
        """The agent folders, lowest precedence first."""
        return agent_folders(self.workdir, self.config_dir, self.claude_user, self.plugins)

    def skill_folders(self) -> list[SkillFolder]:
        """The skill folders, the user's first."""
        return skill_folders(self.workdir, self.config_dir, self.claude_user, self.plugins)

    def command_loader(self, reserved: Iterable[str] = ()) -> CustomCommandLoader:
        """A loader of the custom commands (`reserved`: the built-ins' names)."""
        from tui_assist.session.slash_commands import CustomCommandLoader

        return CustomCommandLoader(
            self.workdir.resolve(),
            self.config_dir,
            reserved=reserved,
            claude_user=self.claude_user,
            plugins=self.plugins,
        )


def plugin_hooks(plugin: Plugin, path: Path) -> tuple[list[HookDefinition], list[str]]:
    """A plugin's hooks (`$CLAUDE_PLUGIN_ROOT` its folder), and one warning per entry not loaded.

    `path` is its `hooks/hooks.json` in Claude Code's shape, or its manifest when that lists them
    inline (`"hooks": {EVENT: [...]}`, or the whole `{"hooks": {...}}` of a hooks file).
    """
    import json

    from tui_assist.session.hooks import claude_settings_hooks, parse_hooks
    from tui_assist.session.plugins import MANIFEST

    if path != plugin.root / MANIFEST:
        hooks, warnings, _ = claude_settings_hooks(path, "user", plugin_root=plugin.root)
        return hooks, warnings
    try:
        table: object = json.loads(path.read_text(encoding="utf-8")).get("hooks")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
        return [], [f"{path}: cannot be read ({exc}); its hooks are ignored"]
    if isinstance(table, dict) and "hooks" in table:
        table = cast("dict[str, object]", table)["hooks"]
    return parse_hooks(table, "user", path, plugin_root=plugin.root)

"""Where Claude Code keeps a user's and a project's setup, as this program reads it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tui_assist.session.config import Settings

CLAUDE_PROJECT_DIR: Final = ".claude"
"""Under the workdir: the project's Claude Code setup."""
CLAUDE_SETTINGS_FILES: Final = ("settings.json", "settings.local.json")
"""The project's Claude Code settings in `.claude/`, in the order Claude Code layers them."""
USER_SETTINGS_FILE: Final = "settings.json"
"""In Claude Code's user dir."""


def user_claude_dir(settings: Settings) -> Path | None:
    """The user's Claude Code dir (`~/.claude`, `$CLAUDE_CONFIG_DIR`), None when not read.

    `[claude] import_user = false` turns it off.
    """
    if not settings.claude.import_user:
        return None
    from tui_assist.paths import claude_home

    return claude_home()

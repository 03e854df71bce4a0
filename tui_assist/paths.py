"""Where things live: config, data and the shipped themes, resolved in one place."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "tui-assist"


def config_dir() -> Path:
    """The user config dir (`$XDG_CONFIG_HOME/tui-assist` on Linux)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def config_file() -> Path:
    """The settings file."""
    return config_dir() / "config.toml"


def data_dir(override: str | Path | None = None) -> Path:
    """The data dir: `--data-dir`, else `$TUI_ASSIST_HOME`, else the platform's user data dir."""
    if override:
        return Path(override).expanduser()
    if home := os.environ.get("TUI_ASSIST_HOME"):
        return Path(home).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def themes_dir() -> Path:
    """The shipped themes: inside the package in a wheel, beside it in a source checkout."""
    package = Path(__file__).resolve().parent
    bundled = package / "themes"
    return bundled if bundled.is_dir() else package.parent / "themes"


def claude_home() -> Path:
    """Claude Code's user dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    if configured := os.environ.get("CLAUDE_CONFIG_DIR"):
        return Path(configured).expanduser()
    return Path.home() / ".claude"


def user_themes_dir() -> Path:
    """Where users drop their own theme files."""
    return config_dir() / "themes"

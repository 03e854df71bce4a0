"""Where things live: config, data and the shipped themes, resolved in one place."""

from __future__ import annotations

import contextlib
import os
import re
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


def resume_screen_path(data_dir: Path, conversation_id: str) -> Path | None:
    """Where the pane is kept as the TUI left `conversation_id`, for its next `--resume`.

    See `ui/pane_snapshot.py`. None for an id that is not a plain name.
    """
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", conversation_id):
        return None
    return data_dir / "resume-screens" / f"{conversation_id}.json"


def forget_resume_screen(data_dir: Path, conversation_id: str) -> None:
    """`conversation_id` changed: the pane kept for its resume no longer shows it."""
    if (path := resume_screen_path(data_dir, conversation_id)) is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def claude_home() -> Path:
    """Claude Code's user folder: `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`."""
    if configured := os.environ.get("CLAUDE_CONFIG_DIR"):
        return Path(configured).expanduser()
    return Path.home() / ".claude"


def themes_dir() -> Path:
    """The shipped themes: inside the package in a wheel, beside it in a source checkout."""
    package = Path(__file__).resolve().parent
    bundled = package / "themes"
    return bundled if bundled.is_dir() else package.parent / "themes"


def user_themes_dir() -> Path:
    """Where users drop their own theme files."""
    return config_dir() / "themes"

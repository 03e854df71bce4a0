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


def resume_screens_dir(data_dir: Path) -> Path:
    """Where the TUI keeps its conversation pane for the next resume (see `ui/pane_snapshot.py`)."""
    return data_dir / "resume-screens"


def resume_screen_path(data_dir: Path, conversation_id: str) -> Path | None:
    """Where the pane is kept as the TUI left `conversation_id`; None for an id that is not a plain name."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", conversation_id):
        return None
    return resume_screens_dir(data_dir) / f"{conversation_id}.json"


def latest_kept_path(data_dir: Path) -> Path:
    """Names the conversation whose pane is kept when it is also the latest (what `--continue` opens)."""
    return resume_screens_dir(data_dir) / "latest"


def latest_kept(data_dir: Path) -> str | None:
    """The conversation `latest_kept_path` names, if any."""
    try:
        return latest_kept_path(data_dir).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def forget_resume_screen(data_dir: Path, conversation_id: str) -> None:
    """`conversation_id` changed: the pane kept for it no longer shows it, and it is the latest now."""
    if (path := resume_screen_path(data_dir, conversation_id)) is not None:
        with contextlib.suppress(OSError):
            path.unlink()
    if latest_kept(data_dir) not in (None, conversation_id):
        with contextlib.suppress(OSError):
            latest_kept_path(data_dir).unlink()


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

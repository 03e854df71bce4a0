"""What the user chose in the TUI and expects back next time: the theme and the Refine toggle.

The choices live in a small JSON state file in the data dir, never in the user's `config.toml`:
that file is theirs to write, and a program that rewrites it loses their comments and layout.
The state file sits between the two other sources: it wins over the config file (it holds the
user's latest choice, made after they wrote the file), and a flag or an environment variable
still wins over it for that run, as they win over the file.

Reading and writing never fail the app: an unreadable state file is as good as none, and a
choice that cannot be saved is only forgotten.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_assist.session.config_source import ConfigSource

log = logging.getLogger(__name__)

STATE_FILE = "tui-state.json"
"""The state file's name in the data dir."""


def preferences_path(data_dir: Path) -> Path:
    """Where the TUI's state file lives in `data_dir`."""
    return data_dir / STATE_FILE


@dataclass
class Preferences:
    """The TUI's remembered choices; None means never chosen."""

    theme: str | None = None
    refine: bool | None = None

    @classmethod
    def load(cls, path: Path) -> Preferences:
        """The choices saved at `path` (none when the file is missing, unreadable or malformed)."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return cls()
        import json  # only once there is a file: the TUI's start need not import it otherwise

        try:
            data: Any = json.loads(text)
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        theme = data.get("theme")
        refine = data.get("refine")
        return cls(
            theme=theme if isinstance(theme, str) and theme else None,
            refine=refine if isinstance(refine, bool) else None,
        )

    def save(self, path: Path) -> bool:
        """Write the choices to `path` atomically (a crash leaves the old file or the new one).

        Returns:
            Whether they were saved.
        """
        import json

        from tui_assist.tools.safe_io import write_atomically  # only when saving

        data = {"theme": self.theme, "refine": self.refine}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, json.dumps(data).encode("utf-8"), new_mode=0o600)
        except OSError:
            log.warning("cannot save the TUI state to %s", path, exc_info=True)
            return False
        return True


def for_this_run(saved: Preferences, source: ConfigSource) -> Preferences:
    """The saved choices that apply to this run: those no flag or environment variable overrides.

    Args:
        saved: What the state file holds.
        source: The settings' sources, which know where each value came from.

    Returns:
        The choices to start with (None where the settings decide).
    """
    return Preferences(
        theme=saved.theme if "theme" not in source.origins else None,
        refine=saved.refine if "refine" not in source.origins else None,
    )

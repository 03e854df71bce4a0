"""The conversation pane as it was left, drawn in the first frame of `--resume ID` or `--continue`.

Redrawing a stored conversation needs the store, the core's events, the Markdown parser and the
turn views: about 150 ms after the first frame on a 2-core machine. A conversation the user left
at its end in the TUI is mostly the one they come back to, so the lines the pane showed are kept
(`remember`, when the app quits and after each run, see `screens/main_kept_pane.py`): their text
and styles, data a resume only draws (`recall`), never code. The pane shows them until its real
turns replace them (see `Conversation.show_snapshot`).

They are kept only while they are true: for the terminal's size and the theme they were drawn
at, and until the conversation changes. The store removes them when a turn of the conversation
begins or is committed or a rewind takes turns out, and the name of the latest conversation's
when another one changes (`paths.forget_resume_screen`), whichever process writes it.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any

from rich.errors import StyleSyntaxError
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip

from tui_assist.paths import resume_screen_path
from tui_assist.ui.textual_private import render_alone

if TYPE_CHECKING:
    from pathlib import Path

    from textual.widget import Widget

FORMAT = 1
"""The version of the file's layout; a file of another one is not drawn."""
KEPT = 20
"""The most conversations whose pane is kept (the oldest files go first)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What a terminal could take as a command: a file edited by hand cannot write to the terminal."""


def _key(screen: Size, theme: str) -> dict[str, Any]:
    return {"format": FORMAT, "screen": [screen.width, screen.height], "theme": theme}


def remember(pane: Widget, data_dir: Path, conversation_id: str, theme: str) -> None:
    """Keep what `pane` shows of `conversation_id` (at the terminal's size, in `theme`)."""
    path = resume_screen_path(data_dir, conversation_id)
    if path is None:
        return
    styles: dict[str, int] = {}  # each style's look, as Rich writes it (no link, no mouse actions)
    lines = [
        [[segment.text, styles.setdefault(_look(segment.style), len(styles))] for segment in strip]
        for strip in render_alone(pane)
    ]
    document = _key(pane.app.size, theme) | {
        "pane": [pane.outer_size.width, pane.outer_size.height],
        "styles": list(styles),
        "lines": lines,
    }
    from tui_assist.tools.safe_io import write_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    # (The conversation's text: readable by its user alone, as the store is.)
    write_atomically(path, json.dumps(document, separators=(",", ":")).encode("utf-8"), new_mode=0o600)
    _prune(path.parent)


def _look(style: Style | None) -> str:
    return "" if style is None else str(style.update_link(None))


def recall(data_dir: Path, conversation_id: str, screen: Size, theme: str) -> tuple[Size, list[Strip]] | None:
    """The pane's size and lines kept for `conversation_id` at this terminal size and theme, if any."""
    path = resume_screen_path(data_dir, conversation_id)
    if path is None:
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if any(document.get(name) != value for name, value in _key(screen, theme).items()):
            return None  # (drawn at another size or in another theme)
        width, height = document["pane"]
        styles = [_style(text) for text in document["styles"]]
        lines = [
            Strip([Segment(_CONTROL.sub(" ", text), styles[style]) for text, style in line])
            for line in document["lines"]
        ]
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, StyleSyntaxError):
        return None  # missing, or not a file this wrote: the resume draws the turns alone
    if len(lines) != height or any(line.cell_length != width for line in lines):
        return None
    return Size(width, height), lines


def _style(text: str) -> Style:
    """A kept style, without a link (a terminal would be sent its address)."""
    return Style.null() if _CONTROL.search(text) else Style.parse(text).update_link(None)


def _prune(folder: Path) -> None:
    with contextlib.suppress(OSError):  # (another process pruning at once)
        kept = sorted(folder.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
        for path in kept[KEPT:]:
            path.unlink()

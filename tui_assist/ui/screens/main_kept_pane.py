"""The main screen's conversation pane, kept for the next `--resume` of its conversation.

What is kept and when it is drawn: `ui/pane_snapshot.py`. It is kept when the app quits, and a
moment after each run ends (a turn, a resume, a rewind): a terminal closed with the app in it
does not quit it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from textual.timer import Timer

    from tui_assist.session.chat import ChatSession
    from tui_assist.ui.screens.main import MainScreen

KEEP_AFTER = 1.0
"""Seconds after a run ends that the pane is kept (once its last frames are drawn)."""


class KeptPane:
    """Draws the pane kept for `--resume ID` in the first frame, and keeps it again."""

    def __init__(self, screen: MainScreen) -> None:
        self._screen = screen
        self._timer: Timer | None = None

    @property
    def _data_dir(self) -> Path:
        """The data dir, known before the settings are validated (see `ConfigPreview`)."""
        from tui_assist.paths import data_dir

        return data_dir(self._screen.tui_app.preview.data_dir)

    def show(self) -> None:
        """For `--resume ID`, the pane as it was left (see `pane_snapshot`), in the first frame."""
        screen = self._screen
        if not screen.start.resume:
            return
        from tui_assist.ui.pane_snapshot import recall

        kept = recall(self._data_dir, screen.start.resume, screen.app.size, screen.app.theme)
        if kept is not None:
            screen.conversation.show_snapshot(*kept)

    def keep(self, session: ChatSession) -> None:
        """Keep what the pane shows of `session`'s stored conversation, when it is left as a resume
        draws it: idle, at its end, with no message selected."""
        screen = self._screen
        pane = screen.conversation
        if session.conversation_id is None or session.history is None or screen.running:
            return
        if not pane.children or pane.scroll_y < pane.max_scroll_y or pane.has_focus:
            return
        from tui_assist.ui.pane_snapshot import remember

        with contextlib.suppress(OSError):  # (a full disk: the next resume draws the turns alone)
            remember(pane, self._data_dir, session.conversation_id, screen.app.theme)

    def keep_soon(self) -> None:
        """Keep the pane `KEEP_AFTER` seconds from now (a run just ended)."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self._screen.set_timer(KEEP_AFTER, lambda: self.keep(self._screen.session))

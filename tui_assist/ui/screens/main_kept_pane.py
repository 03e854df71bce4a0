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
        return self._screen.tui_app.data_dir

    def show(self) -> None:
        """For `--resume ID` or `--continue`, the pane as it was left (see `pane_snapshot`), in the
        first frame."""
        screen = self._screen
        start = screen.start
        from tui_assist.paths import latest_kept

        conversation_id = start.resume or (latest_kept(self._data_dir) if start.continue_latest else None)
        if not conversation_id:
            return
        from tui_assist.ui.pane_snapshot import recall

        kept = recall(self._data_dir, conversation_id, screen.app.size, screen.app.theme)
        if kept is not None:
            screen.conversation.show_snapshot(*kept)

    def keep(self, session: ChatSession) -> str | None:
        """Keep what the pane shows of `session`'s stored conversation, when it is left as a resume
        draws it: idle, filled and at its end, with no message selected. Returns the conversation
        kept."""
        screen = self._screen
        pane = screen.conversation
        conversation_id = session.conversation_id
        if conversation_id is None or session.history is None or screen.running:
            return None
        # (A conversation that does not fill the pane is drawn at its top live but at its bottom
        # when resumed: kept, it would jump.)
        if pane.max_scroll_y <= 0 or pane.scroll_y < pane.max_scroll_y or pane.has_focus:
            return None
        from tui_assist.ui.pane_snapshot import remember

        try:
            remember(pane, self._data_dir, conversation_id, screen.app.theme)
        except OSError:  # (a full disk: the next resume draws the turns alone)
            return None
        return conversation_id

    def keep_soon(self) -> None:
        """Keep the pane `KEEP_AFTER` seconds from now (a run just ended), and name its conversation
        the latest's when it is (for `--continue`)."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self._screen.set_timer(KEEP_AFTER, self._keep_after_run)

    async def _keep_after_run(self) -> None:
        session = self._screen.session
        if (conversation_id := self.keep(session)) is None:
            return
        from tui_assist.paths import latest_kept_path
        from tui_assist.tools.safe_io import write_atomically

        latest = latest_kept_path(self._data_dir)
        # (Best effort: a store busy or closing names nothing, and `--continue` draws the turns.)
        with contextlib.suppress(Exception):
            if await session.find_conversation() == conversation_id:
                write_atomically(latest, conversation_id.encode("utf-8"), new_mode=0o600)
                # Asked again once written: a turn begun meanwhile in another conversation removed
                # the name before it was written (the store removes it after its commit).
                if await session.find_conversation() != conversation_id:
                    latest.unlink()

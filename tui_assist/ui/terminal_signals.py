"""The chat's glue to `core.terminal_signals`: focus from Textual, sequences to the terminal.

The app owns one `TerminalSignalsGlue`; the main screen tells it when a turn starts and ends,
the approval bridge when a dialog waits (`approval_waiting`). Focus comes from Textual's
`App.app_focus`, which its `AppFocus`/`AppBlur` events set (the driver turns on the terminal's
focus reports). The mode and `notify_after` are read from the settings at each turn's start.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tui_assist.core.terminal_signals import POP_TITLE, PUSH_TITLE, TerminalSignals, title_sequence
from tui_assist.ui.textual_private import write_to_terminal

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from tui_assist.core.terminal_signals import NotifyMode
    from tui_assist.session.controller import TurnEnded


class TerminalSignalsGlue:
    """Feeds the app's focus and the chat's turns to a `TerminalSignals`, and writes what it says."""

    def __init__(
        self,
        app: App[Any],
        settings: Callable[[], tuple[NotifyMode, float] | None] = lambda: None,
        write: Callable[[str], None] | None = None,
    ) -> None:
        """Signal for `app`.

        Args:
            app: The app whose terminal is told.
            settings: `(notify, notify_after)` from the settings; None while they are not loaded.
            write: Where sequences go (default: the app's terminal); tests collect them.
        """
        self._app = app
        self._settings = settings
        self.write = write or (lambda sequence: write_to_terminal(app, sequence))
        self.signals = TerminalSignals(env=dict(os.environ))
        self._overdue: Timer | None = None

    def start(self) -> None:
        """Keep the terminal's own title for the exit, show ours, and follow the app's focus."""
        self.write(PUSH_TITLE + title_sequence(self.signals.state))
        self._app.watch(self._app, "app_focus", self._focus_changed, init=False)

    def stop(self) -> None:
        """Give the terminal back the title it had."""
        self.write(POP_TITLE)

    def _focus_changed(self, focused: bool) -> None:
        self.write(self.signals.focus_changed(focused))

    def turn_started(self) -> None:
        configured = self._settings()
        if configured is not None:
            self.signals.mode, self.signals.notify_after = configured
        self.write(self.signals.turn_started())

    def turn_ended(self, ended: TurnEnded) -> None:
        """A turn ended (as the controller tells the host): notify if the user is away or waited."""
        self._cancel_overdue()
        if ended.outcome is not None:
            outcome, answer = ended.outcome.result.outcome, ended.outcome.result.answer
        else:
            outcome, answer = ("cancelled" if ended.problem == "cancelled" else "error"), ended.problem or ""
        self.write(self.signals.turn_ended(outcome, answer))

    @contextmanager
    def approval(self, summary: str) -> Iterator[None]:
        """While an approval dialog waits: say so now if unfocused, or after `notify_after` seconds."""
        self.write(self.signals.approval_waiting(summary))
        self._cancel_overdue()
        self._overdue = self._app.set_timer(
            max(0.1, self.signals.notify_after),
            lambda: self.write(self.signals.approval_overdue(summary)),
        )
        try:
            yield
        finally:
            self._cancel_overdue()
            self.write(self.signals.approval_answered())

    def _cancel_overdue(self) -> None:
        if self._overdue is not None:
            self._overdue.stop()
            self._overdue = None


@contextmanager
def approval_waiting(app: App[Any], summary: str) -> Iterator[None]:
    """Signal the approval of `summary` while the block runs, if `app` has terminal signals."""
    glue = getattr(app, "terminal_signals", None)
    if not isinstance(glue, TerminalSignalsGlue):
        yield
        return
    with glue.approval(summary):
        yield

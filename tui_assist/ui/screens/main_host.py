"""The main screen as the `Host` of the session's `TurnController` (`session/controller.py`).

The controller owns every run; this object shows them on the screen: the running turn's view, the
queued prompts, the elapsed times' tick, a failed turn's retry, the meter. It keeps what shows the
running turn and asks the screen for its widgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui_assist.ui.widgets.earlier_turns import pages_of
from tui_assist.ui.widgets.streaming_markdown import with_next_flush
from tui_assist.ui.widgets.turn_parts import Notice

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui_assist.core.observer import TurnObserver
    from tui_assist.session.controller import TurnEnded
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.runs import Run
    from tui_assist.session.slash_commands import SlashInput
    from tui_assist.ui.screens.main import MainScreen
    from tui_assist.ui.widgets.conversation import TurnView
    from tui_assist.ui.widgets.queued_prompt import QueuedPrompt


class ScreenHost:
    """What `MainScreen` shows as the controller's runs start, stream, queue and end."""

    def __init__(self, screen: MainScreen) -> None:
        """Show runs on `screen`."""
        self._screen = screen
        self._view: TurnView | None = None
        """The view of the turn the controller runs."""
        self._shown_attachments: set[str] = set()
        self._queued_views: list[QueuedPrompt] = []
        self._retry_view: TurnView | None = None
        """The failed turn's view, told how to retry once the prompt's worker is done."""
        self._tick: Timer | None = None
        self._blinked: bool | None = None
        """Whether the prompt's cursor blinked before the running turn (it holds still in one)."""

    @property
    def turn_observer(self) -> TurnObserver:
        """Core events to the screen as messages; approvals through the modal."""
        return self._screen.turn_observer

    def turn_started(self, prompt: str, strategy: str) -> None:
        screen = self._screen
        self._view = screen.conversation.begin_turn(prompt, strategy)
        self._shown_attachments = set()
        screen.prompt.add_class("-running")
        # Each blink is a frame, which would hold back a frame of the streamed answer that
        # follows it (see `with_next_flush`).
        if self._blinked is None:
            self._blinked = screen.prompt.cursor_blink
        screen.prompt.cursor_blink = False
        self._tick = screen.set_interval(0.5, self._on_tick)
        screen.status.state = "running" if screen.session.ready else "loading"
        screen.tui_app.terminal_signals.turn_started()
        screen.refresh_bindings()

    def prompt_attached(self, attachments: Attachments) -> None:
        self._screen.status.state = "running"
        lines = attachments.notices()
        self._shown_attachments = set(lines)
        if self._view is not None:
            self._view.mount(Notice("\n".join(f"- `{line}`" for line in lines), classes="-attachments"))

    def turn_ended(self, ended: TurnEnded) -> None:
        screen = self._screen
        view, self._view = self._view, None
        if self._tick is not None:
            self._tick.stop()
            self._tick = None
        screen.prompt.remove_class("-running")
        if self._blinked is not None:
            screen.prompt.cursor_blink, self._blinked = self._blinked, None
        screen.status.state = "idle"
        screen.tui_app.terminal_signals.turn_ended(ended)
        conversation_id = screen.session.conversation_id
        if conversation_id is not None and not screen.conversation.reads_pages:
            # The turns this session ran are stored: those the pane removes can be read again.
            screen.conversation.offer_earlier(pages_of(screen.session, conversation_id), None)
        if view is not None:
            self._show_turn_end(view, ended)
        screen.show_notes()
        screen.call_later(screen.refresh_bindings)

    def _show_turn_end(self, view: TurnView, ended: TurnEnded) -> None:
        screen = self._screen
        outcome = ended.outcome
        if ended.unsent:
            problem = ended.problem or ""
            screen.conversation.add_notice(
                "**This prompt was not sent:** no provider is available. "
                "See the note above on how to configure one.\n\n" + ("" if "\n" in problem else problem),
                classes="-error",
            )
            view.mark_unsent()
            return
        if outcome is None:
            if ended.problem == "cancelled":
                screen.call_later(view.mark_cancelled)
            else:  # a bug: shown where it happened, and the prompt can be sent again
                screen.call_later(view.mark_failed, ended.problem or "the turn failed")
                self._offer_retry(ended.prompt, view)
            return
        if ended.cancelled:
            screen.call_later(view.mark_cancelled)
        elif ended.failed:
            # The turn's badge shows the error, once, where it happened.
            self._offer_retry(ended.prompt, view)
        for warning in outcome.warnings:
            if warning not in self._shown_attachments:
                screen.conversation.add_notice(warning, classes="-warning")

    def queue_changed(self, queued: Sequence[str]) -> None:
        from tui_assist.ui.widgets.queued_prompt import sync_queued

        waiting = self._screen.controller.waiting  # a prompt that joined the turn leaves from the middle
        self._queued_views = sync_queued(self._queued_views, waiting, self._screen.conversation.mount)

    def queue_returned(self, texts: Sequence[str]) -> None:
        screen = self._screen
        for view in self._queued_views:
            view.remove()
        self._queued_views.clear()
        screen.prompt.restore("\n".join(texts))
        if screen.controller.failed_prompt is not None:  # else cancelled: the user knows why
            # Follow-ups to a turn that failed are rarely still wanted as written.
            screen.prompt.show_error("The turn failed: your queued prompts are back here to send again.")

    def meter_changed(self) -> None:
        self.show_meter()
        self._screen.status.context = self._screen.session.context_fill

    def run_command(self, call: SlashInput, text: str) -> None:
        self._screen.slash.run(call, text)

    def command_refused(self, text: str, why: str) -> None:
        self._screen.slash.refuse(text, why)

    def run_changed(self, run: Run) -> None:
        screen = self._screen
        screen.refresh_bindings()
        if run.done and not screen.running:
            screen.kept_pane.keep_soon()
        if run.done and run.error is not None and run.kind in ("flow", "resume", "rewind"):
            # Their work reports what it expects; anything else must not pass unseen.
            screen.notify(f"The {run.kind} failed: {run.error}", severity="error")
        view = self._retry_view
        if view is not None and run.done and screen.failed_prompt is not None and not screen.running:
            # The retry key is enabled now (and the keymap may have moved it): name it.
            self._retry_view = None
            keys = [b.binding for b in screen.active_bindings.values() if b.binding.action == "retry_turn"]
            view.offer_retry(screen.app.get_key_display(keys[0]) if keys else "the retry key")

    def _on_tick(self) -> None:
        # While an answer streams, the elapsed times are drawn in its next frame (see
        # `with_next_flush`), and the prompt's cursor does not blink (`turn_started`).
        if not with_next_flush(self._screen.tick_panels):
            self._screen.tick_panels()

    def _offer_retry(self, prompt: str, view: TurnView) -> None:
        """Put a failed prompt back in the input (unless the user typed since) and offer a retry."""
        editor = self._screen.prompt
        if not editor.text.strip():
            editor.text = prompt
            editor.move_cursor(editor.document.end)
        self._retry_view = view  # told how to retry once the run is done

    def show_meter(self) -> None:
        screen = self._screen
        screen.status.usage = screen.session.meter.usage
        screen.status.cost = screen.session.meter.cost
        screen.status.cost_cap = screen.session.max_budget_usd

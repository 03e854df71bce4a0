"""The main screen's turns: sending a prompt, the queue behind a running turn, retry, cancel.

A prompt sent while a turn runs waits in a queue (shown at the foot of the conversation) and is
sent when the turn ends; cancelling (`escape`) puts the queue back in the prompt instead, and so
does a turn that fails, whose prompt can then be sent again (f6). Turns run in an exclusive
worker, so `escape` cancels exactly the running turn. ctrl+c stops a turn, else clears the
prompt, else quits on a second press.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on, work
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from tui_assist.ui.bridge import StopRequested, TextualObserver
from tui_assist.ui.screens.main_base import MainScreenBase
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import Notice

if TYPE_CHECKING:
    from tui_assist.ui.widgets.queued_prompt import QueuedPrompt

QUIT_PRESS_SECONDS = 3.0
"""How long after the first idle ctrl+c a second one quits."""


class TurnActions(MainScreenBase):
    """The running turn, the prompts queued behind it, retry after a failure, cancel and quit."""

    _queued: list[QueuedPrompt]
    """Prompts sent while a turn ran, oldest first: each is the next turn in its time."""
    _last_turn_failed: bool
    _retry_view: TurnView | None
    """The failed turn's view, told how to retry once the turn's worker is done."""
    _tick: Timer | None
    _quit_armed: bool

    # -- sending --------------------------------------------------------------------------------

    def send_prompt(self, text: str) -> None:
        """Send `text` to the model now, or as the next turn when one is running (or queued)."""
        if self.running or self._queued:
            from tui_assist.ui.widgets.queued_prompt import QueuedPrompt

            queued = QueuedPrompt(text)
            self._queued.append(queued)
            self.conversation.mount(queued)
            return
        self._turn_worker = self.run_turn(text)

    def _send_next_queued(self) -> None:
        if self._queued and not self.running:
            queued = self._queued.pop(0)
            queued.remove()
            self._turn_worker = self.run_turn(queued.text)

    def _unqueue(self) -> None:
        """Put the queued prompts back in the prompt, in order, for editing."""
        if not self._queued:
            return
        texts = [queued.text for queued in self._queued]
        for queued in self._queued:
            queued.remove()
        self._queued.clear()
        self.prompt.restore("\n".join(texts))

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        session = self.session
        self._last_turn_failed = True  # until the turn comes back in one piece
        self.failed_prompt = None
        view = self.conversation.begin_turn(prompt, session.strategy_name(prompt))
        status = self.status
        self.query_one(Prompt).add_class("-running")
        self._tick = self.set_interval(0.5, self._on_tick)
        try:
            if not session.ready:
                status.state = "loading"
                await session.wait_ready()
            if session.provider is None:
                problem = session.provider_problem or "no provider is configured"
                self.conversation.add_notice(
                    "**This prompt was not sent:** no provider is available. "
                    "See the note above on how to configure one.\n\n" + ("" if "\n" in problem else problem),
                    classes="-error",
                )
                view.mark_unsent()
                return
            status.state = "running"
            attachments = await session.attach(prompt)
            shown: set[str] = set()
            if attachments is not None:
                lines = attachments.notices()
                shown = set(lines)
                view.mount(Notice("\n".join(f"- `{line}`" for line in lines), classes="-attachments"))
            observer = TextualObserver(self, self.app)
            outcome = await session.run_turn(prompt, observer, attachments=attachments)
            result = outcome.result
            self._last_turn_failed = result.outcome == "error"
            if result.outcome == "cancelled":
                self.call_later(view.mark_cancelled)
            elif result.outcome == "error":
                # The turn's badge shows the error, once, where it happened.
                self._offer_retry(prompt, view)
            for warning in outcome.warnings:
                if warning not in shown:
                    self.conversation.add_notice(warning, classes="-warning")
        except asyncio.CancelledError:
            self.call_later(view.mark_cancelled)
            raise
        except Exception as exc:  # a bug must not take the conversation down with it
            self.call_later(view.mark_failed, f"{type(exc).__name__}: {exc}")
            self._offer_retry(prompt, view)
        finally:
            if self._tick is not None:
                self._tick.stop()
                self._tick = None
            self.query_one(Prompt).remove_class("-running")
            status.state = "idle"
            self._show_notes()
            self.call_later(self.refresh_bindings)

    def _on_tick(self) -> None:
        if self._tree is not None:
            self._tree.tick()
        self.flow.changed()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._turn_worker:
            return
        self.refresh_bindings()
        view, self._retry_view = self._retry_view, None
        if view is not None and self.failed_prompt is not None and not self.running:
            # The retry key is enabled now (and the keymap may have moved it): name it.
            keys = [b.binding for b in self.active_bindings.values() if b.binding.action == "retry_turn"]
            view.offer_retry(self.app.get_key_display(keys[0]) if keys else "the retry key")
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED) and self._queued:
            if self._last_turn_failed:
                # Follow-ups to a turn that failed are rarely still wanted as written.
                self._unqueue()
                self.prompt.show_error("The turn failed: your queued prompts are back here to send again.")
            else:
                self._send_next_queued()

    # -- retry, cancel, quit --------------------------------------------------------------------

    def _offer_retry(self, prompt: str, view: TurnView) -> None:
        """Put a failed prompt back in the input (unless the user typed since) and offer a retry."""
        self.failed_prompt = prompt
        if self._queued:  # what was queued after it is what the user typed since: it comes back
            self._unqueue()
            self.prompt.show_error("The turn failed: your queued prompts are back here to send again.")
        editor = self.query_one(Prompt)
        if not editor.text.strip():
            editor.text = prompt
            editor.move_cursor(editor.document.end)
        self._retry_view = view  # told how to retry once the turn's worker is done (see below)

    def action_retry_turn(self) -> None:
        prompt = self.failed_prompt
        if prompt is None or self.running:
            return
        editor = self.query_one(Prompt)
        if editor.text.strip() == prompt:
            editor.clear()
        self._turn_worker = self.run_turn(prompt)

    @on(StopRequested)
    def _stop_requested(self) -> None:
        """Escape in an approval dialog: the turn stops and is kept as interrupted."""
        self.action_cancel_turn()
        self.query_one(Prompt).focus()

    def action_cancel_turn(self) -> None:
        if self.running:
            # The queue goes back to the prompt first, so the turn's end doesn't send it.
            self._unqueue()
            # A turn under way is stopped by the session, which stores it as cancelled; a turn
            # still waiting for the session to load has nothing to store.
            if not self.session.interrupt():
                self.workers.cancel_group(self, "turn")
            self.notify("Turn cancelled.", timeout=2)
        self.prompt.focus()  # so the user can steer at once

    def interrupt_or_quit(self) -> None:
        """ctrl+c with nothing selected: stop the running turn, else clear the prompt, else quit
        (on a second press)."""
        if self.running:
            self.action_cancel_turn()
            return
        prompt = self.prompt
        if prompt.text.strip():
            prompt.clear()
            prompt.focus()
            return
        if self._quit_armed:
            self.app.exit()
            return
        self._quit_armed = True
        key = self.tui_app.interrupt_key
        self.notify(f"press {key} again to quit", timeout=QUIT_PRESS_SECONDS)
        self.set_timer(QUIT_PRESS_SECONDS, self._disarm_quit)

    def _disarm_quit(self) -> None:
        self._quit_armed = False

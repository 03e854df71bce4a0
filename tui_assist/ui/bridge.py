"""The one adapter between the core and Textual.

The core reports facts through `on_event` and asks for approvals through `approve`; this turns
the first into a `CoreEvent` message on the main screen ("attributes down, messages up") and
answers the second with the approval modal, awaited from the turn's worker.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from textual.message import Message
from textual.message_pump import MessagePump

from tui_assist.core.events import TextDelta, TurnEvent
from tui_assist.core.observer import ApprovalDecision, ToolApproval

if TYPE_CHECKING:
    from textual.app import App


class CoreEvent(Message):
    """One core event, delivered to the screen that runs the turn (and no further)."""

    bubble = False  # nothing above the screen handles it: a stream of deltas needn't climb

    def __init__(self, event: TurnEvent) -> None:
        super().__init__()
        self.event = event
        self.delivered = False
        """Set by `deliver()`; until then the observer may merge further text into this message."""
        self._more: list[str] = []

    def extend(self, text: str) -> None:
        """Merge the text of a later delta of the same node (only before delivery)."""
        self._more.append(text)

    def deliver(self) -> TurnEvent:
        """Mark the message received and return its event, merged text included."""
        self.delivered = True
        if self._more and isinstance(self.event, TextDelta):
            self.event = TextDelta(node_id=self.event.node_id, text=self.event.text + "".join(self._more))
            self._more = []
        return self.event


class TextualObserver:
    """A `TurnObserver` that posts events to a Textual target and asks approvals with a modal."""

    def __init__(self, target: MessagePump, app: App[object]) -> None:
        self._target = target
        self._app = app
        self._last_text: CoreEvent | None = None
        self._thread_id = threading.get_ident()
        """The app's thread: observers are made where the app runs."""

    def on_event(self, event: TurnEvent) -> None:
        message = CoreEvent(event)
        if threading.get_ident() == self._thread_id:
            # A fast stream sends thousands of deltas. While the previous delta of the same node
            # still waits in the queue, merge into it instead of queueing another message. (Only
            # on the app's own thread, where delivery can't interleave with this.)
            last = self._last_text
            if isinstance(event, TextDelta):
                if last is not None and not last.delivered and last.event.node_id == event.node_id:
                    last.extend(event.text)
                    return
                self._last_text = message
            else:
                self._last_text = None
        self._target.post_message(message)  # thread-safe

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        from tui_assist.ui.screens.approval import ApprovalScreen

        screen = ApprovalScreen(request)
        try:
            decision = await self._app.push_screen_wait(screen)
        except asyncio.CancelledError:
            # The turn was cancelled while the modal was open: don't leave it behind.
            if screen.is_attached and screen in self._app.screen_stack:
                screen.dismiss(ApprovalDecision.deny())
            raise
        if not isinstance(decision, ApprovalDecision):
            return ApprovalDecision.deny()
        return decision  # "deny and stop" is the controller's to obey

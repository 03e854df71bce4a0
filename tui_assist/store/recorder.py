"""`TurnRecorder`: the store's observer.

The store records a turn by being one more observer behind `FanOutObserver`. `on_event` must not
block, so it only buffers in memory; the buffered events are written with the turn, in the same
transaction, by `Store.commit_turn` (or `Store.mark_cancelled`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_assist.core.events import TurnEvent
from tui_assist.core.observer import ApprovalDecision, ToolApproval


class TurnRecorder:
    """Buffers one turn's events for the store. Never the primary observer."""

    def __init__(self) -> None:
        self._events: list[TurnEvent] = []

    @property
    def events(self) -> Sequence[TurnEvent]:
        """The events recorded so far, in order."""
        return tuple(self._events)

    def on_event(self, event: TurnEvent) -> None:
        """Buffer the event."""
        self._events.append(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Deny: a recorder decides nothing (`FanOutObserver` asks the primary observer)."""
        return ApprovalDecision.deny()

    def clear(self) -> None:
        """Forget the buffered events (to reuse the recorder for another turn)."""
        self._events.clear()
